"""A witnessed table: one table at the league, played by a person against the venue's AI or by two
people (a duel), as the tables service plays it and as an auditor replays it (docs/formats.md,
"Witnessed tables", "Duels").

The table's seed (``ledger.tables.deal_seed``) convenes it exactly as an offline table of that
seed at that venue (``game.window.campaign.convene``) and seats the same AI
(``game.window.ai.roster.opponent_for``), so the opponent's every decision is the one the
offline table would make: the same search, the same budget, the same die, asked in the same
order. The player sits first (I.5), as at ``cz play``. A duel (``duel-base``, ``duel-market``)
convenes the base or market table of its seed with no AI: both seats are people, the opener
first (docs/rulings.md L-30), and each move is the one of the seat the engine says decides.

A human's own No-Go drill (IV.4) is judged here from its pattern, drawn from the table's seed
(nobody knows it before the drill starts: the seed is secret until the close), the answer, and
the seconds the service's clock counted between the event that started the drill and the
answer's arrival (:func:`drill_elapsed`).

Pure: the service and the auditor call the same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from game.window import actions as A
from game.window.ai.player import AIPlayer
from game.window.ai.roster import opponent_for
from game.window.campaign import ROMAN, Venue, chair, clerk, convene, registrar
from game.window.drill import DrillOutcome, Pattern, generate_pattern, judge, parse_pattern
from game.window.economy.prints import Finish, Print
from game.window.errors import IllegalActionError, NotationError
from game.window.notation import format_action, parse_action
from game.window.scoring import reckon
from game.window.state import CHANCE, State
from game.window.tables import Holding, Table, convene_portfolio
from ledger.catalog import ARCHIVE_SETS, CardSet
from ledger.certificates import PrintCertificate
from ledger.errors import LedgerError, SchemaError
from ledger.portfolios import PORTFOLIO_DUEL
from ledger.tables import (
    DuelSeats,
    MovePlayed,
    TableDealt,
    TableJoined,
    TableOpened,
    deal_seed,
    duel_seed,
    is_duel,
    seed_bytes,
)

PLAYER = 0
OPPONENT = 1
#: The base and market venues whose tables a duel convenes (no AI sits at them).
#: (A portfolio duel's stands for its kind of table only: its deal is the two portfolios'.)
DUEL_CONVENES = {
    "duel-base": clerk(1),
    "duel-market": Venue("assessor"),
    PORTFOLIO_DUEL: Venue("assessor"),
}


def drill_elapsed(started: datetime, arrived: datetime) -> float:
    """Seconds a drill's answer took: from the event that started the drill to the answer's
    arrival at the service (none if it arrived before: a guess, judged at once)."""
    return max(0.0, (arrived - started).total_seconds())


def arrival(move: MovePlayed, recorded_at: datetime) -> datetime:
    """When ``move``'s request reached the service: its recorded ``arrived`` (older moves have
    none: their event's time)."""
    if move.arrived is None:
        return recorded_at
    return datetime.fromtimestamp(move.arrived / 1000, UTC)


class WitnessMismatch(LedgerError):
    """A recorded move that is not what the table plays: another reply, another outcome."""


def venue_of(name: str) -> Venue:
    """The venue a table-open request names: ``clerk-1``…``clerk-4``, ``assessor``,
    ``registrar-lettered``…``registrar-sealed``, ``chair-I``…``chair-XII``."""
    kind, _, number = name.partition("-")
    if kind == "clerk" and number.isdigit():
        return clerk(int(number))
    if kind == "assessor" and not number:
        return Venue("assessor")
    if kind == "registrar" and number in {s.value for s in ARCHIVE_SETS}:
        return registrar(CardSet(number))
    if kind == "chair" and number in ROMAN[1:]:
        return chair(ROMAN.index(number))
    raise SchemaError(f"no witnessed table sits at {name!r}")


@dataclass
class WitnessedTable:
    """One table in play: the state, the AI across it, and what has been taken (in notation)."""

    venue: Venue
    seed: int
    table: Table
    state: State
    #: The AI across the player (None at a duel: both seats are people).
    ai: AIPlayer | None
    actions: list[str] = field(default_factory=list)
    #: The humans' drills started so far (the n-th one's pattern is drawn from n).
    drills: int = 0

    @classmethod
    def convene(
        cls,
        venue_name: str,
        seed: int,
        portfolio: Sequence[PrintCertificate] = (),
        second: Sequence[PrintCertificate] = (),
    ) -> WitnessedTable:
        """The table of ``seed`` at ``venue_name``, before its first move; at a Registrar's,
        convened from the player's ``portfolio`` (IV.3) as an offline table of that seed with
        those prints is (``game.window.registrars``); at a duel, with no AI; at a portfolio
        duel, from the opener's ``portfolio`` and the joiner's ``second`` (IV.3, M-10)."""
        if venue_name == PORTFOLIO_DUEL:
            table = convene_portfolio(holdings(portfolio), holdings(second), seed)
            return cls(DUEL_CONVENES[venue_name], seed, table, table.new_state(), None)
        if is_duel(venue_name):
            venue = DUEL_CONVENES[venue_name]
            table = convene(venue, seed)
            return cls(venue, seed, table, table.new_state(), None)
        venue = venue_of(venue_name)
        table = convene(venue, seed, holdings(portfolio))
        return cls(venue, seed, table, table.new_state(), opponent_for(venue, seed))

    @classmethod
    def opened(
        cls, opened: TableOpened, seed: int, joined: TableJoined | None = None
    ) -> WitnessedTable:
        """The table ``opened`` (and a duel's ``joined``) opens, dealt from ``seed``: its
        venue, and the portfolios its requests brought."""
        second = joined.request.portfolio if joined is not None else None
        return cls.convene(opened.request.venue, seed, opened.request.portfolio or (), second or ())

    def human(self, seat: int) -> bool:
        """Whether a person sits at ``seat`` (the player's; both at a duel)."""
        return seat == PLAYER or self.ai is None

    @property
    def decider(self) -> int | None:
        """The seat whose request the table waits for: the seat that decides, or whose
        drill is pending; None once closed."""
        state = self.state
        if state.is_over:
            return None
        if self.drilling:
            pending = state.pending
            assert pending is not None
            return int(pending[1])
        return state.current_player

    @property
    def ply(self) -> int:
        """Actions taken so far (the next move's ply)."""
        return len(self.actions)

    @property
    def closed(self) -> bool:
        return self.state.is_over

    @property
    def drilling(self) -> bool:
        """Whether a human's No-Go drill is pending: the next move answers it."""
        state = self.state
        return state.current_player == CHANCE and (
            state.pending is not None and self.human(state.pending[1])
        )

    def pattern(self) -> Pattern:
        """The pattern of the pending human drill."""
        if not self.drilling:
            raise SchemaError("no drill of a player's is pending")
        return generate_pattern(f"witnessed:{self.seed}:{self.drills + 1}")

    def play(self, text: str, elapsed: float | None = None) -> list[str]:
        """The deciding human's move ``text`` (at a pending drill: the answer, ``elapsed``
        seconds after it started), then the AI's replies until a human decides again or the
        table closes: every action taken, in notation. An illegal move (or a move when the
        table waits for nobody) raises :class:`IllegalActionError` and changes nothing."""
        state = self.state
        if state.is_over:
            raise IllegalActionError(text, state.turn + 1, "the table has closed")
        if self.drilling:
            answer = parse_pattern(text)
            outcome = judge(self.pattern(), answer, elapsed if elapsed is not None else 0.0)
            self.drills += 1
            action = A.encode(A.DRILL, 1 if outcome is DrillOutcome.SUCCESS else 0)
        else:
            if not self.human(state.current_player):
                raise IllegalActionError(text, state.turn + 1, "it is not the player's decision")
            try:
                action = parse_action(state, text)
            except NotationError as exc:
                raise IllegalActionError(text, state.turn + 1, exc.diagnostics()) from None
        taken = [self._take(action)]
        taken += self.replies()
        return taken

    def replies(self) -> list[str]:
        """The AI's actions (and its drills) until a human decides or the close."""
        taken: list[str] = []
        state = self.state
        ai = self.ai
        while not state.is_over:
            seat = state.current_player
            if ai is None or self.drilling or (seat != CHANCE and self.human(seat)):
                break
            if seat == CHANCE:
                success = ai.answer_drill() is DrillOutcome.SUCCESS
                action = A.encode(A.DRILL, 1 if success else 0)
            else:
                action = ai.decide(state)
            taken.append(self._take(action))
        return taken

    def follow(self, text: str) -> None:
        """Take the recorded action ``text`` as it stands, without asking the AI (a pending
        human drill's answer counted): for showing a table, never for playing on."""
        if self.drilling:
            self.drills += 1
        self._take(parse_action(self.state, text))

    def _take(self, action: int) -> str:
        text = format_action(self.state, action)
        self.state.apply(action)
        self.actions.append(text)
        return text

    def verdict(self) -> str:
        """The player's verdict at the close: ``win``, ``loss`` or ``balance``."""
        return reckon(self.state).verdicts[PLAYER].value

    def columns(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """Both seats' columns (Substance, Form, Holdings), the player's first."""
        return reckon(self.state).columns

    def deal(self) -> tuple[str, tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]:
        """The table's kind, the two hands and the market, as convened."""
        return self.table.kind, self.table.hands, self.table.market


def holdings(portfolio: Sequence[PrintCertificate]) -> tuple[Holding, ...]:
    """The player's portfolio as the engine deals it: each title carried by its stamped print,
    whose finish travels with it (IV.3)."""
    return tuple(
        Holding(c.title, Print(c.title, Finish(c.finish), stamped=True, serial=c.serial))
        for c in portfolio
    )


def check_move(
    table: WitnessedTable, request: str, recorded: Sequence[str], elapsed: float | None
) -> None:
    """Play the player's ``request`` at ``table`` and check that every action ``recorded``
    is what it took (the auditor's replay of one ``move-played`` event)."""
    taken = table.play(request, elapsed)
    if list(recorded) != taken:
        first = next(
            (i for i, (a, b) in enumerate(zip(recorded, taken, strict=False)) if a != b),
            min(len(recorded), len(taken)),
        )
        got = recorded[first] if first < len(recorded) else "nothing"
        want = taken[first] if first < len(taken) else "nothing"
        raise WitnessMismatch(
            f"at ply {table.ply - len(taken) + first} the log records {got!r}; the table "
            f"plays {want!r}"
        )


def seat_keys(opened: TableOpened, duel: DuelSeats | None) -> tuple[str, str | None]:
    """The keys at the table's seats: the opener's first (I.5; L-30), then the joiner's (none
    at a table against the AI)."""
    return opened.request.player, duel.joined.request.player if duel is not None else None


def table_seed(
    opened: TableOpened, dealt: TableDealt, secret: bytes, duel: DuelSeats | None = None
) -> int:
    """The seed the table is convened from: the secret and the player's seed, or at a duel
    the secret and both players' seeds, the opener's first (``ledger.tables.duel_seed``)."""
    if duel is None:
        return deal_seed(opened.table, secret, seed_bytes(dealt.request))
    first, second = seat_keys(opened, duel)
    seeds = {r.player: seed_bytes(r) for r in (duel.seeded.request, dealt.request)}
    if set(seeds) != {first, second}:
        raise WitnessMismatch(f"duel {opened.table}'s two seeds are not its two players'")
    return duel_seed(opened.table, secret, (seeds[first], seeds[str(second)]))


def convene_dealt(
    opened: TableOpened, dealt: TableDealt, secret: bytes, duel: DuelSeats | None = None
) -> WitnessedTable:
    """The table ``opened`` and ``dealt`` convene under ``secret``, its deal checked against
    the one the log recorded."""
    seed = table_seed(opened, dealt, secret, duel)
    table = WitnessedTable.opened(opened, seed, duel.joined if duel is not None else None)
    kind, hands, market = table.deal()
    recorded = dealt.deal
    if (kind, hands, market) != (recorded.table, recorded.hands, recorded.market):
        raise WitnessMismatch(
            f"table {opened.table}'s recorded deal is not the deal of its seed at "
            f"{opened.request.venue}"
        )
    return table


def check_seat(table: WitnessedTable, keys: tuple[str, str | None], mover: str) -> None:
    """:class:`OutOfTurnMove` unless ``mover`` is the key at the seat whose request the table
    waits for (a decision inside an action is the seat the engine names; a drill, the
    drilling human's)."""
    seat = table.decider
    if seat is None:
        raise OutOfTurnMove("the table has closed; it takes no more moves")
    if keys[seat] != mover:
        raise OutOfTurnMove(
            f"at ply {table.ply} the table waits for seat {seat} ({keys[seat]}); {mover} "
            f"signed the move"
        )


class OutOfTurnMove(WitnessMismatch):
    """A move signed by a key that is not the deciding seat's."""


def replay_table(
    opened: TableOpened,
    dealt: TableDealt,
    dealt_at: datetime,
    moves: Sequence[tuple[MovePlayed, datetime]],
    secret: bytes,
    duel: DuelSeats | None = None,
) -> WitnessedTable:
    """The table a log's events record, replayed: the deal checked, then every move (at its
    ply, signed by the deciding seat's key, each recorded action the one the table takes; a
    drill judged on the seconds from the event that started it to the answer's arrival)."""
    table = convene_dealt(opened, dealt, secret, duel)
    keys = seat_keys(opened, duel)
    before = dealt_at
    for move, at in moves:
        if move.ply != table.ply:
            raise WitnessMismatch(
                f"a move of table {opened.table} is recorded at ply {move.ply}; the table "
                f"was at ply {table.ply}"
            )
        check_seat(table, keys, move.request.player)
        elapsed = drill_elapsed(before, arrival(move, at)) if table.drilling else None
        try:
            check_move(table, move.request.action, move.actions, elapsed)
        except WitnessMismatch:
            raise
        except LedgerError as exc:  # a move the table refuses, recorded as played
            raise WitnessMismatch(f"table {opened.table}: {exc.diagnostics()}") from None
        before = at
    return table


def follow_table(
    opened: TableOpened,
    dealt: TableDealt,
    secret: bytes,
    duel: DuelSeats | None,
    actions: Sequence[str],
) -> WitnessedTable:
    """The table a log records, its recorded ``actions`` applied as they stand: its state, its
    legal actions and a pending drill's pattern, for showing it, in milliseconds. The AI's
    replies are taken as recorded, not searched again, so its search has not thought: the
    table is never played on (``replay_table`` is for that, and for an auditor)."""
    table = convene_dealt(opened, dealt, secret, duel)
    for text in actions:
        table.follow(text)
    return table


def referee(
    opened: TableOpened,
    dealt: TableDealt,
    dealt_at: datetime,
    moves: Sequence[tuple[MovePlayed, datetime]],
    secret: bytes,
    duel: DuelSeats | None = None,
) -> tuple[str, tuple[tuple[int, int, int], tuple[int, int, int]]] | None:
    """The auditor's referee (``ledger.audit.tables.Referee``): a table replayed as far as its
    moves go; a closed table's first seat's verdict and both seats' columns, or None for a
    table still in play (abandoned when its move clock ran out)."""
    table = replay_table(opened, dealt, dealt_at, moves, secret, duel)
    if not table.closed:
        return None
    return table.verdict(), table.columns()
