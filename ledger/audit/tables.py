"""The tables' checker: every witnessed table of the tables service's log replayed
(docs/formats.md, "Witnessed tables").

Fed the tables log's events in seq order (each verified under the tables key, the log's root
matched against its signed checkpoints as every log's is, :class:`~ledger.audit.state._Log`),
it checks of every table:

- ``table-opened``: the player's signed open request, addressed to this league and manifest,
  its hash the table's id; the table opened once; at a Registrar's venue its portfolio, eight
  mint-signed prints of distinct titles of this league (``ledger.portfolios``; the holder of
  each at the open is the notary's record at that moment, which no log fixes: L-39), from
  which the referee deals the table;
- ``table-joined`` (a duel): the second key's signed join, not the opener's, once;
- ``table-seeded`` and ``table-dealt``: each player's signed seed, naming the commitment the
  open event published (at a duel, one seed of each of its two keys);
- ``move-played``: a signed move of one of the table's players at the table's next ply, on a
  dealt, open table, arrived within the move clock of the table's last event;
- ``table-closed``: a secret that opens the commitment (and a duel's join code that its
  secret derives); then the **referee** replays the table from the secret and the seeds (the
  deal recorded, every move signed by the seat the engine says decides, every action, the
  opponent's replies by the same seeded search, each drill judged on the log's own times) and
  reckons its verdict and columns, which must be those the close recorded;
- ``table-abandoned``: recorded after the move clock of the table's last event ran out, its
  secret opening the commitment (and deriving a duel's join code); a dealt table is then
  replayed by the referee as far as its moves went (every move signed by the deciding seat,
  every action legal), and must still be in play there.

The referee is the game's (``game.window.witnessed``), handed in by the caller: this package
knows the protocol, not the rules. A table still open at the end of the log is checked as far
as it goes (its secret is not revealed yet: nobody can replay it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from ledger.api.logs import FeedEvent
from ledger.audit.facts import AuditFailure, _public
from ledger.audit.reward_facts import MisprintAwarded, PaidReward
from ledger.audit.rewards import RewardsAudit
from ledger.audit.state import _Log
from ledger.checkpoint import Checkpoint
from ledger.errors import LedgerError
from ledger.events import parse_event
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest, Policies
from ledger.portfolios import check_portfolio
from ledger.rewards import TABLES_REWARD_EVENTS, Campaigns, TableRewarded
from ledger.tables import (
    TABLES_EVENTS,
    DuelSeats,
    MovePlayed,
    TableAbandoned,
    TableClosed,
    TableDealt,
    TableJoined,
    TableOpened,
    TableSeeded,
    clock_for,
    deal_seed,
    duel_code,
    is_duel,
    reveals,
    seed_bytes,
)

SERVICE = "tables"
#: The tables log's event types: the tables', and their rewards' records.
EVENTS = {**TABLES_EVENTS, **TABLES_REWARD_EVENTS}


class Referee(Protocol):
    """Replays one table as far as its moves go: a closed table's verdict and both seats'
    columns, None for a table still in play, or a :class:`~ledger.errors.LedgerError` saying
    where the log and the table part."""

    def __call__(
        self,
        opened: TableOpened,
        dealt: TableDealt,
        dealt_at: datetime,
        moves: Sequence[tuple[MovePlayed, datetime]],
        secret: bytes,
        duel: DuelSeats | None = None,
    ) -> tuple[str, tuple[tuple[int, int, int], tuple[int, int, int]]] | None: ...


@dataclass
class _Table:
    opened: TableOpened
    #: When its last event was recorded (its move clock runs from there).
    last_at: datetime
    joined: TableJoined | None = None
    seeded: TableSeeded | None = None
    dealt: tuple[TableDealt, datetime] | None = None
    moves: list[tuple[MovePlayed, datetime]] = field(default_factory=list)
    #: The next move's ply, as far as the log's moves tell it (each move's actions added).
    ply: int = 0
    closed: bool = False
    abandoned: bool = False

    @property
    def duel(self) -> bool:
        return is_duel(self.opened.request.venue)

    def players(self) -> tuple[str, ...]:
        joined = (self.joined.request.player,) if self.joined is not None else ()
        return (self.opened.request.player, *joined)

    def within(self, policies: Policies, waiting: str, at: datetime) -> None:
        """:class:`_Wrong` unless ``at`` is within the move clock (``policies``') for
        ``waiting``."""
        clock = clock_for(policies, waiting)
        if (at - self.last_at).total_seconds() > clock:
            raise _Wrong(
                f"table {self.opened.table} takes its {waiting} {at - self.last_at} after its "
                f"last event, past its {clock} s move clock"
            )


@dataclass(frozen=True, slots=True)
class TablesReport:
    """What the tables' audit verified."""

    events: int
    tables: int
    replayed: int
    moves: int
    verdicts: dict[str, int]
    checkpoints: int
    #: Tables whose reward the treasury paid, and the marks paid (``ledger.audit.rewards``).
    rewarded: int = 0
    marks: int = 0
    #: Tables abandoned when their move clock ran out (no verdict: L-19, L-31).
    abandoned: int = 0

    def lines(self) -> list[str]:
        counted = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items())) or "none"
        return [
            f"tables: {self.events} events to {self.checkpoints} checkpoints; {self.tables} "
            f"tables, {self.replayed} closed and replayed with the engine ({self.moves} "
            f"moves; verdicts: {counted}); {self.abandoned} abandoned by the move clock; "
            f"{self.rewarded} rewards paid, each its due ({self.marks} marks)"
        ]


class TablesChecker:
    """The tables log of ``manifest``'s league, checked event by event; :meth:`report` ends it."""

    def __init__(
        self,
        manifest: LeagueManifest,
        referee: Referee,
        campaigns: Campaigns | None = None,
        paid: Mapping[str, PaidReward] | None = None,
        paid_upto: int | None = None,
        misprint: MisprintAwarded | None = None,
    ) -> None:
        if manifest.tables is None:
            raise AuditFailure(SERVICE, None, "the league manifest names no tables key")
        self.manifest = manifest
        self.referee = referee
        self.key = PublicKey.from_text(manifest.tables)
        self.log = _Log(SERVICE, f"{manifest.league}/{SERVICE}", self.key, {})
        self.tables: dict[str, _Table] = {}
        self.moves = 0
        self.verdicts: dict[str, int] = {}
        self.replayed = 0
        self.abandoned = 0
        #: The rewards: each closed table's due (by ``campaigns``), paired with ``paid``; the
        #: mint's award of the Misprint (``misprint``) checked against the settling Balances.
        self.rewards = RewardsAudit(campaigns, paid, paid_upto, misprint)

    def checkpoint(self, checkpoint: Checkpoint) -> None:
        """A checkpoint the service serves: its root matched when the log reaches its size."""
        self.log.expect(checkpoint, kept=False)

    def add(self, events: Iterable[FeedEvent]) -> None:
        """The next events of the tables' feed, in seq order."""
        for item in events:
            try:
                event = item.verified(self.key)
                body = parse_event(event, EVENTS)
            except LedgerError as exc:
                raise self.log.fail(item.seq, exc.diagnostics()) from None
            self.log.append(item.seq, event.leaf_hash)
            try:
                self._check(body, event.recorded_at)
            except LedgerError as exc:
                raise self.log.fail(item.seq, exc.diagnostics()) from None

    def _check(self, body: object, at: datetime) -> None:
        manifest = self.manifest
        if isinstance(body, TableRewarded):
            self.rewards.rewarded(body)
            return
        if isinstance(body, TableOpened):
            request = body.request
            if body.table in self.tables:
                raise _Wrong(f"table {body.table} is opened twice")
            request.verify(_public(request.player))
            manifest.check_addressed(
                "tables service", "the open request", request.league, request.manifest
            )
            if request.table_id() != body.table:
                raise _Wrong(f"table {body.table} is not the id of the request that opened it")
            # A Registrar's portfolio: eight mint-signed prints of distinct titles, of this
            # league (who held them at the open is the notary's record then: L-39).
            check_portfolio(manifest, request.venue, request.portfolio)
            self.tables[body.table] = _Table(body, at)
            return
        if not isinstance(
            body, TableJoined | TableSeeded | TableDealt | MovePlayed | TableClosed | TableAbandoned
        ):
            raise _Wrong(f"not a tables event: {type(body).__name__}")
        table = self.tables.get(body.table)
        if table is None:
            raise _Wrong(f"table {body.table} was never opened")
        if table.closed or table.abandoned:
            raise _Wrong(f"table {body.table} has ended; its log goes on")
        if isinstance(body, TableAbandoned):
            self._abandoned(table, body, at)
        elif isinstance(body, TableJoined | TableSeeded | TableDealt):
            self._seated(table, body, at)
        elif isinstance(body, MovePlayed):
            self._moved(table, body, at)
        else:
            self._closed(table, body)
        table.last_at = at

    def _seated(
        self, table: _Table, body: TableJoined | TableSeeded | TableDealt, at: datetime
    ) -> None:
        manifest = self.manifest
        if isinstance(body, TableJoined):
            join = body.request
            if not table.duel or table.joined is not None:
                raise _Wrong(f"table {body.table} is no duel waiting for its second key")
            table.within(manifest.policies, "join", at)
            join.verify(_public(join.player))
            manifest.check_addressed("tables service", "the join", join.league, join.manifest)
            if join.player == table.opened.request.player:
                raise _Wrong(f"duel {body.table} is joined by its opener's own key")
            # A portfolio duel's second portfolio, as the open's (L-39).
            check_portfolio(manifest, table.opened.request.venue, join.portfolio)
            table.joined = body
            return
        if table.dealt is not None:
            raise _Wrong(f"table {body.table} is dealt twice")
        if table.duel and table.joined is None:
            raise _Wrong(f"duel {body.table} takes a seed before its second key joined")
        table.within(manifest.policies, "seed", at)
        seed = body.request
        if seed.player not in table.players():
            raise _Wrong(f"table {body.table} takes a seed of {seed.player}, not a player of it")
        seed.verify(_public(seed.player))
        manifest.check_addressed("tables service", "the seed", seed.league, seed.manifest)
        if seed.table != body.table or seed.commitment != table.opened.commitment:
            raise _Wrong(f"table {body.table}'s seed answers another table or commitment")
        if isinstance(body, TableSeeded):
            if not table.duel or table.seeded is not None:
                raise _Wrong(f"table {body.table} takes a first seed twice, or is no duel")
            table.seeded = body
            return
        if table.duel and (table.seeded is None or table.seeded.request.player == seed.player):
            raise _Wrong(f"duel {body.table} is dealt without one seed of each of its players")
        table.dealt = (body, at)

    def _moved(self, table: _Table, body: MovePlayed, at: datetime) -> None:
        if table.dealt is None:
            raise _Wrong(f"table {body.table} is played before it is dealt")
        move = body.request
        if move.player not in table.players():
            raise _Wrong(
                f"table {body.table} is played by {table.players()}; a move of "
                f"{move.player} is in it"
            )
        move.verify(_public(move.player))
        self.manifest.check_addressed("tables service", "the move", move.league, move.manifest)
        if move.table != body.table or move.ply != body.ply or body.ply != table.ply:
            raise _Wrong(
                f"table {body.table}'s move at ply {body.ply} answers ply {move.ply} of "
                f"table {move.table}; the table was at ply {table.ply}"
            )
        if body.arrived is not None:
            arrived = datetime.fromtimestamp(body.arrived / 1000, UTC)
            table.within(self.manifest.policies, "move", arrived)
        table.moves.append((body, at))
        table.ply += len(body.actions)
        self.moves += 1

    def _revealed(self, table: _Table, secret_text: str) -> bytes:
        """The secret ``secret_text`` if it opens the table's commitment (and derives a
        joined duel's code)."""
        secret = reveals(table.opened, secret_text)
        table_id = table.opened.table
        if table.joined is not None and table.joined.request.code != duel_code(table_id, secret):
            raise _Wrong(f"duel {table_id} was joined with a code its secret does not derive")
        return secret

    def _abandoned(self, table: _Table, body: TableAbandoned, at: datetime) -> None:
        secret = self._revealed(table, body.secret)
        clock = clock_for(self.manifest.policies, body.waiting)
        if (at - table.last_at).total_seconds() <= clock:
            raise _Wrong(
                f"table {body.table} is abandoned {at - table.last_at} after its last event, "
                f"within its {clock} s move clock"
            )
        if table.dealt is not None:
            dealt, dealt_at = table.dealt
            duel = _seats(table)
            if self.referee(table.opened, dealt, dealt_at, table.moves, secret, duel) is not None:
                raise _Wrong(f"table {body.table} is recorded abandoned; replayed, it had closed")
        table.abandoned = True
        self.abandoned += 1

    def _closed(self, table: _Table, body: TableClosed) -> None:
        if table.dealt is None:
            raise _Wrong(f"table {body.table} closes before it is dealt")
        secret = self._revealed(table, body.secret)
        dealt, dealt_at = table.dealt
        duel = _seats(table)
        replayed = self.referee(table.opened, dealt, dealt_at, table.moves, secret, duel)
        if replayed is None:
            raise _Wrong(
                f"table {body.table} is recorded closed; replayed, it is still in play at ply "
                f"{table.ply}"
            )
        verdict, columns = replayed
        if (verdict, columns) != (body.verdict, body.columns):
            raise _Wrong(
                f"table {body.table} closes as a {body.verdict} with columns {body.columns}; "
                f"replayed, it is a {verdict} with columns {columns}"
            )
        table.closed = True
        self.rewards.close(
            table.opened.request, verdict, deal_seed(body.table, secret, seed_bytes(dealt.request))
        )
        self.replayed += 1
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1

    def report(self) -> TablesReport:
        """Every checkpoint reached; the report."""
        finished = self.log.finish()
        try:
            rewarded, marks = self.rewards.finish()
        except LedgerError as exc:
            raise self.log.fail(None, exc.diagnostics()) from None
        return TablesReport(
            rewarded=rewarded,
            marks=marks,
            events=finished.events,
            tables=len(self.tables),
            replayed=self.replayed,
            moves=self.moves,
            verdicts=dict(self.verdicts),
            checkpoints=finished.checkpoints,
            abandoned=self.abandoned,
        )


def _seats(table: _Table) -> DuelSeats | None:
    """A duel's two seats as its join and first seed name them (None at a table against the
    house)."""
    if table.joined is not None and table.seeded is not None:
        return DuelSeats(table.joined, table.seeded)
    return None


class _Wrong(LedgerError):
    """What one tables event breaks (the checker names its seq)."""
