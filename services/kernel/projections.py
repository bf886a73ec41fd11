"""Projections: a service's tables as a pure function of its log, and their rebuild.

A service's :class:`Projection` says what one event changes (``project``, pure: no IO, the
same answer live, in ``league verify`` and in ``league rebuild``), how changes add up, and how
its tables are written, reset and read back. :func:`rebuild` folds the whole log into fresh
tables under the log's lock and reports every row that differs from what was there;
``commit=False`` is the audit: the same fold, rolled back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ledger.leaf import Event
from services.eventlog import EventStore, StoreTransaction

C = TypeVar("C")
#: Events read per page while folding the log.
PAGE = 5000

#: A projection's tables as sets of rows, by table name (what a rebuild compares).
Snapshot = Mapping[str, frozenset[tuple[object, ...]]]


async def read_tables(tx: StoreTransaction, queries: Mapping[str, str]) -> Snapshot:
    """Every row each of ``queries`` reads, by table name: a projection's :meth:`snapshot`
    (bytea read back as bytes, so rows compare by value)."""
    return {
        table: frozenset(
            tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
            for row in await tx.fetch(query)
        )
        for table, query in queries.items()
    }


class Projection(Protocol[C]):
    """One service's projection tables, derived from its log alone."""

    name: str

    def empty(self) -> C:
        """The changes of no event."""
        ...

    def project(self, event: Event, into: C) -> None:
        """Add what ``event`` changes to ``into`` (pure: reads nothing but the event)."""
        ...

    async def write(self, tx: StoreTransaction, changes: C) -> None:
        """Apply ``changes`` to the tables, in the transaction that appends their events."""
        ...

    async def reset(self, tx: StoreTransaction) -> None:
        """Put the tables as they are before the first event."""
        ...

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        """Every row of the tables, for comparison."""
        ...


@dataclass(frozen=True, slots=True)
class TableDifference:
    """Rows of one table that the log does not account for, or that it needs and lacks."""

    table: str
    unexplained: tuple[tuple[object, ...], ...]
    missing: tuple[tuple[object, ...], ...]

    def describe(self, limit: int = 3) -> str:
        parts = [
            f"{self.table}: {len(self.unexplained)} rows the log does not account for, "
            f"{len(self.missing)} rows it needs and the table lacks"
        ]
        for label, rows in (("extra", self.unexplained), ("missing", self.missing)):
            parts.extend(f"{label} {row}" for row in rows[:limit])
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class RebuildReport:
    """What a rebuild (or an audit) found: how many events it folded and what differed."""

    projection: str
    events: int
    rows: int
    differences: tuple[TableDifference, ...] = field(default=())

    @property
    def agrees(self) -> bool:
        return not self.differences


class _RollBack(Exception):
    """Leaves an audit's transaction without committing it."""


async def rebuild(
    store: EventStore, projection: Projection[C], *, commit: bool = True
) -> RebuildReport:
    """Rebuild ``projection`` from ``store``'s whole log under the log's lock, and compare.

    With ``commit=False`` nothing changes: the fresh tables are compared and rolled back.
    """
    report: RebuildReport | None = None
    try:
        async with store.transaction() as tx:
            size = await tx.lock()
            before = await projection.snapshot(tx)
            await projection.reset(tx)
            changes = projection.empty()
            after = -1
            # Appends wait for the lock this transaction holds, so the log's first ``size``
            # events are all committed and no other can appear while they are read.
            while after + 1 < size:
                page = await store.read(after, min(PAGE, size - after - 1))
                if not page:
                    break
                for event in page:
                    projection.project(event, changes)
                after = page[-1].seq
            await projection.write(tx, changes)
            now = await projection.snapshot(tx)
            report = RebuildReport(
                projection=projection.name,
                events=size,
                rows=sum(len(rows) for rows in now.values()),
                differences=_differences(before, now),
            )
            if not commit:
                raise _RollBack
    except _RollBack:
        pass
    if report is None:  # unreachable: the transaction either reported or raised
        raise RuntimeError("rebuild ended without a report")
    return report


def _differences(before: Snapshot, now: Snapshot) -> tuple[TableDifference, ...]:
    found = []
    for table in sorted(set(before) | set(now)):
        old, new = before.get(table, frozenset()), now.get(table, frozenset())
        if old != new:
            found.append(
                TableDifference(
                    table=table,
                    unexplained=tuple(sorted(old - new, key=repr)),
                    missing=tuple(sorted(new - old, key=repr)),
                )
            )
    return tuple(found)
