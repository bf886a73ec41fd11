"""The treasury's tables (schema ``treasury``), read and written in SQL through its event store.

``supply``, ``notes`` and ``faucet`` are the projection (``services.treasury.projection``);
``league`` binds the database to one league; ``claims`` keeps each answered claim so that a
replay gets the same answer (see migration 0006; the kernel's answered-requests layer reads and
writes it, ``services.kernel.answered``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from ledger.manifest import LeagueManifest
from services.eventlog import EventLogError, EventStore, StoreTransaction
from services.kernel import founding
from services.kernel.answered import Answers, Key, Quota, RequestTables, Words


async def bind_league(store: EventStore, manifest: LeagueManifest) -> None:
    """On first start, record the league and its note set; afterwards, refuse any other."""

    async def first(tx: StoreTransaction) -> None:
        issues = manifest.note_set.issues
        await tx.execute(
            "INSERT INTO treasury.supply (denomination, notes) "
            "SELECT * FROM unnest($1::int[], $2::int[])",
            [issue.denomination for issue in issues],
            [issue.count for issue in issues],
        )

    await founding.bind_league(store, manifest, first)


@dataclass(frozen=True, slots=True)
class SupplyRow:
    """One denomination's counters."""

    denomination: int
    notes: int
    first_issued: int
    circulating: int

    @property
    def reserve(self) -> int:
        return self.notes - self.circulating


async def supply(reader: EventStore | StoreTransaction) -> dict[int, SupplyRow]:
    rows = await reader.fetch(
        "SELECT denomination, notes, first_issued, circulating FROM treasury.supply"
    )
    return {row[0]: SupplyRow(*row) for row in rows}


#: Where the treasury keeps its answered claims and counts each key's marks claimed a day
#: (the kernel's answered layer).
REQUESTS = RequestTables("treasury.claims", "treasury.faucet", "marks")


@dataclass(frozen=True, slots=True)
class GroupState:
    """What a claiming transaction reads under the log lock before it issues."""

    supply: dict[int, SupplyRow]
    #: Already answered claims (by owner key, request id) and those the group decides.
    answers: Answers[Any]
    #: Marks claimed today by each claiming key.
    quota: Quota


#: The reads of a claiming transaction as one statement (one round trip under the lock).
READ_GROUP = f"""
SELECT
    (SELECT coalesce(json_agg(json_build_array(denomination, notes, first_issued,
                                               circulating)), '[]')
     FROM treasury.supply),{REQUESTS.columns(1)}
"""  # noqa: S608 (the treasury's own tables)


async def read_group(
    tx: StoreTransaction,
    request_keys: Sequence[Key],
    now: datetime,
    words: Words,
    per_day: int,
) -> GroupState:
    """The supply counters, prior answers and today's faucet use a group of claims needs
    (``words`` name its claims, ``per_day`` is the faucet's marks: ``services.kernel.answered``)."""
    row = await tx.fetchrow(READ_GROUP, *REQUESTS.arguments(request_keys, now.date()))
    if row is None:  # a SELECT without FROM returns exactly one row: never, from PostgreSQL
        raise EventLogError("the claiming transaction's group read returned no row")
    supply_json, answered, claimed = row
    return GroupState(
        supply={d: SupplyRow(d, n, f, c) for d, n, f, c in orjson.loads(supply_json)},
        answers=REQUESTS.answers_of(answered, now, words),
        quota=REQUESTS.quota_of(claimed, now, words, per_day),
    )


#: The lowest-numbered returned notes of each denomination, as many as asked.
RETURNED = """
SELECT n.denomination, n.number, n.issue
FROM unnest($1::int[], $2::int[]) AS w(d, k)
CROSS JOIN LATERAL (
    SELECT denomination, number, issue FROM treasury.notes
    WHERE denomination = w.d AND issued_to IS NULL ORDER BY number LIMIT w.k
) AS n
ORDER BY n.denomination, n.number
"""


async def returned_notes(
    tx: StoreTransaction, wanted: Counter[int]
) -> dict[int, list[tuple[int, int]]]:
    """Up to ``wanted[d]`` returned notes of each denomination ``d``, lowest number first, as
    (number, issue of the last issue) pairs."""
    found: dict[int, list[tuple[int, int]]] = {d: [] for d in wanted}
    wanted = +wanted
    if wanted:
        rows = await tx.fetch(RETURNED, list(wanted), list(wanted.values()))
        for denomination, number, issue in rows:
            found[denomination].append((number, issue))
    return found
