"""The mint's tables (schema ``mint``), read and written in SQL through its event store.

``runs``, ``owned`` and ``allowances`` are the projection (``services.mint.projection``
derives them from the log alone); ``league`` binds the database to one league; and
``stamp_requests`` keeps each answered request, refusals included, so a replay gets the same
answer: it records answers, not the log, and a rebuild leaves it alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ledger.manifest import LeagueManifest
from ledger.print_runs import RUN_FINISHES
from services.eventlog import EventLogError, EventStore, StoreTransaction
from services.kernel.errors import LeagueError


@dataclass(frozen=True, slots=True)
class RunRow:
    title: str
    finish: str
    first_number: int
    size: int
    stamped: int


async def bind_league(store: EventStore, manifest: LeagueManifest) -> None:
    """On first start, record the league and its runs; afterwards, refuse any other league."""
    async with store.transaction() as tx:
        # Under the log's lock: workers starting together bind it once (the first), and
        # the others find it bound (FOR UPDATE locks no row that is not there yet).
        await tx.lock()
        row = await tx.fetchrow("SELECT league, manifest FROM mint.league FOR UPDATE")
        if row is None:
            await tx.execute(
                "INSERT INTO mint.league (league, manifest) VALUES ($1, $2)",
                manifest.league,
                manifest.hash_text(),
            )
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
            return
        if (row["league"], row["manifest"]) != (manifest.league, manifest.hash_text()):
            raise LeagueError(
                f"this database holds the mint of league {row['league']} (manifest "
                f"{row['manifest']}), not {manifest.league} ({manifest.hash_text()})"
            )


async def runs(reader: EventStore | StoreTransaction) -> list[RunRow]:
    rows = await reader.fetch("SELECT title, finish, first_number, size, stamped FROM mint.runs")
    return [RunRow(*row) for row in rows]


@dataclass(frozen=True, slots=True)
class GroupState:
    """What a stamping transaction reads under the log lock before it draws."""

    #: Prints stamped so far, by (title, finish), for the titles the group presents.
    stamped: dict[tuple[str, str], int]
    #: Stored (hash, answer items) of already answered requests, by (owner key, request id).
    answered: dict[tuple[str, str], tuple[bytes, list[dict[str, Any]]]]
    #: Prints stamped today by each presenting key (keys with none are absent).
    used: dict[str, int]


#: The three reads of a stamping transaction as one statement (one round trip under the lock).
READ_GROUP = """
SELECT
    (SELECT coalesce(json_agg(json_build_array(title, finish, stamped)), '[]')
     FROM mint.runs WHERE title = ANY($1::text[])),
    (SELECT coalesce(json_agg(json_build_array(s.owner_key, s.request_id,
                                               encode(s.request_hash, 'hex'), s.answer)), '[]')
     FROM mint.stamp_requests s JOIN unnest($2::text[], $3::text[]) AS w(owner_key, id)
     ON s.owner_key = w.owner_key AND s.request_id = w.id),
    (SELECT coalesce(json_agg(json_build_array(owner_key, stamped)), '[]')
     FROM mint.allowances WHERE owner_key = ANY($4::text[]) AND day = $5)
"""


async def read_group(
    tx: StoreTransaction,
    titles: Iterable[str],
    request_keys: Sequence[tuple[str, str]],
    day: date,
) -> GroupState:
    """The run counters, prior answers and today's allowances a group of requests needs."""
    row = await tx.fetchrow(
        READ_GROUP,
        sorted(set(titles)),
        [k for k, _ in request_keys],
        [i for _, i in request_keys],
        sorted({k for k, _ in request_keys}),
        day,
    )
    if row is None:  # a SELECT without FROM returns exactly one row: never, from PostgreSQL
        raise EventLogError("the stamping transaction's group read returned no row")
    runs_json, answered, used = row
    return GroupState(
        stamped={(title, finish): n for title, finish, n in json.loads(runs_json)},
        answered={
            (key, rid): (bytes.fromhex(digest), items)
            for key, rid, digest, items in json.loads(answered)
        },
        used=dict(json.loads(used)),
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


#: Answered requests of one transaction: (owner key, request id, request hash, answer JSON).
AnsweredRequest = tuple[str, str, bytes, str]


async def record_answers(tx: StoreTransaction, answers: Sequence[AnsweredRequest]) -> None:
    """Keep the answers of a transaction's requests (a replay reads them back)."""
    if answers:
        await tx.execute(
            "INSERT INTO mint.stamp_requests (owner_key, request_id, request_hash, answer,"
            " answered_at) SELECT w.k, w.i, w.h, w.a::jsonb, now()"
            " FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[]) AS w(k, i, h, a)",
            *[[answer[i] for answer in answers] for i in range(4)],
        )


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
