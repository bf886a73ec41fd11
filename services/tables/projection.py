"""The tables service's projection: one row per witnessed table, from its log alone.

:meth:`TablesProjection.apply` is pure: what one event changes of its table's row. The
playing transaction applies it to the rows it read for the events it appends; ``league
rebuild`` folds the whole log through the same function (``services.kernel.projections``).
See migrations 0013 and 0014 (a duel's second key and first seed; ``tables.duel_codes``, the
join codes of duels, which the log does not hold until the join: the opening transaction writes
them beside the row, derived from the service's key, and a rebuild leaves them be).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from ledger.events import EventBody, parse_event
from ledger.leaf import Event
from ledger.rewards import TABLES_REWARD_EVENTS
from ledger.tables import (
    TABLES_EVENTS,
    MovePlayed,
    TableAbandoned,
    TableClosed,
    TableDealt,
    TableJoined,
    TableOpened,
    TableSeeded,
)
from services.eventlog import EventStore, StoreTransaction
from services.kernel.projections import Snapshot, read_tables


@dataclass(frozen=True, slots=True)
class TableRow:
    """One table as the log has it so far."""

    table_id: str
    player: str
    venue: str
    commitment: str
    status: str  # "opened", "joined" (a duel's second key seated), "dealt", "closed", "abandoned"
    #: Actions taken at the table (the next move's ply).
    plies: int
    #: Events of the table's stream (its version).
    events: int
    #: When its last event was recorded (a pending drill's clock starts there).
    last_at: datetime
    verdict: str | None = None
    #: A duel's second key (seat 1), once joined.
    opponent: str | None = None
    #: At a duel, the key whose seed is in while the other's is awaited.
    seeded: str | None = None


@dataclass
class TablesChanges:
    """The rows some events leave, by table, and the join codes of duels opened."""

    rows: dict[str, TableRow] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)


COLUMNS = (
    "table_id, player, venue, commitment, status, plies, events, last_at, verdict, opponent, seeded"
)

WRITE = f"""
INSERT INTO tables.tables AS t ({COLUMNS})
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[],
                     $7::int[], $8::timestamptz[], $9::text[], $10::text[], $11::text[])
ON CONFLICT (table_id) DO UPDATE SET
    status = excluded.status, plies = excluded.plies, events = excluded.events,
    last_at = excluded.last_at, verdict = excluded.verdict, opponent = excluded.opponent,
    seeded = excluded.seeded
"""  # noqa: S608 (constant columns)
#: A duel's code, the newest duel's should two waiting duels ever draw the same 40 bits.
WRITE_CODES = """
INSERT INTO tables.duel_codes (code, table_id)
SELECT * FROM unnest($1::text[], $2::text[])
ON CONFLICT (code) DO UPDATE SET table_id = excluded.table_id
"""


class TablesProjection:
    """The ``tables.tables`` rows as a function of the tables log."""

    name = "tables"

    def empty(self) -> TablesChanges:
        return TablesChanges()

    def project(self, event: Event, into: TablesChanges) -> None:
        if event.type in TABLES_REWARD_EVENTS:  # a table's reward: its row does not change
            return
        body = parse_event(event, TABLES_EVENTS)
        self.apply(into.rows, body, event.recorded_at)

    @staticmethod
    def apply(rows: dict[str, TableRow], body: EventBody, at: datetime) -> TableRow:
        """Change the row of ``body``'s table in ``rows`` as the event recorded ``at`` does;
        the row it leaves."""
        if isinstance(body, TableOpened):
            row = TableRow(
                body.table,
                body.request.player,
                body.request.venue,
                body.commitment,
                "opened",
                0,
                1,
                at,
            )
        else:
            if not isinstance(
                body,
                TableJoined | TableSeeded | TableDealt | MovePlayed | TableClosed | TableAbandoned,
            ):
                raise TypeError(f"not a tables event: {type(body).__name__}")
            before = rows[body.table]
            row = replace(before, events=before.events + 1, last_at=at)
            if isinstance(body, TableJoined):
                row = replace(row, status="joined", opponent=body.request.player)
            elif isinstance(body, TableSeeded):
                row = replace(row, seeded=body.request.player)
            elif isinstance(body, TableDealt):
                row = replace(row, status="dealt", seeded=None)
            elif isinstance(body, MovePlayed):
                row = replace(row, plies=row.plies + len(body.actions))
            elif isinstance(body, TableClosed):
                row = replace(row, status="closed", verdict=body.verdict)
            else:
                row = replace(row, status="abandoned")
        rows[row.table_id] = row
        return row

    async def write(self, tx: StoreTransaction, changes: TablesChanges) -> None:
        if changes.codes:
            await tx.execute(WRITE_CODES, list(changes.codes), list(changes.codes.values()))
        if not changes.rows:
            return
        rows = list(changes.rows.values())
        done = [r.table_id for r in rows if r.status in ("closed", "abandoned")]
        if done:  # the code's table has ended (a joined duel's answers its joiner again)
            await tx.execute("DELETE FROM tables.duel_codes WHERE table_id = ANY($1::text[])", done)
        await tx.execute(
            WRITE,
            [r.table_id for r in rows],
            [r.player for r in rows],
            [r.venue for r in rows],
            [r.commitment for r in rows],
            [r.status for r in rows],
            [r.plies for r in rows],
            [r.events for r in rows],
            [r.last_at for r in rows],
            [r.verdict for r in rows],
            [r.opponent for r in rows],
            [r.seeded for r in rows],
        )

    async def reset(self, tx: StoreTransaction) -> None:
        await tx.execute("DELETE FROM tables.tables")

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        every = f"SELECT {COLUMNS} FROM tables.tables"  # noqa: S608 (the columns: a constant)
        return await read_tables(tx, {"tables.tables": every})


PROJECTION = TablesProjection()


async def read_rows(
    reader: EventStore | StoreTransaction, tables: Sequence[str]
) -> dict[str, TableRow]:
    """The rows of ``tables`` (those the log has opened)."""
    found = await reader.fetch(
        f"SELECT {COLUMNS} FROM tables.tables WHERE table_id = ANY($1::text[])",  # noqa: S608
        sorted(set(tables)),
    )
    return {row[0]: TableRow(*row) for row in found}
