"""A game under a charter in play: the position, whose decision it is, its legal actions, and
how each action moves it (the rulebook, exact; docs/charter-rulings.md for every reading).

Cards are per-game ids (0…n-1: every deck in seat order, in its listed order) that survive
every move; actions are small integers (:mod:`game.charter.actions`). The rules live beside
this module, one concern each: :mod:`.board` (zones, control, the type rules), :mod:`.payment`
(prices), :mod:`.effects` (the stack and what resolves), :mod:`.combat`, :mod:`.turns` (the
six phases and the priority round). This module holds the position and the OpenSpiel surface.

Seats are 0…n-1, clockwise: the player to the left of seat p is seat p+1 (mod n).
"""

from __future__ import annotations

from typing import Any

from game.charter.cards import CardDef, CardSet
from game.charter.charters import Grant
from game.charter.errors import IllegalActionError
from game.charter.tables import Tables

# Where a card is (Control and ownership: piles belong to owners).
DECK, HAND, BOARD, DISCARD, STACK = range(5)
# A board card's bond (Anchoring, Construction).
FREE, CONSTRUCTED, ANCHORED = range(3)
# The phases of a turn (Turn structure), after the mulligans of Game setup.
SETUP, RELEASE, DRAW, MAINTENANCE, ACTION, COMBAT, END = range(7)
PHASE_NAMES = ("setup", "release", "draw", "maintenance", "action", "combat", "end")
# Combat's steps: the three atomic actions and the windows between them (Combat).
NO_COMBAT, DECLARING, AFTER_ATTACKS, BLOCKING, AFTER_BLOCKS, DIVIDING, AFTER_DAMAGE = range(7)
STEP_NAMES = ("none", "declaring", "after-attacks", "blocking", "after-blocks", "dividing",
              "after-damage")  # fmt: skip
# Stack items: (kind, card, controller, ability ref or None, chosen card or -1).
CARD_ITEM, ABILITY_ITEM, RESERVE_ITEM = range(3)
# How an ability ref reaches its ability: printed, granted by an anchored card, a consequence.
PRINTED, GRANTED, CONSEQUENCE = range(3)
# Decisions inside the flow: (tag, player, ...).
P_MULLIGAN, P_PAY, P_UPKEEP, P_ATTACK, P_BLOCK, P_DIVIDE, P_SUPPORT, P_TARGET = range(8)
PENDING_NAMES = ("mulligan", "pay", "upkeep", "attack", "block", "divide", "support", "target")

#: ``current_player`` once the game is over.
TERMINAL = -2
HAND_SIZE = 7
MIN_HAND = 3
DEFAULT_MAX_TURNS = 200


class State:
    """One game: every card, every pile, the board, the stack, and whose decision it is."""

    __slots__ = (
        "_legal", "alive", "assigned", "attackers", "blocked", "blocks", "board", "bond", "boost",
        "card_set", "charter", "committed", "ctrl", "damage", "decks", "deferred", "defs",
        "dirty", "discards", "divisions", "first_turn", "free_ctrl", "grant", "hands", "host",
        "manifest_used", "max_turns", "n", "owner", "passes", "pending", "phase", "place",
        "pools", "priority", "resolving", "rng", "stack", "step", "steps", "tables", "triggers",
        "turn_player", "turns", "winner", "withheld",
    )  # fmt: skip

    # Fixed for the game (shared by clones).
    card_set: CardSet
    charter: str
    grant: Grant | None
    defs: tuple[CardDef, ...]  # card id -> its card
    owner: tuple[int, ...]  # card id -> the seat whose deck it came from
    n: int
    max_turns: int
    tables: Tables
    # The position.
    place: bytearray  # card id -> DECK … STACK
    decks: list[list[int]]  # per seat, top card last
    hands: list[list[int]]
    discards: list[list[int]]
    board: list[int]  # permanents, in the order they arrived
    host: list[int]  # card id -> host or location (-1: free)
    bond: bytearray  # card id -> FREE, CONSTRUCTED, ANCHORED
    free_ctrl: list[int]  # card id -> the seat whose free zone it stands in, when free
    ctrl: list[int]  # card id -> controller (board: its zone's; stack: who added it)
    committed: bytearray
    damage: list[int]
    boost: dict[int, tuple[int, int, int, int]]  # static changes in force, by card
    withheld: frozenset[int]  # cards whose release a static ability withholds
    pools: list[list[int]]  # per seat, per identity
    manifest_used: list[int]
    alive: list[bool]
    first_turn: list[bool]  # True until the seat's first turn ends
    turn_player: int
    turns: int  # turns begun
    phase: int
    step: int
    stack: list[tuple[int, int, int, tuple[int, int, int] | None, int]]
    priority: int
    passes: int
    resolving: bool  # every player passed: the stack resolves until it empties or grows
    pending: tuple[Any, ...] | None
    attackers: list[tuple[int, int, int]]  # (attacker, location or seat, 1 if a seat)
    blocks: list[tuple[int, int]]  # (blocker, attacker)
    blocked: list[int]  # attackers declared blocked: blocked they stay, blockers gone or not
    divisions: list[tuple[int, int, tuple[int, ...], int]]  # (chooser, source, receivers, pts)
    assigned: list[tuple[int, int]]  # (source, receiver): one point each
    triggers: list[tuple[int, int, tuple[int, int, int], int]]  # (card, ctrl, ref, target)
    deferred: list[tuple[int, int, tuple[int, int, int], int]]  # reserve effects waiting
    rng: int
    dirty: bool
    winner: int  # -1: none (yet, or the game ended without one)
    steps: int  # actions applied
    _legal: tuple[int, ...] | None

    # ----------------------------------------------------------------- the OpenSpiel surface

    @property
    def current_player(self) -> int:
        """The seat to decide now, or :data:`TERMINAL`."""
        if self.winner >= 0 or self.turns > self.max_turns or sum(self.alive) <= 1:
            return TERMINAL
        if self.pending is not None:
            return int(self.pending[1])
        return self.priority

    @property
    def is_over(self) -> bool:
        """Whether :attr:`current_player` is :data:`TERMINAL`."""
        return self.winner >= 0 or self.turns > self.max_turns or sum(self.alive) <= 1

    def returns(self) -> list[float]:
        """Per seat: 1 for the winner, -1 for each defeated seat, 0 for the rest (C-20)."""
        return [
            1.0 if p == self.winner else (-1.0 if not self.alive[p] else 0.0) for p in range(self.n)
        ]

    def legal_actions(self) -> tuple[int, ...]:
        """Every action open to :attr:`current_player`; empty only once the game is over."""
        legal = self._legal
        if legal is None:
            legal = self._legal = () if self.is_over else _turns.legal_actions(self)
        return legal

    def apply(self, action: int) -> None:
        """Take ``action``; one not in :meth:`legal_actions` is refused and nothing moves."""
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if action not in legal:
            from game.charter.notation import format_action

            reason = "the game is over" if self.is_over else "not among the legal actions"
            raise IllegalActionError(format_action(self, action), self.steps + 1, reason)
        self._legal = None
        self.steps += 1
        _turns.take(self, action, legal)

    def clone(self) -> State:
        """An independent copy: lists copied, the card set and tables shared."""
        s = State.__new__(State)
        s.card_set, s.charter, s.grant = self.card_set, self.charter, self.grant
        s.defs, s.owner, s.n, s.max_turns = self.defs, self.owner, self.n, self.max_turns
        s.tables = self.tables
        s.place = self.place[:]
        s.decks = [d[:] for d in self.decks]
        s.hands = [h[:] for h in self.hands]
        s.discards = [d[:] for d in self.discards]
        s.board = self.board[:]
        s.host = self.host[:]
        s.bond = self.bond[:]
        s.free_ctrl = self.free_ctrl[:]
        s.ctrl = self.ctrl[:]
        s.committed = self.committed[:]
        s.damage = self.damage[:]
        s.boost = self.boost  # replaced, never mutated
        s.withheld = self.withheld
        s.pools = [p[:] for p in self.pools]
        s.manifest_used = self.manifest_used[:]
        s.alive = self.alive[:]
        s.first_turn = self.first_turn[:]
        s.turn_player, s.turns, s.phase, s.step = (
            self.turn_player,
            self.turns,
            self.phase,
            self.step,
        )
        s.stack = self.stack[:]
        s.priority, s.passes, s.resolving = self.priority, self.passes, self.resolving
        s.pending = self.pending
        s.attackers = self.attackers[:]
        s.blocks = self.blocks[:]
        s.blocked = self.blocked[:]
        s.divisions = self.divisions[:]
        s.assigned = self.assigned[:]
        s.triggers = self.triggers[:]
        s.deferred = self.deferred[:]
        s.rng, s.dirty, s.winner, s.steps = self.rng, self.dirty, self.winner, self.steps
        s._legal = self._legal
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        from game.charter.positions import to_json

        return to_json(self) == to_json(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"<charter State turn={self.turns} seat={self.turn_player} "
            f"phase={PHASE_NAMES[self.phase]} step={STEP_NAMES[self.step]} "
            f"player={self.current_player} stack={len(self.stack)}>"
        )

    # ----------------------------------------------------------------- small queries

    def name(self, card: int) -> str:
        """A card as the notation writes it: its name, ``#``, its id (``Keep#3``)."""
        return f"{self.defs[card].name}#{card}"

    def left_of(self, seat: int) -> int:
        """The next living seat clockwise from ``seat`` (Resolution)."""
        n, alive = self.n, self.alive
        p = (seat + 1) % n
        while not alive[p]:
            p = (p + 1) % n
        return p

    def locations_of(self, seat: int) -> list[int]:
        """The locations ``seat`` controls."""
        defs, ctrl = self.defs, self.ctrl
        return [c for c in self.board if defs[c].type == 0 and ctrl[c] == seat]

    def exposed(self, seat: int) -> bool:
        """A player who controls no locations is exposed (Defense and defeat)."""
        defs, ctrl = self.defs, self.ctrl
        return not any(defs[c].type == 0 and ctrl[c] == seat for c in self.board)

    def next_random(self, bound: int) -> int:
        """A draw in ``range(bound)`` from the game's own seeded generator (SplitMix64)."""
        x = (self.rng + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        self.rng = x
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return (x ^ (x >> 31)) % bound

    def shuffle(self, cards: list[int]) -> None:
        for i in range(len(cards) - 1, 0, -1):
            j = self.next_random(i + 1)
            cards[i], cards[j] = cards[j], cards[i]


# The flow of play lives in :mod:`game.charter.turns`, which imports this module (so its
# functions are looked up when called, never while either module is still loading).
from game.charter import turns as _turns  # noqa: E402
