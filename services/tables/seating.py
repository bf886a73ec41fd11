"""Who sits at a table and what it waits for: a duel's two seats, the move clock's deadline,
a move's arrival time (docs/formats.md "Duels", "The move clock"), and what a group of a
duel's requests reads of its log under the lock (``services.tables.playing``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from game.window.witnessed import WitnessedTable
from ledger.certificates import PrintCertificate
from ledger.events import body_as
from ledger.portfolios import PORTFOLIO_DUEL
from ledger.tables import (
    TableJoined,
    TableOpened,
    TableSeeded,
    clock_for,
    is_duel,
    seed_bytes,
    table_stream,
)
from services.eventlog import EventStore
from services.tables.projection import TableRow


def at_ms(ms: int) -> datetime:
    """The moment of ``ms`` Unix milliseconds (a move's recorded arrival)."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def arrival_now() -> int:
    """The service's clock now, in Unix milliseconds: a move's arrival, read first."""
    return int(time.time() * 1000)


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


def deadline_of(row: TableRow, waiting: str) -> datetime | None:
    """When ``row``'s table's move clock runs out (None once it has ended)."""
    if waiting in ("closed", "abandoned"):
        return None
    return row.last_at + timedelta(seconds=clock_for(waiting))


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


async def portfolio_duels(
    store: EventStore,
    rows: dict[str, TableRow],
    named: Sequence[str],
    opened: dict[str, TableOpened],
) -> dict[str, tuple[PrintCertificate, ...]]:
    """Of the portfolio duels among ``named`` still to be dealt: each one's open event (into
    ``opened``) and, once joined, its second key's eight (IV.3)."""
    seconds = {}
    for table in dict.fromkeys(named):
        row = rows.get(table)
        if row is None or row.venue != PORTFOLIO_DUEL or row.status not in ("opened", "joined"):
            continue
        events = await store.read_stream(table_stream(table))
        opened[table] = body_as(events[0], TableOpened)
        joined = next((e for e in events if e.type == TableJoined.TYPE), None)
        if joined is not None:
            seconds[table] = body_as(joined, TableJoined).request.portfolio or ()
    return seconds
