"""Playing witnessed tables: every request decided in one transaction under the log's lock.

A request's signature is checked first, without the lock (the key it names must have signed
it). Requests then wait for the service's one writer (the kernel's :class:`GroupWriter`),
which takes those waiting into one transaction (:func:`run_group`): it reads the rows of
their tables, brings each table in play up to its row (a table this process has not played
to its last ply, after a restart or another worker's move, is replayed from its events), and
decides each request in arrival order, in a worker thread (the opponent's search runs there,
off the event loop):

- ``table-open``: a new table, its commitment in the ``table-opened`` event; the same request
  again answers the same table;
- ``table-seed``: the deal, from the secret and the player's seed, in ``table-dealt`` (at a
  Registrar's, from the portfolio its open event recorded, read under the lock);
- ``table-move``: the move at the table's next ply, with the opponent's replies, in
  ``move-played``; at the close ``table-closed`` reveals the secret with the verdict and the
  columns.

Refusals: another league or manifest (``wrong-league``), a request signed too far from the
service's clock (``stale-request``), a table never opened (``unknown-table``), a request on
another player's table (``bad-signature``: its player did not sign it), a ply already played
(``move-replayed``), a request the table does not wait for (``out-of-turn``), a move the
rules forbid (``illegal-move``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime

from game.window.notation import format_action
from game.window.witnessed import WitnessedTable, convene_dealt, replay_table
from ledger.api.tables import Closing, TableView
from ledger.errors import (
    BadSignatureError,
    IllegalMove,
    LedgerError,
    MoveReplayed,
    OutOfTurn,
    StaleRequest,
    UnknownTable,
    VerificationError,
)
from ledger.events import EventBody, body_as
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import NewEvent
from ledger.manifest import LeagueManifest
from ledger.portfolios import takes_portfolio
from ledger.tables import (
    Deal,
    MovePlayed,
    TableClosed,
    TableDealt,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
    commitment,
    deal_seed,
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
from services.tables.reading import FairSlots, Replays, closed_view

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Played:
    """A move already played on the table in play (its opponent's replies searched before
    the log's lock: :meth:`Writer.submit`), to be recorded if the table is still where it was
    played from."""

    request: TableMove
    table: WitnessedTable
    taken: tuple[str, ...]

    @property
    def player(self) -> str:
        return self.request.player


Request = TableOpen | TableSeed | TableMove
Decided = Request | Played

#: Most requests decided in one transaction, and waiting for the writer.
MAX_GROUP = 64
MAX_WAITING = 1024
#: Tables kept in play in memory (the least recently used beyond are replayed when asked).
MAX_LIVE = 4096


def verify(request: Request) -> None:
    """:class:`BadSignatureError` unless the player the request names signed it."""
    request.verify(PublicKey.from_text(request.player))


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
        if row.status == "opened":
            return None
        played = self.live.get(row.table_id)
        if played is not None and played.ply == row.plies:
            self.live.move_to_end(row.table_id)
            return played
        return await self.replays.once(row.table_id, lambda: self._replay(row))

    async def _replay(self, row: TableRow) -> WitnessedTable:
        events = await self.store.read_stream(table_stream(row.table_id))
        opened = body_as(events[0], TableOpened)
        dealt = body_as(events[1], TableDealt)
        moves = [
            (body_as(event, MovePlayed), event.recorded_at)
            for event in events[2:]
            if event.type == MovePlayed.TYPE
        ]
        secret = self.secret(row.table_id)
        try:
            played = await asyncio.to_thread(
                replay_table, opened, dealt, events[1].recorded_at, moves, secret
            )
        except LedgerError as exc:
            raise EventLogError(
                f"table {row.table_id} does not replay from its own log: {exc.diagnostics()}"
            ) from None
        self.keep(row.table_id, played)
        return played

    def view(
        self, row: TableRow, played: WitnessedTable | None, taken: Sequence[str] = ()
    ) -> TableView:
        """The answer about ``row``'s table."""
        closing = None
        waiting: str
        if row.status == "opened" or played is None:
            waiting = "seed"
        elif played.closed:
            waiting = "closed"
            secret = self.secret(row.table_id)
            columns = played.columns()
            closing = Closing(
                secret=secret_text(secret),
                seed=played.seed,
                verdict=played.verdict(),  # type: ignore[arg-type]
                columns=[list(columns[0]), list(columns[1])],
            )
        elif played.drilling:
            waiting = "drill"
        else:
            waiting = "move"
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
            commitment=row.commitment,
            waiting=waiting,  # type: ignore[arg-type]
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
    #: The open events of the Registrars' tables this group deals (their portfolios).
    opened: dict[str, TableOpened] = field(default_factory=dict)

    def decide(self, request: Decided) -> TableView | LedgerError:
        try:
            self._addressed(request.request if isinstance(request, Played) else request)
            if isinstance(request, Played):
                return self._move(request.request, request)
            if isinstance(request, TableOpen):
                return self._open(request)
            if isinstance(request, TableSeed):
                return self._seed(request)
            return self._move(request)
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
        if row.player != player:
            raise BadSignatureError(
                f"table {table} is played by {row.player}; its player did not sign this request"
            )
        return row

    def _append(self, table: str, body: EventBody) -> TableRow:
        stream = self.rows.get(table)
        self.events.append(body.new_event(expected_version=stream.events if stream else 0))
        row = PROJECTION.apply(self.rows, body, self.now)
        self.changes.rows[row.table_id] = row
        return row

    def _open(self, request: TableOpen) -> TableView:
        table = request.table_id()
        row = self.rows.get(table)
        if row is None:
            secret = self.tables.secret(table)
            opened = TableOpened(
                table=table, request=request, commitment=hash_text(commitment(table, secret))
            )
            row = self._append(table, opened)
        return self.tables.view(row, None)

    def _seed(self, request: TableSeed) -> TableView:
        row = self._row(request.table, request.player)
        if row.status != "opened":
            raise OutOfTurn(f"table {row.table_id} is dealt already: its seed is in")
        if request.commitment != row.commitment:
            raise VerificationError(
                f"the seed answers commitment {request.commitment}; table {row.table_id}'s is "
                f"{row.commitment}"
            )
        secret = self.tables.secret(row.table_id)
        seed = deal_seed(row.table_id, secret, seed_bytes(request))
        opened = self.opened.get(row.table_id)
        played = (
            WitnessedTable.opened(opened, seed)  # a Registrar's: the player's portfolio (IV.3)
            if opened is not None
            else WitnessedTable.convene(row.venue, seed)
        )
        kind, hands, market = played.deal()
        deal = Deal.from_wire({"table": kind, "hands": hands, "market": market})
        row = self._append(row.table_id, TableDealt(table=row.table_id, request=request, deal=deal))
        self.playing[row.table_id] = played
        self.tables.keep(row.table_id, played)
        return self.tables.view(row, played)

    def _move(self, request: TableMove, before: Played | None = None) -> TableView:
        row = self._row(request.table, request.player)
        if row.status == "opened":
            raise OutOfTurn(f"table {row.table_id} is not dealt yet: send the seed first")
        if row.status == "closed":
            raise OutOfTurn(f"table {row.table_id} has closed; it takes no more moves")
        if request.ply < row.plies:
            raise MoveReplayed(
                f"ply {request.ply} of table {row.table_id} is played already; the table is at "
                f"ply {row.plies}"
            )
        if request.ply > row.plies:
            raise OutOfTurn(
                f"table {row.table_id} is at ply {row.plies}, not {request.ply}: it waits for "
                f"the move at ply {row.plies}"
            )
        if before is not None:  # played from this ply before the lock (checked just above)
            played, taken = before.table, list(before.taken)
        else:
            played = self.playing[row.table_id]
            elapsed = (self.now - row.last_at).total_seconds() if played.drilling else None
            try:
                taken = played.play(request.action, elapsed)
            except LedgerError as exc:
                raise IllegalMove(exc.diagnostics()) from None
        move = MovePlayed(
            table=row.table_id, ply=request.ply, request=request, actions=tuple(taken)
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


async def play_group(tables: Tables, group: Sequence[Decided]) -> list[TableView | LedgerError]:
    """Decide ``group`` in one transaction (the kernel's :func:`run_group`)."""
    wanted = [
        r.table_id()
        if isinstance(r, TableOpen)
        else r.request.table
        if isinstance(r, Played)
        else r.table
        for r in group
    ]
    moved = [r.table for r in group if isinstance(r, TableMove)]
    seeded = [r.table for r in group if isinstance(r, TableSeed)]
    Read = tuple[dict[str, TableRow], dict[str, WitnessedTable], dict[str, TableOpened]]

    async def read(locked: Locked) -> Read:
        rows = await read_rows(locked.tx, wanted)
        playing = {}
        for table in moved:
            row = rows.get(table)
            dealt = row is not None and row.status == "dealt"
            played = await tables.in_play(row) if row is not None and dealt else None
            if played is not None:
                playing[table] = played
        return rows, playing, await portfolios_opened(tables, rows, seeded)

    def decide(locked: Locked, read: Read) -> tuple[TableDecision, list[TableView | LedgerError]]:
        rows, playing, opened = read
        deciding = TableDecision(
            tables, locked.now, locked.next_seq, rows, playing=playing, opened=opened
        )
        return deciding, [deciding.decide(request) for request in group]

    try:
        answers = await run_group(tables.store, PROJECTION, read, decide)
    except BaseException:
        # A table played in memory by a transaction that did not commit is not the table.
        tables.forget(wanted)
        raise
    return answers


async def portfolios_opened(
    tables: Tables, rows: dict[str, TableRow], seeded: Sequence[str]
) -> dict[str, TableOpened]:
    """The open events of the tables among ``seeded`` that wait for their seed at a
    Registrar's venue: each is dealt from the portfolio its open request brought (IV.3)."""
    opened = {}
    for table in seeded:
        row = rows.get(table)
        if row is not None and row.status == "opened" and takes_portfolio(row.venue):
            events = await tables.store.read_stream(table_stream(table))
            opened[table] = body_as(events[0], TableOpened)
    return opened


class Writer:
    """The tables service's one writer: requests wait here and are decided in groups.

    A move is played before it waits, whenever it can be (the table in play at the ply the
    move names, no drill of the player's pending): the opponent's search then runs in a
    worker thread while the log's lock is free for every other table, one move of a table at
    a time in this process; the transaction records it only if the table is still at that
    ply, and a move refused there leaves the table to be replayed from the log."""

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

    async def submit(self, request: Request, source: str = "local") -> TableView:
        """Verify ``request``'s signature, then wait for its group's decision (a move's
        thinking in one of the process's slots, fairly shared between sources)."""
        verify(request)
        if not isinstance(request, TableMove):
            return await self.writer.submit(request)
        async with self._table(request.table):
            return await self._move(request, source)

    async def read(self, table: str, source: str = "local") -> TableView:
        """``GET /tables/table/{table}``: a closed table from its events, a table in play as
        this process holds it, or replayed (in a thinking slot, once for all who ask)."""
        tables = self.tables
        row = await tables.row(table)
        if row.status != "closed":
            async with self._table(table):
                row = await tables.row(table)  # as the table's last move in this process left it
                if row.status != "closed":
                    played = tables.live.get(table) if row.status == "dealt" else None
                    if row.status == "dealt" and (played is None or played.ply != row.plies):
                        async with self.thinking.hold(source):
                            played = await tables.in_play(row)
                    return tables.view(row, played)
        return closed_view(row, await tables.store.read_stream(table_stream(table)))

    async def _move(self, request: TableMove, source: str) -> TableView:
        tables = self.tables
        row = (await read_rows(tables.store, [request.table])).get(request.table)
        ready = row is not None and row.status == "dealt" and row.player == request.player
        if row is None or not ready or request.ply != row.plies:
            return await self.writer.submit(request)  # refused under the lock
        async with self.thinking.hold(source):
            played = await tables.in_play(row)
            if played is None or played.drilling:
                return await self.writer.submit(request)  # decided under the lock
            try:
                taken = await asyncio.to_thread(played.play, request.action)
            except LedgerError as exc:  # nothing taken: the table is as it was
                raise IllegalMove(exc.diagnostics()) from None
        try:
            return await self.writer.submit(Played(request, played, tuple(taken)))
        except BaseException:
            tables.forget([request.table])  # played in memory, not recorded
            raise

    async def close(self) -> None:
        await self.writer.close()


__all__ = ["Tables", "Writer", "convene_dealt", "verify"]
