"""Playing witnessed tables: every request decided in one transaction under the log's lock.

A request's signature is checked first, without the lock (the key it names must have signed
it). Requests then wait for the service's one writer (the kernel's :class:`GroupWriter`),
which takes those waiting into one transaction (:func:`run_group`): it reads the rows of
their tables, brings each table in play up to its row (a table this process has not played
to its last ply, after a restart or another worker's move, is replayed from its events), and
decides each request in arrival order, in a worker thread (the opponent's search runs there,
off the event loop):

- ``table-open``: a new table, its commitment in the ``table-opened`` event; the same request
  again answers the same table (a duel's join code only to the request that opened it);
- ``table-join``: a duel's second key, by the join code, in ``table-joined``;
- ``table-seed``: the deal, from the secret and the player's seed, in ``table-dealt`` (at a
  Registrar's, from the portfolio its open event recorded, read under the lock; at a duel, the
  first of the two seeds in ``table-seeded``, the deal from both at the second);
- ``table-move``: the move at the table's next ply, signed by the deciding seat's key, with
  the AI's replies, in ``move-played``; at the close ``table-closed`` reveals the secret with
  the verdict and the columns;
- the move clock's sweep (``services.tables.clock``): a table whose clock ran out is
  abandoned, ``table-abandoned``, settling nothing.

A move's arrival time is read first, in the handler, and recorded in its event: the clock and
a drill are judged on it, not on when the lock was had.

Refusals: another league or manifest (``wrong-league``), a request signed too far from the
service's clock (``stale-request``), a table never opened or no duel waiting for a code
(``unknown-table``), a request on a table its key does not sit at (``bad-signature``: its
player did not sign it), a ply already played (``move-replayed``), a request the table does not
wait for, a move by the other seat among them (``out-of-turn``), a request after the clock ran
out (``timed-out``), a move the rules forbid (``illegal-move``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from game.window.notation import format_action
from game.window.witnessed import (
    OutOfTurnMove,
    WitnessedTable,
    check_seat,
    convene_dealt,
    drill_elapsed,
    follow_table,
    replay_table,
)
from ledger.api.tables import Closing, TableView
from ledger.errors import (
    BadSignatureError,
    IllegalMove,
    LedgerError,
    MoveReplayed,
    OutOfTurn,
    StaleRequest,
    TimedOut,
    UnknownTable,
    VerificationError,
)
from ledger.events import EventBody, body_as
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import NewEvent
from ledger.manifest import LeagueManifest, Policies
from ledger.portfolios import check_portfolio, takes_portfolio
from ledger.tables import (
    Deal,
    MovePlayed,
    TableAbandoned,
    TableClosed,
    TableDealt,
    TableJoin,
    TableJoined,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
    TableSeeded,
    clock_for,
    commitment,
    deal_seed,
    duel_code,
    duel_seed,
    is_duel,
    secret_text,
    seed_bytes,
    table_secret,
    table_stream,
)
from ledger.wire import hash_text
from services.eventlog import EventLogError, EventStore
from services.kernel.answered import MAX_CLOCK_SKEW
from services.kernel.writer import GroupWriter, Locked, run_group
from services.tables.projection import PROJECTION, TableRow, TablesChanges, read_rows
from services.tables.reading import FairSlots, Replays, closed_view, recorded

log = logging.getLogger(__name__)


def at_ms(ms: int) -> datetime:
    """The moment of ``ms`` Unix milliseconds (a move's recorded arrival)."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def arrival_now() -> int:
    """The service's clock now, in Unix milliseconds: a move's arrival, read first."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Move:
    """A move to be played under the log's lock, and when it arrived."""

    request: TableMove
    arrived: int


@dataclass(frozen=True, slots=True)
class Played:
    """A move already played on the table in play (its opponent's replies searched before
    the log's lock: :meth:`Writer.submit`), to be recorded if the table is still where it was
    played from."""

    request: TableMove
    arrived: int
    table: WitnessedTable
    taken: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Abandon:
    """The move clock's sweep: abandon ``table`` if its clock has run out under the lock."""

    table: str


Request = TableOpen | TableJoin | TableSeed | TableMove
#: A portfolio table's open event, and a portfolio duel's join (their portfolios deal it).
Seated = tuple[TableOpened, TableJoined | None]
Decided = TableOpen | TableJoin | TableSeed | Move | Played | Abandon

#: The sweep abandons a table a fifth of its clock after the clock ran out, not at once: a
#: move that arrived in time (its ``arrived``) may still be waiting for a thinking slot or its
#: table's replay, and is played when it comes, however busy the service is (up to the grace).
SWEEP_GRACE = 0.2
#: Most requests decided in one transaction, and waiting for the writer.
MAX_GROUP = 64
MAX_WAITING = 1024
#: Tables kept in play in memory (the least recently used beyond are replayed when asked).
MAX_LIVE = 4096


def verify(request: Request) -> None:
    """:class:`BadSignatureError` unless the player the request names signed it."""
    request.verify(PublicKey.from_text(request.player))


def seats(row: TableRow) -> tuple[str, str | None]:
    """The keys at ``row``'s seats: its opener's, then a duel's second key."""
    return row.player, row.opponent


def waiting_of(row: TableRow, played: WitnessedTable | None) -> str:
    """What ``row``'s table waits for: ``join``, ``seed``, ``move``, ``drill``, or nothing
    (``closed``, ``abandoned``)."""
    if row.status in ("closed", "abandoned"):
        return row.status
    if row.status == "opened" and is_duel(row.venue):
        return "join"
    if played is None:
        return "seed"
    if played.closed:
        return "closed"
    return "drill" if played.drilling else "move"


def turn_of(row: TableRow, played: WitnessedTable | None, waiting: str) -> str | None:
    """The key whose request the table waits for (None: either's, or nobody's)."""
    if waiting == "seed":
        if not is_duel(row.venue):
            return row.player
        if row.seeded is None:
            return None
        return row.opponent if row.seeded == row.player else row.player
    if waiting in ("move", "drill") and played is not None and played.decider is not None:
        return seats(row)[played.decider]
    return None


def swept_after(policies: Policies, waiting: str) -> timedelta:
    """How long after its last event the sweep abandons a table waiting for ``waiting``: its
    clock and the grace (:data:`SWEEP_GRACE`)."""
    return timedelta(seconds=clock_for(policies, waiting) * (1 + SWEEP_GRACE))


def deadline_of(policies: Policies, row: TableRow, waiting: str) -> datetime | None:
    """When ``row``'s table's move clock runs out (None once it has ended)."""
    if waiting in ("closed", "abandoned"):
        return None
    return row.last_at + timedelta(seconds=clock_for(policies, waiting))


@dataclass
class Tables:
    """The tables service of one league: its manifest, key, log, and the tables in play."""

    manifest: LeagueManifest
    key: SigningKey
    store: EventStore
    live: OrderedDict[str, WitnessedTable] = field(default_factory=OrderedDict)
    replays: Replays = field(default_factory=Replays)

    def secret(self, table: str) -> bytes:
        return table_secret(self.key, self.manifest.league, table)

    def keep(self, table: str, played: WitnessedTable) -> None:
        self.live[table] = played
        self.live.move_to_end(table)
        while len(self.live) > MAX_LIVE:
            self.live.popitem(last=False)

    def forget(self, tables: Sequence[str]) -> None:
        for table in tables:
            self.live.pop(table, None)

    async def in_play(self, row: TableRow) -> WitnessedTable | None:
        """The table of ``row`` played up to its last ply (None before its deal)."""
        if row.status in ("opened", "joined"):
            return None
        played = self.live.get(row.table_id)
        if played is not None and played.ply == row.plies:
            self.live.move_to_end(row.table_id)
            return played
        return await self.replays.once(row.table_id, lambda: self._replay(row))

    async def _replay(self, row: TableRow) -> WitnessedTable | None:
        logged = recorded(await self.store.read_stream(table_stream(row.table_id)), row.venue)
        if logged is None:  # abandoned before its deal
            return None
        secret = self.secret(row.table_id)
        try:
            played = await asyncio.to_thread(
                replay_table,
                logged.opened,
                logged.dealt,
                logged.dealt_at,
                logged.moves,
                secret,
                logged.duel,
            )
        except LedgerError as exc:
            raise EventLogError(
                f"table {row.table_id} does not replay from its own log: {exc.diagnostics()}"
            ) from None
        self.keep(row.table_id, played)
        return played

    async def shown(self, row: TableRow) -> WitnessedTable | None:
        """``row``'s table to show (None before its deal): as this process holds it, else
        followed from its events (no search, no slot, not kept: never played on)."""
        played = self.live.get(row.table_id)
        if played is not None and played.ply == row.plies:
            return played
        logged = recorded(await self.store.read_stream(table_stream(row.table_id)), row.venue)
        if logged is None:
            return None
        secret = self.secret(row.table_id)
        try:
            return await asyncio.to_thread(
                follow_table, logged.opened, logged.dealt, secret, logged.duel, logged.actions()
            )
        except LedgerError as exc:
            raise EventLogError(
                f"table {row.table_id} does not follow from its own log: {exc.diagnostics()}"
            ) from None

    def view(
        self,
        row: TableRow,
        played: WitnessedTable | None,
        taken: Sequence[str] = (),
        code: str | None = None,
    ) -> TableView:
        """The answer about ``row``'s table (``code``: a duel's join code, to its opener)."""
        closing = None
        waiting = waiting_of(row, played)
        if waiting == "closed" and played is not None:
            secret = self.secret(row.table_id)
            columns = played.columns()
            closing = Closing(
                secret=secret_text(secret),
                seed=played.seed,
                verdict=played.verdict(),  # type: ignore[arg-type]
                columns=[list(columns[0]), list(columns[1])],
            )
        deal, legal, drill = None, [], None
        if played is not None:
            kind, hands, market = played.deal()
            deal = Deal.from_wire({"table": kind, "hands": hands, "market": market})
            if waiting == "move":
                state = played.state
                legal = [format_action(state, a) for a in state.legal_actions()]
            elif waiting == "drill":
                drill = played.pattern().notation()
        return TableView(
            table=row.table_id,
            venue=row.venue,
            player=row.player,
            opponent=row.opponent,
            commitment=row.commitment,
            code=code,
            waiting=waiting,  # type: ignore[arg-type]
            turn=turn_of(row, played, waiting),
            deadline=deadline_of(self.manifest.policies, row, waiting),
            ply=played.ply if played is not None else 0,
            deal=deal,
            actions=list(played.actions) if played is not None else [],
            played=list(taken),
            legal=legal,
            drill=drill,
            closing=closing,
        )

    async def row(self, table: str) -> TableRow:
        """The row of ``table`` (:class:`UnknownTable` when it was never opened here)."""
        row = (await read_rows(self.store, [table])).get(table)
        if row is None:
            raise UnknownTable(f"no table {table} was opened here")
        return row


@dataclass
class TableDecision:
    """One transaction's decisions, made in memory against the rows read under the lock."""

    tables: Tables
    now: datetime
    next_seq: int
    rows: dict[str, TableRow]
    events: list[NewEvent] = field(default_factory=list)
    changes: TablesChanges = field(default_factory=TablesChanges)
    #: The tables in play, by id: those read under the lock, and those dealt here.
    playing: dict[str, WitnessedTable] = field(default_factory=dict)
    #: The tables of the join codes the group's joins name (read under the lock).
    codes: dict[str, str] = field(default_factory=dict)
    #: A duel's first seed, by table: its player and bytes (read, or taken here).
    first_seeds: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    #: The open events of the Registrars' tables this group deals (their portfolios).
    opened: dict[str, Seated] = field(default_factory=dict)

    def decide(self, request: Decided) -> TableView | LedgerError:
        try:
            if isinstance(request, Abandon):
                return self._abandon(request.table)
            signed = request.request if isinstance(request, Move | Played) else request
            self._addressed(signed)
            if isinstance(request, Played):
                return self._move(request.request, request.arrived, request)
            if isinstance(request, Move):
                return self._move(request.request, request.arrived)
            if isinstance(request, TableOpen):
                return self._open(request)
            if isinstance(request, TableJoin):
                return self._join(request)
            return self._seed(request)
        except LedgerError as refusal:
            return refusal

    def _addressed(self, request: Request) -> None:
        manifest = self.tables.manifest
        manifest.check_addressed("tables service", "the request", request.league, request.manifest)
        if abs(self.now.timestamp() - request.time) > MAX_CLOCK_SKEW:
            raise StaleRequest(
                f"the {request.WHAT} was signed at {request.time}, more than {MAX_CLOCK_SKEW} s "
                f"from the tables service's clock ({int(self.now.timestamp())}); sign it again "
                f"with the current time"
            )

    def _row(self, table: str, player: str) -> TableRow:
        row = self.rows.get(table)
        if row is None:
            raise UnknownTable(f"no table {table} was opened here")
        if player not in seats(row):
            at = " and ".join(k for k in seats(row) if k is not None)
            raise BadSignatureError(
                f"table {table} is played by {at}; none of its players signed this request"
            )
        return row

    def _on_time(self, row: TableRow, waiting: str, at: datetime) -> None:
        """:class:`TimedOut` if ``row``'s clock for ``waiting`` ran out before ``at``."""
        if row.status == "abandoned":
            raise TimedOut(
                f"table {row.table_id} was abandoned when its move clock ran out; it settles "
                f"nothing (L-19)"
            )
        clock = clock_for(self.tables.manifest.policies, waiting)
        if (at - row.last_at).total_seconds() > clock:
            raise TimedOut(
                f"table {row.table_id} waited {clock} s for its {waiting} from "
                f"{row.last_at.isoformat()}; the clock ran out: the table is abandoned and "
                f"settles nothing (L-19, L-31)"
            )

    def _append(self, table: str, body: EventBody) -> TableRow:
        stream = self.rows.get(table)
        self.events.append(body.new_event(expected_version=stream.events if stream else 0))
        row = PROJECTION.apply(self.rows, body, self.now)
        self.changes.rows[row.table_id] = row
        return row

    def _open(self, request: TableOpen) -> TableView:
        table = request.table_id()
        row = self.rows.get(table)
        if row is not None:  # the same request again: the same table (never its code)
            return self.tables.view(row, self.playing.get(table))
        secret = self.tables.secret(table)
        opened = TableOpened(
            table=table, request=request, commitment=hash_text(commitment(table, secret))
        )
        row = self._append(table, opened)
        code = None
        if is_duel(row.venue):
            code = duel_code(table, secret)
            self.changes.codes[code] = table
        return self.tables.view(row, None, code=code)

    def _join(self, request: TableJoin) -> TableView:
        table = self.codes.get(request.code)
        row = self.rows.get(table) if table is not None else None
        if (
            table is None
            or row is None
            or row.status not in ("opened", "joined")
            or duel_code(table, self.tables.secret(table)) != request.code
        ):
            raise UnknownTable(f"no duel waits for join code {request.code}")
        if row.opponent == request.player:  # the same key again: the same seat
            return self.tables.view(row, None)
        if row.status != "opened":
            raise UnknownTable(f"no duel waits for join code {request.code}")
        if request.player == row.player:
            raise OutOfTurn(
                f"duel {table} is between two keys: its opener cannot take the other seat"
            )
        self._on_time(row, "join", self.now)
        check_portfolio(self.tables.manifest, row.venue, request.portfolio)  # held: app.py
        row = self._append(table, TableJoined(table=table, request=request))
        return self.tables.view(row, None)

    def _seed(self, request: TableSeed) -> TableView:
        row = self._row(request.table, request.player)
        duel = is_duel(row.venue)
        if row.status == "abandoned":
            self._on_time(row, "seed", self.now)  # timed-out: it settles nothing
        if row.status not in (("joined",) if duel else ("opened",)):
            if duel and row.status == "opened":
                raise OutOfTurn(f"duel {row.table_id} waits for its second player to join")
            raise OutOfTurn(f"table {row.table_id} is dealt already: its seed is in")
        if request.commitment != row.commitment:
            raise VerificationError(
                f"the seed answers commitment {request.commitment}; table {row.table_id}'s is "
                f"{row.commitment}"
            )
        self._on_time(row, "seed", self.now)
        if duel and row.seeded == request.player:
            raise OutOfTurn(
                f"your seed for duel {row.table_id} is in; the deal waits for the other's"
            )
        if duel and row.seeded is None:
            row = self._append(row.table_id, TableSeeded(table=row.table_id, request=request))
            self.first_seeds[row.table_id] = (request.player, seed_bytes(request))
            return self.tables.view(row, None)
        secret = self.tables.secret(row.table_id)
        if duel:
            first, first_seed = self.first_seeds[row.table_id]
            mine = seed_bytes(request)
            both = (first_seed, mine) if first == row.player else (mine, first_seed)
            seed = duel_seed(row.table_id, secret, both)
        else:
            seed = deal_seed(row.table_id, secret, seed_bytes(request))
        opened = self.opened.get(row.table_id)  # a portfolio table: its players' (IV.3)
        played = (
            WitnessedTable.opened(opened[0], seed, opened[1])
            if opened is not None
            else WitnessedTable.convene(row.venue, seed)
        )
        kind, hands, market = played.deal()
        deal = Deal.from_wire({"table": kind, "hands": hands, "market": market})
        row = self._append(row.table_id, TableDealt(table=row.table_id, request=request, deal=deal))
        self.playing[row.table_id] = played
        self.tables.keep(row.table_id, played)
        return self.tables.view(row, played)

    def _move(self, request: TableMove, arrived: int, before: Played | None = None) -> TableView:
        row = self._row(request.table, request.player)
        if row.status in ("opened", "joined"):
            raise OutOfTurn(f"table {row.table_id} is not dealt yet: send the seed first")
        if row.status == "closed":
            raise OutOfTurn(f"table {row.table_id} has closed; it takes no more moves")
        if request.ply < row.plies:
            raise MoveReplayed(
                f"ply {request.ply} of table {row.table_id} is played already; the table is at "
                f"ply {row.plies}"
            )
        if row.status == "abandoned":
            self._on_time(row, "move", self.now)
        if request.ply > row.plies:
            raise OutOfTurn(
                f"table {row.table_id} is at ply {row.plies}, not {request.ply}: it waits for "
                f"the move at ply {row.plies}"
            )
        if before is not None:  # played from this ply before the lock, by its seat, in time
            played, taken = before.table, list(before.taken)
        else:
            played = self.playing[row.table_id]
            self._on_time(row, "drill" if played.drilling else "move", at_ms(arrived))
            try:
                check_seat(played, seats(row), request.player)
            except OutOfTurnMove as exc:
                raise OutOfTurn(exc.diagnostics()) from None
            elapsed = drill_elapsed(row.last_at, at_ms(arrived)) if played.drilling else None
            try:
                taken = played.play(request.action, elapsed)
            except LedgerError as exc:
                raise IllegalMove(exc.diagnostics()) from None
        move = MovePlayed(
            table=row.table_id,
            ply=request.ply,
            request=request,
            actions=tuple(taken),
            arrived=arrived,
        )
        self._append(row.table_id, move)
        if played.closed:
            secret = self.tables.secret(row.table_id)
            columns = played.columns()
            self._append(
                row.table_id,
                TableClosed(
                    table=row.table_id,
                    secret=secret_text(secret),
                    verdict=played.verdict(),  # type: ignore[arg-type]
                    columns=columns,
                ),
            )
        return self.tables.view(self.rows[row.table_id], played, taken)

    def _abandon(self, table: str) -> TableView:
        row = self.rows.get(table)
        if row is None:
            raise UnknownTable(f"no table {table} was opened here")
        played = self.playing.get(table)
        waiting = waiting_of(row, played)
        if waiting in ("closed", "abandoned"):
            raise OutOfTurn(f"table {table} has ended")
        if self.now - row.last_at > swept_after(self.tables.manifest.policies, waiting):
            abandoned = TableAbandoned(
                table=table,
                secret=secret_text(self.tables.secret(table)),
                waiting=waiting,  # type: ignore[arg-type]
                seat=turn_of(row, played, waiting),
            )
            row = self._append(table, abandoned)
            return self.tables.view(row, played)
        raise OutOfTurn(f"table {table}'s move clock (and its grace) has not run out")


def table_of(request: Decided) -> str | None:
    """The table ``request`` names (a join names a code, not a table)."""
    if isinstance(request, TableOpen):
        return request.table_id()
    if isinstance(request, Move | Played):
        return request.request.table
    if isinstance(request, TableJoin):
        return None
    return request.table


@dataclass(frozen=True, slots=True)
class GroupRead:
    """What a group reads under the lock."""

    rows: dict[str, TableRow]
    playing: dict[str, WitnessedTable]
    codes: dict[str, str]
    first_seeds: dict[str, tuple[str, bytes]]
    opened: dict[str, Seated]


async def first_seeds(store: EventStore, rows: Sequence[TableRow]) -> dict[str, tuple[str, bytes]]:
    """The first seed of each duel of ``rows`` that has one in: its player and bytes."""
    found = {}
    for row in rows:
        if row.seeded is None or row.status != "joined":
            continue
        events = await store.read_stream(table_stream(row.table_id))
        seeded = body_as(next(e for e in events if e.type == TableSeeded.TYPE), TableSeeded)
        found[row.table_id] = (seeded.request.player, seed_bytes(seeded.request))
    return found


async def play_group(tables: Tables, group: Sequence[Decided]) -> list[TableView | LedgerError]:
    """Decide ``group`` in one transaction (the kernel's :func:`run_group`)."""
    named = [table for table in map(table_of, group) if table is not None]
    codes = sorted({r.code for r in group if isinstance(r, TableJoin)})
    moved = {r.request.table for r in group if isinstance(r, Move)}
    moved |= {r.table for r in group if isinstance(r, Abandon)}
    seeding = [r.table for r in group if isinstance(r, TableSeed)]

    async def read(locked: Locked) -> GroupRead:
        found: dict[str, str] = {}
        if codes:
            coded = await locked.tx.fetch(
                "SELECT code, table_id FROM tables.duel_codes WHERE code = ANY($1::text[])", codes
            )
            found = {code: table for code, table in coded}
        rows = await read_rows(locked.tx, [*named, *found.values()])
        playing = {}
        for table in moved:
            row = rows.get(table)
            dealt = row is not None and row.status == "dealt"
            played = await tables.in_play(row) if row is not None and dealt else None
            if played is not None:
                playing[table] = played
        seeds = await first_seeds(tables.store, [r for t, r in rows.items() if t in seeding])
        opened = await portfolios_opened(tables, rows, seeding)
        return GroupRead(rows, playing, found, seeds, opened)

    def decide(
        locked: Locked, read: GroupRead
    ) -> tuple[TableDecision, list[TableView | LedgerError]]:
        deciding = TableDecision(
            tables,
            locked.now,
            locked.next_seq,
            read.rows,
            playing=read.playing,
            codes=read.codes,
            first_seeds=read.first_seeds,
            opened=read.opened,
        )
        return deciding, [deciding.decide(request) for request in group]

    try:
        answers = await run_group(tables.store, PROJECTION, read, decide)
    except BaseException:
        # A table played in memory by a transaction that did not commit is not the table.
        tables.forget(named)
        raise
    return answers


async def portfolios_opened(
    tables: Tables, rows: dict[str, TableRow], seeded: Sequence[str]
) -> dict[str, Seated]:
    """The open (and a duel's join) events of the tables among ``seeded`` that wait for their
    seed at a portfolio venue: each is dealt from the portfolios they brought (IV.3)."""
    opened = {}
    for table in seeded:
        row = rows.get(table)
        if row is not None and row.status in ("opened", "joined") and takes_portfolio(row.venue):
            events = await tables.store.read_stream(table_stream(table))
            joined = [body_as(e, TableJoined) for e in events if e.type == TableJoined.TYPE]
            opened[table] = (body_as(events[0], TableOpened), joined[0] if joined else None)
    return opened


class Writer:
    """The tables service's one writer: requests wait here and are decided in groups.

    A move is played before it waits, whenever it can be (the table in play at the ply the
    move names, signed by the deciding seat's key, within its clock; a drill's answer judged
    on its arrival time): the AI's search then runs in a worker thread while the log's lock is
    free for every other table, one move of a table at a time in this process; the
    transaction records it only if the table is still at that ply, and a move refused there
    leaves the table to be replayed from the log."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        #: One lock per table with a move in this process, and how many moves hold or await it.
        self.locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}
        self.thinking = FairSlots()
        self.writer: GroupWriter[Decided, TableView] = GroupWriter(
            self._group,
            units=lambda _: 1,
            max_group=MAX_GROUP,
            max_waiting=MAX_WAITING,
            what="table requests",
        )

    async def _group(self, group: Sequence[Decided]) -> list[TableView | LedgerError]:
        return await play_group(self.tables, group)

    @asynccontextmanager
    async def _table(self, table: str) -> AsyncIterator[None]:
        """Hold ``table``'s lock in this process (its moves and reads, one at a time)."""
        lock, users = self.locks.setdefault(table, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self.locks[table]

    async def submit(
        self, request: Request, source: str = "local", arrived: int | None = None
    ) -> TableView:
        """Verify ``request``'s signature, then wait for its group's decision (a move with
        the Unix milliseconds it ``arrived`` at, read first, now when not given; its thinking
        in one of the process's slots, fairly shared between sources)."""
        if arrived is None:
            arrived = arrival_now()
        verify(request)
        if not isinstance(request, TableMove):
            return await self.writer.submit(request)
        async with self._table(request.table):
            return await self._move(request, source, arrived)

    async def read(self, table: str) -> TableView:
        """``GET /tables/table/{table}``: a closed table from its events, a table in play (or
        abandoned) as this process holds it, or followed from its events (no search: a read
        takes no thinking slot)."""
        tables = self.tables
        row = await tables.row(table)
        if row.status != "closed":
            async with self._table(table):
                row = await tables.row(table)  # as the table's last move in this process left it
                if row.status != "closed":
                    dealt = row.status in ("dealt", "abandoned")
                    return tables.view(row, await tables.shown(row) if dealt else None)
        return closed_view(row, await tables.store.read_stream(table_stream(table)))

    async def abandon(self, table: str) -> TableView:
        """Abandon ``table`` if its move clock has run out (the sweep's; ``OutOfTurn`` if it
        has not, or the table has ended)."""
        return await self.writer.submit(Abandon(table))

    async def _move(self, request: TableMove, source: str, arrived: int) -> TableView:
        tables = self.tables
        row = (await read_rows(tables.store, [request.table])).get(request.table)
        ready = row is not None and row.status == "dealt" and request.player in seats(row)
        if row is None or not ready or request.ply != row.plies:
            return await self.writer.submit(Move(request, arrived))  # refused under the lock
        async with self.thinking.hold(source):
            played = await tables.in_play(row)
            if played is None or not self._ready(row, played, request, arrived):
                return await self.writer.submit(Move(request, arrived))  # decided under the lock
            elapsed = drill_elapsed(row.last_at, at_ms(arrived)) if played.drilling else None
            try:
                taken = await asyncio.to_thread(played.play, request.action, elapsed)
            except LedgerError as exc:  # nothing taken: the table is as it was
                raise IllegalMove(exc.diagnostics()) from None
        try:
            return await self.writer.submit(Played(request, arrived, played, tuple(taken)))
        except BaseException:
            tables.forget([request.table])  # played in memory, not recorded
            raise

    def _ready(
        self, row: TableRow, played: WitnessedTable, request: TableMove, arrived: int
    ) -> bool:
        """Whether ``request`` can be played before the lock: at the table's ply, by the
        deciding seat, within the clock (anything else is refused under the lock)."""
        if request.ply != row.plies or played.decider is None:
            return False
        waiting = "drill" if played.drilling else "move"
        clock = clock_for(self.tables.manifest.policies, waiting)
        late = (at_ms(arrived) - row.last_at).total_seconds() > clock
        return seats(row)[played.decider] == request.player and not late

    async def close(self) -> None:
        await self.writer.close()


__all__ = ["Tables", "Writer", "convene_dealt", "verify"]
