"""The mint's tables (schema ``mint``), read and written in SQL through its event store.

``runs``, ``owned`` and ``allowances`` are the projection (``services.mint.projection``
derives them from the log alone); ``league`` binds the database to one league; and
``stamp_requests`` keeps each answered request, refusals included, so a replay gets the same
answer: it records answers, not the log, and a rebuild leaves it alone (the kernel's answered
layer reads and writes it, ``services.kernel.answered``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson

from ledger.manifest import LeagueManifest
from ledger.print_runs import RUN_FINISHES
from services.eventlog import EventLogError, EventStore, StoreTransaction
from services.kernel import founding
from services.kernel.answered import Answers, Key, Quota, RequestTables, Words


@dataclass(frozen=True, slots=True)
class RunRow:
    title: str
    finish: str
    first_number: int
    size: int
    stamped: int


async def bind_league(store: EventStore, manifest: LeagueManifest) -> None:
    """On first start, record the league and its runs; afterwards, refuse any other league."""

    async def first(tx: StoreTransaction) -> None:
        runs = [
            (run.title, finish, run.first_number(finish), run.size(finish))
            for run in manifest.print_runs.runs
            for finish in RUN_FINISHES
        ]
        await tx.execute(
            "INSERT INTO mint.runs (title, finish, first_number, size) "
            "SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[])",
            *[[run[i] for run in runs] for i in range(4)],
        )

    await founding.bind_league(store, manifest, first)


async def runs(reader: EventStore | StoreTransaction) -> list[RunRow]:
    rows = await reader.fetch("SELECT title, finish, first_number, size, stamped FROM mint.runs")
    return [RunRow(*row) for row in rows]


#: Where the mint keeps its answered requests (stamps, and the treasury's orders under the
#: treasury's key) and counts each key's prints stamped a day (the kernel's answered layer).
REQUESTS = RequestTables("mint.stamp_requests", "mint.allowances", "stamped")


@dataclass(frozen=True, slots=True)
class GroupState:
    """What a stamping transaction reads under the log lock before it draws."""

    #: Prints stamped so far, by (title, finish), for the titles the group presents.
    stamped: dict[tuple[str, str], int]
    #: Already answered requests (by owner key, request id) and those the group answers.
    answers: Answers[Any]
    #: Prints stamped today by each presenting key.
    quota: Quota


#: The reads of a stamping transaction as one statement (one round trip under the lock).
READ_GROUP = f"""
SELECT
    (SELECT coalesce(json_agg(json_build_array(title, finish, stamped)), '[]')
     FROM mint.runs WHERE title = ANY($1::text[])),{REQUESTS.columns(2)}
"""  # noqa: S608 (the mint's own tables)


async def read_group(
    tx: StoreTransaction,
    titles: Iterable[str],
    request_keys: Sequence[Key],
    now: datetime,
    words: Words,
    per_day: int,
) -> GroupState:
    """The run counters, prior answers and today's allowances a group of requests needs
    (``words`` name its requests, ``per_day`` is the allowance: ``services.kernel.answered``)."""
    row = await tx.fetchrow(
        READ_GROUP, sorted(set(titles)), *REQUESTS.arguments(request_keys, now.date())
    )
    if row is None:  # a SELECT without FROM returns exactly one row: never, from PostgreSQL
        raise EventLogError("the stamping transaction's group read returned no row")
    runs_json, answered, used = row
    return GroupState(
        stamped={(title, finish): n for title, finish, n in orjson.loads(runs_json)},
        answers=REQUESTS.answers_of(answered, now, words),
        quota=REQUESTS.quota_of(used, now, words, per_day),
    )


async def print_versions(tx: StoreTransaction, serials: Iterable[str]) -> dict[str, int]:
    """How many events of each print's stream the mint's log holds (absent: none)."""
    rows = await tx.fetch(
        "SELECT w.s, (SELECT e.stream_version FROM mint.events e WHERE e.stream = 'print/' || w.s"
        " ORDER BY e.stream_version DESC LIMIT 1) FROM unnest($1::text[]) AS w(s)",
        sorted(set(serials)),
    )
    return {row[0]: row[1] for row in rows if row[1] is not None}


async def used_allowances(
    store: EventStore, owner_keys: Iterable[str], day: date
) -> dict[str, int]:
    """Prints stamped on ``day`` by each key (keys with none are absent)."""
    rows = await store.fetch(
        "SELECT owner_key, stamped FROM mint.allowances WHERE owner_key = ANY($1::text[]) "
        "AND day = $2",
        sorted(set(owner_keys)),
        day,
    )
    return {row[0]: row[1] for row in rows}


async def owned_by_address(
    store: EventStore, address: str
) -> dict[str, list[tuple[str, str, int]]]:
    """Per key of ``address``: (title, finish, owned) rows."""
    rows = await store.fetch(
        "SELECT owner_key, title, finish, owned FROM mint.owned WHERE address = $1 "
        "ORDER BY owner_key, title, finish",
        address,
    )
    found: dict[str, list[tuple[str, str, int]]] = {}
    for row in rows:
        found.setdefault(row[0], []).append((row[1], row[2], row[3]))
    return found


def columns(counts: Counter[Any], width: int) -> list[list[Any]]:
    """A counter keyed by ``width``-tuples as ``width`` key columns plus a count column."""
    keys = list(counts)
    return [[key[i] for key in keys] for i in range(width)] + [list(counts.values())]
