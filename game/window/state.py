"""A table of THE WINDOW in play: the position, its legal actions, and how each action moves it.

Books I–III and VI, exact. The representation is chosen for speed (the AI's search lives on
it): cards are per-table ids (0…n-1, in deal order) that survive every move, titles are catalog
indices (:mod:`game.window.titles`), actions are small integers (:mod:`game.window.actions`),
and the position is a handful of lists and a ``bytearray`` so that :meth:`State.clone` is a few
list copies. Scoring is in :mod:`game.window.scoring`, JSON in :mod:`game.window.positions`.

Seats are 0 (the first seat, I.5) and 1. Seats never move; chains do (Swap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from game.window import actions as A
from game.window import titles as T
from game.window.errors import IllegalActionError

if TYPE_CHECKING:
    from game.window.scoring import Verdict

# Where a card lies: ``HAND + seat``, ``CHAIN + seat``, ``SPOILS + seat``, the market, set aside
# (IV.3), or beside the axis as the hostage.
HAND = 0
CHAIN = 2
SPOILS = 4
MARKET = 6
ASIDE = 7
HOSTAGE = 8

#: ``current_player`` while the No-Go drill is to be supplied by the caller (IV.4, R-02).
CHANCE = -1
#: ``current_player`` once the table has closed.
TERMINAL = -2

SEAL_CLOSE = 12
STROKES = 30
RANSOMS_PER_GAME = 2

# Decisions pending inside an action (their tuples are immutable, so clones share them).
P_CUT: Final = 0  # (P_CUT, actor, source card, candidate yielding cards)
P_HOLD: Final = 1  # (P_HOLD, actor, named card)
P_DRILL: Final = 2  # (P_DRILL, actor, challenged card)
P_PLACE: Final = 3  # (P_PLACE, actor, seat of the chain, placed cards, remaining cards)

# Their shapes; the tag (first item) tells them apart, so ``p[0] == P_CUT`` narrows ``p``.
PendingCut: TypeAlias = tuple[Literal[0], int, int, tuple[int, ...]]
PendingHold: TypeAlias = tuple[Literal[1], int, int]
PendingDrill: TypeAlias = tuple[Literal[2], int, int]
PendingPlace: TypeAlias = tuple[Literal[3], int, int, tuple[int, ...], tuple[int, ...]]
PendingDecision: TypeAlias = PendingCut | PendingHold | PendingDrill | PendingPlace

#: :meth:`State.key`: every field of the position that can change in play.
PositionKey: TypeAlias = tuple[
    bytes,  # loc
    bytes,  # up
    tuple[int, ...],  # hands
    tuple[int, ...],
    tuple[int, ...],  # chains
    tuple[int, ...],
    tuple[int, ...],  # spoils
    tuple[int, ...],
    tuple[int, ...],  # market
    int,  # hoards
    int,
    int,  # plenum
    int,  # seal
    int,  # to_move
    int,  # turn
    int,  # hostage
    int,  # hostage_owner
    tuple[int, ...],  # ransoms
    tuple[int, ...],  # last_kind
    tuple[int, ...],  # exhausted
    PendingDecision | None,
    bool,  # closed
]

_DRILLS = (A.encode(A.DRILL, 1), A.encode(A.DRILL, 0))
_ACCELERATE = (A.ACCELERATE,)


class State:
    """One table: everything on it, open to all (I.5), and whose decision it is."""

    __slots__ = (
        "_legal",
        "aside",
        "chains",
        "closed",
        "costs",
        "exhausted",
        "hands",
        "hoards",
        "hostage",
        "hostage_owner",
        "last_kind",
        "loc",
        "market",
        "pending",
        "plenum",
        "ransoms",
        "seal",
        "spoils",
        "table_kind",
        "titles",
        "to_move",
        "turn",
        "up",
        "where",
    )

    titles: tuple[int, ...]  # card id -> title index
    costs: tuple[int, ...]  # card id -> printed cost
    where: tuple[int, ...]  # title index -> card id, or -1 when the title is not at this table
    table_kind: str  # "base", "market", "portfolio" (IV.3) or "deal" (any other explicit deal)
    aside: tuple[int, ...]  # set aside, out of the table's reach (IV.3)
    loc: bytearray  # card id -> where it lies (HAND…HOSTAGE)
    up: bytearray  # card id -> 1 face up (in force) / 0; meaningful in chains only
    hands: list[list[int]]
    chains: list[list[int]]  # per seat, innermost (against the axis) first
    spoils: list[list[int]]
    market: list[int]
    hoards: list[int]
    plenum: int
    seal: int
    to_move: int  # the seat whose turn it is
    turn: int  # turns completed so far (a turn is one seat's one action)
    hostage: int  # card id, or -1
    hostage_owner: int  # the seat whose chain the hostage left, or -1
    ransoms: list[int]  # ransoms paid per seat (two per game)
    last_kind: list[int]  # the kind of each seat's previous turn, or -1
    exhausted: list[int]  # 1: this seat's next turn may not repeat its previous kind
    pending: PendingDecision | None
    closed: bool
    _legal: tuple[int, ...] | None

    # ----------------------------------------------------------------- the OpenSpiel surface

    @property
    def current_player(self) -> int:
        """The seat to decide now; :data:`CHANCE` for the drill; :data:`TERMINAL` when closed."""
        if self.closed:
            return TERMINAL
        p = self.pending
        if p is None:
            return self.to_move
        tag = p[0]
        if tag == P_DRILL:
            return CHANCE
        if tag == P_PLACE:
            return p[1]
        return 1 - p[1]  # a defender answers a Cut or a Hold

    @property
    def is_over(self) -> bool:
        return self.closed

    @property
    def round(self) -> int:
        """The round in progress (1-based; the last round once closed): two turns a round (I.1)."""
        return (self.turn - 1) // 2 + 1 if self.closed else self.turn // 2 + 1

    def legal_actions(self) -> tuple[int, ...]:
        """Every action open to :attr:`current_player`; never empty before the close (I.6)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def apply(self, action: int) -> None:
        """Take ``action``; an action not in :meth:`legal_actions` is refused, nothing moves."""
        if action not in self.legal_actions():
            # Imported on the refusal path only: both modules import this one.
            from game.window.notation import format_action
            from game.window.refusals import why_illegal

            raise IllegalActionError(
                format_action(self, action), self.turn + 1, why_illegal(self, action)
            )
        self._apply(action)

    def clone(self) -> State:
        """An independent copy: the lists are copied, the immutable parts shared."""
        s = State.__new__(State)
        s.titles = self.titles
        s.costs = self.costs
        s.where = self.where
        s.table_kind = self.table_kind
        s.aside = self.aside
        s.loc = self.loc[:]
        s.up = self.up[:]
        h, c, sp = self.hands, self.chains, self.spoils
        s.hands = [h[0][:], h[1][:]]
        s.chains = [c[0][:], c[1][:]]
        s.spoils = [sp[0][:], sp[1][:]]
        s.market = self.market[:]
        s.hoards = self.hoards[:]
        s.plenum = self.plenum
        s.seal = self.seal
        s.to_move = self.to_move
        s.turn = self.turn
        s.hostage = self.hostage
        s.hostage_owner = self.hostage_owner
        s.ransoms = self.ransoms[:]
        s.last_kind = self.last_kind[:]
        s.exhausted = self.exhausted[:]
        s.pending = self.pending
        s.closed = self.closed
        s._legal = self._legal
        return s

    def key(self) -> PositionKey:
        """A hashable summary of the whole position (for transposition tables)."""
        return (
            bytes(self.loc),
            bytes(self.up),
            tuple(self.hands[0]),
            tuple(self.hands[1]),
            tuple(self.chains[0]),
            tuple(self.chains[1]),
            tuple(self.spoils[0]),
            tuple(self.spoils[1]),
            tuple(self.market),
            self.hoards[0],
            self.hoards[1],
            self.plenum,
            self.seal,
            self.to_move,
            self.turn,
            self.hostage,
            self.hostage_owner,
            tuple(self.ransoms),
            tuple(self.last_kind),
            tuple(self.exhausted),
            self.pending,
            self.closed,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self.titles == other.titles
            and self.table_kind == other.table_kind
            and self.aside == other.aside
            and self.key() == other.key()
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: hash key() instead

    def __repr__(self) -> str:
        def row(cards: list[int]) -> str:
            return " ".join(("" if self.up[c] else "~") + self.title_of(c) for c in cards) or "-"

        return (
            f"<State {self.table_kind} seal={self.seal} turn={self.turn} "
            f"player={self.current_player} plenum={self.plenum} hoards={self.hoards} "
            f"chains=[{row(self.chains[0])} | {row(self.chains[1])}]>"
        )

    def columns(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(Substance, Form, Holdings) per seat, reckoned as if the table closed now (I.9)."""
        from game.window.scoring import reckon

        return reckon(self).columns

    def verdict(self, seat: int) -> Verdict:
        """WIN, LOSS or BALANCE for ``seat`` once the table has closed (I.9, I.10)."""
        from game.window.scoring import reckon

        if not self.closed:
            raise ValueError("the table has not closed: no verdict yet (I.1 Settling)")
        return reckon(self).verdicts[seat]

    # ----------------------------------------------------------------- small queries

    def title_of(self, card: int) -> str:
        return T.NAMES[self.titles[card]]

    def card_of(self, title: str) -> int:
        """The card id of ``title`` at this table (one copy per title), or -1."""
        index = T.INDEX.get(title)
        return -1 if index is None else self.where[index]

    def in_force(self, title: int, seat: int) -> bool:
        """Whether ``title`` stands face up in ``seat``'s chain."""
        c = self.where[title]
        return c >= 0 and self.loc[c] == CHAIN + seat and self.up[c] == 1

    def in_force_anywhere(self, title: int) -> int:
        """The seat in whose chain ``title`` stands face up, or -1."""
        c = self.where[title]
        if c < 0 or not self.up[c]:
            return -1
        where = self.loc[c]
        return where - CHAIN if where == CHAIN or where == CHAIN + 1 else -1

    def escrow_controller(self) -> int:
        """The seat whose chain holds Escrow in force, or -1 (I.7 RANSOM)."""
        return self.in_force_anywhere(T.ESCROW)

    def shielded(self, seat: int, index: int) -> bool:
        """Whether the card at ``index`` of ``seat``'s chain is a neighbour of a face-up Keeping."""
        k = self.where[T.KEEPING]
        if k < 0 or self.loc[k] != CHAIN + seat or not self.up[k]:
            return False
        return abs(self.chains[seat].index(k) - index) == 1

    def cut_candidates(self, seam: int) -> tuple[int, ...]:
        """The cards that may yield when the mover names ``seam`` in the opponent's chain.

        The smaller piece yields its outermost card; equal pieces give the defender the choice
        of the inner piece's or the outer piece's outermost card; a card Keeping shields is no
        candidate (I.7 CUT, Book II KEEPING, Q-06). Empty: the seam cannot be named.
        """
        opp = 1 - self.to_move
        chain = self.chains[opp]
        length = len(chain)
        if not 1 <= seam < length:
            return ()
        outer = length - seam
        picks: tuple[int, ...]
        if seam < outer:
            picks = (seam - 1,)
        elif seam > outer:
            picks = (length - 1,)
        else:
            picks = (seam - 1, length - 1)
        return tuple(chain[i] for i in picks if not self.shielded(opp, i))

    def power_sources(self, title: int, seat: int) -> list[int]:
        """The cards of ``seat`` that may use ``title``'s action power: the card, and Models.

        The card itself while face up. A Model copies the card next to it (Model-A the inner,
        Model-B the outer neighbour) whatever that card's face, while the Model itself stands
        face up: the copier's own face governs (R-08, Q-02). One hop, and a Model copies only
        the seven core powers (R-08), so two Models never copy each other.
        """
        c = self.where[title]
        loc, up = self.loc, self.up
        if c < 0 or loc[c] != CHAIN + seat:
            return []
        sources = [c] if up[c] else []
        chain = self.chains[seat]
        i = chain.index(c)
        titles = self.titles
        if i + 1 < len(chain):
            m = chain[i + 1]
            if titles[m] == T.MODEL_A and up[m]:
                sources.append(m)
        if i > 0:
            m = chain[i - 1]
            if titles[m] == T.MODEL_B and up[m]:
                sources.append(m)
        return sources

    def copied_powers(self, seat: int) -> set[int]:
        """The core powers ``seat``'s face-up Models copy from their neighbours (R-08, Q-02)."""
        chain, up, titles = self.chains[seat], self.up, self.titles
        copied = set()
        last = len(chain) - 1
        for i, c in enumerate(chain):
            if not up[c]:
                continue
            t = titles[c]
            if t == T.MODEL_A and i > 0:
                copied.add(titles[chain[i - 1]])
            elif t == T.MODEL_B and i < last:
                copied.add(titles[chain[i + 1]])
        return copied & T.MODEL_COPYABLE

    def collect_count(self, seat: int) -> int:
        """N for ``seat``'s Collect: the axis, plus chained cards as Omegafam and Selection say."""
        opp = 1 - seat
        up = self.up
        mine, theirs = self.chains[seat], self.chains[opp]
        mine_up = sum(up[c] for c in mine)
        theirs_up = sum(up[c] for c in theirs)
        n = 1
        if self.in_force(T.OMEGAFAM, seat):
            n += len(mine) + (len(theirs) - theirs_up)
        else:
            n += mine_up
        if not self.in_force(T.SELECTION, opp):
            n += theirs_up
        return n

    # ----------------------------------------------------------------- legal actions

    def _compute_legal(self) -> tuple[int, ...]:
        if self.closed:
            return ()
        p = self.pending
        if p is None:
            return self._turn_actions(self.to_move)
        if p[0] == P_DRILL:
            return _DRILLS
        if p[0] == P_PLACE:
            return tuple(A.PLACE | c << 5 for c in p[4])
        return self._response_options(p)

    def _response_options(self, p: PendingCut | PendingHold) -> tuple[int, ...]:
        defender = 1 - p[1]
        if p[0] == P_CUT:
            candidates = p[3]
            options = [A.YIELD | c << 5 for c in candidates]
            fork = self.where[T.FORK]
            if (
                fork >= 0
                and fork not in candidates
                and self.in_force(T.FORK, defender)
                and not self.shielded(defender, self.chains[defender].index(fork))
            ):
                options.append(A.YIELD | fork << 5)
        else:
            options = [A.YIELD | p[2] << 5]
        if self.in_force(T.REFUSAL, defender):
            options.append(A.REFUSE)
        return tuple(options)

    def _turn_actions(self, me: int) -> tuple[int, ...]:
        opp = 1 - me
        up, titles = self.up, self.titles
        chain, ochain = self.chains[me], self.chains[opp]
        force = {titles[c] for c in chain if up[c]}
        # The seven core powers: a card's own in force, and those its face-up Models copy.
        powers = force | self.copied_powers(me) if not force.isdisjoint(_MODELS) else force
        acts: list[int] = []
        append = acts.append

        inner = T.ALPHABET in force
        for source in (self.hands[me], self.market):
            for c in source:
                append(c << 5)
                if inner:
                    append(c << 5 | 1 << 11)

        if T.PAIRING in powers and self.plenum >= self.collect_count(me):
            append(A.COLLECT)

        if T.SEPARATION in powers and len(ochain) >= 2:
            seams = [s for s in range(1, len(ochain)) if self.cut_candidates(s)]
            if seams:
                for src in self.power_sources(T.SEPARATION, me):
                    for s in seams:
                        append(A.CUT | s << 5 | src << 11)

        if T.REFLECTION in powers and self.in_force_anywhere(T.FAITHFUL) < 0:
            for src in self.power_sources(T.REFLECTION, me):
                append(A.SWAP | src << 11)

        if T.ESCROW in powers and self.hostage < 0:
            for i in range(1, len(ochain)):
                c = ochain[i]
                if up[c] and not self.shielded(opp, i):
                    append(A.HOLD | c << 5)

        h = self.hostage
        if (
            h >= 0
            and self.hostage_owner == me
            and self.ransoms[me] < RANSOMS_PER_GAME
            and self.hoards[me] >= self.costs[h]
        ):
            append(A.RANSOM)
            if T.INTERFACE in force:
                append(A.RANSOM | 1 << 5)

        if T.EXCHANGE in powers:
            hoard = self.hoards[me]
            if hoard >= 3 and self.plenum + 3 >= 7:
                append(A.CONVERT)
            if hoard >= 7:
                append(A.CONVERT | 1 << 5)

        if T.TURN in powers:
            for src in self.power_sources(T.TURN, me):
                append(A.TURN | me << 5 | src << 11)
                append(A.TURN | opp << 5 | src << 11)

        if T.NOGO in powers:
            targets = [c for c in ochain if up[c]]
            if targets:
                for src in self.power_sources(T.NOGO, me):
                    for c in targets:
                        append(A.NOGO | c << 5 | src << 11)

        if not force.isdisjoint(_SPELL_TITLES):
            self._spell_actions(me, force, append)

        if self.last_kind[me] != A.ACCELERATE and not self.in_force(T.STAGE, opp):
            append(A.ACCELERATE)

        if self.exhausted[me]:
            banned = self.last_kind[me]
            acts = [a for a in acts if a & 31 != banned]
        if not acts:
            return _ACCELERATE  # the law of the turn (I.6, R-01, R-09)
        return tuple(acts)

    def _spell_actions(self, me: int, force: set[int], append: Callable[[int], None]) -> None:
        """The Archive's spend-it powers used as actions (Book III)."""
        up = self.up
        chain = self.chains[me]
        if T.TRACE in force:
            for c in chain:
                if not up[c]:
                    append(A.TRACE | c << 5)
        if T.EULERFUSE in force:
            for c in self.spoils[me]:
                append(A.EULERFUSE | c << 5)
        if T.ADMISSION in force:
            for c in self.market:
                append(A.ADMISSION | c << 5)
        if T.CONSTRUCTOR in force:
            pool = self.hands[me] + self.market
            for x in pool:
                for y in pool:
                    if x != y:
                        append(A.CONSTRUCT | x << 5 | y << 11)
        if T.TRANSPORT in force:
            for c in chain:
                append(A.TRANSPORT | c << 5)
                append(A.TRANSPORT | c << 5 | 1 << 11)
        if T.EXHAUSTION in force:
            append(A.EXHAUST)

    # ----------------------------------------------------------------- applying actions

    def _apply(self, action: int) -> None:
        self._legal = None
        kind = action & 31
        a = action >> 5 & 63
        b = action >> 11 & 63
        p = self.pending
        if p is not None:
            self._resolve(p, kind, a)
            return
        me = self.to_move
        opp = 1 - me
        up = self.up
        if kind == A.BUILD:
            self._build(me, a, b == 1)
        elif kind == A.COLLECT:
            n = self.collect_count(me)
            self.plenum -= n
            self.hoards[me] += n
        elif kind == A.CUT:
            candidates = self.cut_candidates(a)
            cut: PendingCut = (P_CUT, me, b, candidates)
            options = self._response_options(cut)
            if len(options) > 1:
                self.pending = cut
                return
            self._resolve(cut, A.YIELD, options[0] >> 5 & 63)
            return
        elif kind == A.SWAP:
            self._swap(b)
        elif kind == A.HOLD:
            hold: PendingHold = (P_HOLD, me, a)
            if self.in_force(T.REFUSAL, opp):
                self.pending = hold
                return
            self._resolve(hold, A.YIELD, a)
            return
        elif kind == A.RANSOM:
            self._ransom(me, a == 1)
        elif kind == A.CONVERT:
            give, take = (3, 7) if a == 0 else (7, 3)
            self.hoards[me] += take - give
            self.plenum += give - take
        elif kind == A.ACCELERATE:
            self._step_seal()
        elif kind == A.TURN:
            up[b] = 0
            target = self.chains[a]
            if len(target) > 1:
                self.pending = (P_PLACE, me, a, (), tuple(target))
                return
        elif kind == A.NOGO:
            up[b] = 0
            self.pending = (P_DRILL, me, a)
            return
        else:
            self._spell(me, kind, a, b)
        self._end_turn(me, kind)

    def _spell(self, me: int, kind: int, a: int, b: int) -> None:
        where, up, loc = self.where, self.up, self.loc
        if kind == A.TRACE:
            up[where[T.TRACE]] = 0
            up[a] = 1
        elif kind == A.EULERFUSE:
            up[where[T.EULERFUSE]] = 0
            self.spoils[me].remove(a)
            self.chains[me].append(a)
            loc[a] = CHAIN + me
            up[a] = 0
        elif kind == A.ADMISSION:
            up[where[T.ADMISSION]] = 0
            self.market.remove(a)
            self.hands[me].append(a)
            loc[a] = HAND + me
        elif kind == A.CONSTRUCT:
            up[where[T.CONSTRUCTOR]] = 0
            self._build(me, a, False)
            self._build(me, b, False)
        elif kind == A.TRANSPORT:
            up[where[T.TRANSPORT]] = 0
            chain = self.chains[me]
            chain.remove(a)
            if b == 1:
                chain.insert(0, a)
            else:
                chain.append(a)
        elif kind == A.EXHAUST:
            up[where[T.EXHAUSTION]] = 0
            self.exhausted[1 - me] = 1
        else:  # pragma: no cover - legal_actions never offers another kind
            raise AssertionError(f"unknown action kind {kind}")

    def _resolve(self, p: PendingDecision, kind: int, a: int) -> None:
        tag, actor = p[0], p[1]
        defender = 1 - actor
        if p[0] == P_PLACE:
            placed = (*p[3], a)
            remaining = tuple(c for c in p[4] if c != a)
            if len(remaining) > 1:
                self.pending = (P_PLACE, actor, p[2], placed, remaining)
                return
            self.chains[p[2]] = [*placed, *remaining]
            self.pending = None
            self._end_turn(actor, A.TURN)
            return
        self.pending = None
        if tag == P_DRILL:
            target = p[2]
            if kind == A.DRILL and a == 1 and not self._canonical_guards(defender, target):
                self.up[target] = 0
                self._release_if_escrow_gone()
            self._end_turn(actor, A.NOGO)
            return
        turn_kind = A.CUT if tag == P_CUT else A.HOLD
        if kind == A.REFUSE:
            self.up[self.where[T.REFUSAL]] = 0  # only the turn is consumed
            self._end_turn(actor, turn_kind)
            return
        chain = self.chains[defender]
        chain.remove(a)
        if tag == P_CUT:
            self.up[p[2]] = 0  # the Cut spends its Separation (or the Model that copied it)
            self.spoils[actor].append(a)
            self.loc[a] = SPOILS + actor
        else:
            self.hostage = a
            self.hostage_owner = defender
            self.loc[a] = HOSTAGE
        self.up[a] = 0
        self._release_if_escrow_gone()
        self._end_turn(actor, turn_kind)

    def _canonical_guards(self, seat: int, card: int) -> bool:
        """Canonical in force keeps every other card of its chain from being turned down."""
        return self.in_force(T.CANONICAL, seat) and self.titles[card] != T.CANONICAL

    def _build(self, me: int, c: int, inner: bool) -> None:
        loc = self.loc
        source = loc[c]
        if source == MARKET:
            self.market.remove(c)
        else:
            self.hands[source].remove(c)
        if inner:
            self.chains[me].insert(0, c)
        else:
            self.chains[me].append(c)
        loc[c] = CHAIN + me
        self.up[c] = 1
        title = self.titles[c]
        if title == T.SPEND_COVERING:
            n = min(5, self.plenum)
            self.plenum -= n
            self.hoards[me] += n
        elif title == T.PLENUM:
            self.plenum += self.hoards[0] + self.hoards[1]
            self.hoards[0] = self.hoards[1] = 0

    def _swap(self, source: int) -> None:
        """I.7 SWAP: the chains change owners, then every Reflection on the table folds and so
        does the mirror used, a Model that copied the Swap included, now in the other seat's
        chain (Q-02); then the hostage check (R-04)."""
        c0, c1 = self.chains
        self.chains = [c1, c0]
        loc, up = self.loc, self.up
        for c in c1:
            loc[c] = CHAIN
        for c in c0:
            loc[c] = CHAIN + 1
        r = self.where[T.REFLECTION]
        if r >= 0 and (loc[r] == CHAIN or loc[r] == CHAIN + 1):
            up[r] = 0
        up[source] = 0  # the mirror is spent by its own use: Reflection, or the Model
        self._release_if_escrow_gone()

    def _ransom(self, me: int, to_plenum: bool) -> None:
        h = self.hostage
        price = self.costs[h]
        self.hoards[me] -= price
        if to_plenum:
            self.plenum += price
        else:
            self.hoards[self.escrow_controller()] += price
        self.hands[me].append(h)
        self.loc[h] = HAND + me
        self.hostage = self.hostage_owner = -1
        self.ransoms[me] += 1

    def _release_if_escrow_gone(self) -> None:
        """The hostage goes home free once Escrow leaves its holder's force (I.7, R-04)."""
        h = self.hostage
        if h < 0:
            return
        owner = self.hostage_owner
        controller = self.escrow_controller()
        if controller < 0 or controller == owner:
            self.hands[owner].append(h)
            self.loc[h] = HAND + owner
            self.hostage = self.hostage_owner = -1

    def _step_seal(self) -> None:
        """One step of the Seal; Zenoseal bends the twelfth (R-13); twelve closes (R-07)."""
        if self.seal == SEAL_CLOSE - 1:
            if self.in_force_anywhere(T.ZENOSEAL) >= 0:
                self.up[self.where[T.ZENOSEAL]] = 0
                return
            self.seal = SEAL_CLOSE
            self.closed = True
            return
        self.seal += 1

    def _end_turn(self, me: int, kind: int) -> None:
        self.last_kind[me] = kind
        self.exhausted[me] = 0
        self.turn += 1
        if self.closed:
            return  # the twelfth step is atomic: nothing follows
        if me == 1:
            # Round end: Generator's trickle, then the Seal's own step.
            g = self.in_force_anywhere(T.GENERATOR)
            if g >= 0 and self.plenum > self.hoards[0] + self.hoards[1]:
                self.plenum -= 1
                self.hoards[g] += 1
            self._step_seal()
        self.to_move = 1 - me


_MODELS = frozenset({T.MODEL_A, T.MODEL_B})
_SPELL_TITLES = frozenset(
    {T.TRACE, T.EULERFUSE, T.ADMISSION, T.CONSTRUCTOR, T.TRANSPORT, T.EXHAUSTION}
)
