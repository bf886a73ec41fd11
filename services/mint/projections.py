"""The mint's projection tables (schema ``mint``), read and written in SQL.

Writes happen inside the event-log transaction that appends the stamps, so a projection never
disagrees with the log; reads go straight to the pool.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import asyncpg

from ledger.manifest import LeagueManifest
from ledger.print_runs import RUN_FINISHES
from services.league.errors import LeagueError


@dataclass(frozen=True, slots=True)
class RunRow:
    title: str
    finish: str
    first_number: int
    size: int
    stamped: int


async def bind_league(conn: asyncpg.Connection, manifest: LeagueManifest) -> None:
    """On first start, record the league and its runs; afterwards, refuse any other league."""
    async with conn.transaction():
        row = await conn.fetchrow("SELECT league, manifest FROM mint.league FOR UPDATE")
        if row is None:
            await conn.execute(
                "INSERT INTO mint.league (league, manifest) VALUES ($1, $2)",
                manifest.league,
                manifest.hash_text(),
            )
            await conn.executemany(
                "INSERT INTO mint.runs (title, finish, first_number, size) VALUES ($1, $2, $3, $4)",
                [
                    (run.title, finish, run.first_number(finish), run.size(finish))
                    for run in manifest.print_runs.runs
                    for finish in RUN_FINISHES
                ],
            )
            return
        if (row["league"], row["manifest"]) != (manifest.league, manifest.hash_text()):
            raise LeagueError(
                f"this database holds the mint of league {row['league']} (manifest "
                f"{row['manifest']}), not {manifest.league} ({manifest.hash_text()})"
            )


async def runs(conn: asyncpg.Connection | asyncpg.Pool) -> list[RunRow]:
    rows = await conn.fetch("SELECT title, finish, first_number, size, stamped FROM mint.runs")
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
    conn: asyncpg.Connection,
    titles: Iterable[str],
    request_keys: Sequence[tuple[str, str]],
    day: date,
) -> GroupState:
    """The run counters, prior answers and today's allowances a group of requests needs."""
    runs, answered, used = await conn.fetchrow(
        READ_GROUP,
        sorted(set(titles)),
        [k for k, _ in request_keys],
        [i for _, i in request_keys],
        sorted({k for k, _ in request_keys}),
        day,
    )
    return GroupState(
        stamped={(title, finish): n for title, finish, n in json.loads(runs)},
        answered={
            (key, rid): (bytes.fromhex(digest), items)
            for key, rid, digest, items in json.loads(answered)
        },
        used=dict(json.loads(used)),
    )


async def used_allowances(
    conn: asyncpg.Connection | asyncpg.Pool, owner_keys: Iterable[str], day: date
) -> dict[str, int]:
    """Prints stamped on ``day`` by each key (keys with none are absent)."""
    rows = await conn.fetch(
        "SELECT owner_key, stamped FROM mint.allowances WHERE owner_key = ANY($1::text[]) "
        "AND day = $2",
        sorted(set(owner_keys)),
        day,
    )
    return {row[0]: row[1] for row in rows}


@dataclass
class GroupRecord:
    """What one stamping transaction adds to the projections, summed before it is written."""

    runs: Counter[tuple[str, str]] = field(default_factory=Counter)
    owned: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    allowances: Counter[str] = field(default_factory=Counter)
    requests: list[tuple[str, str, bytes, str]] = field(default_factory=list)


#: The four projection writes of one transaction as one statement (one round trip under the
#: log lock); each part is a no-op for empty arrays.
RECORD_GROUP = """
WITH runs AS (
    UPDATE mint.runs r SET stamped = r.stamped + w.n
    FROM unnest($1::text[], $2::text[], $3::int[]) AS w(title, finish, n)
    WHERE r.title = w.title AND r.finish = w.finish
), owned AS (
    INSERT INTO mint.owned (owner_key, address, title, finish, owned)
    SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[])
    ON CONFLICT (owner_key, title, finish)
    DO UPDATE SET owned = mint.owned.owned + excluded.owned
), allowances AS (
    INSERT INTO mint.allowances (owner_key, day, stamped)
    SELECT w.owner_key, $11, w.n FROM unnest($9::text[], $10::int[]) AS w(owner_key, n)
    ON CONFLICT (owner_key, day)
    DO UPDATE SET stamped = mint.allowances.stamped + excluded.stamped
)
INSERT INTO mint.stamp_requests (owner_key, request_id, request_hash, answer, answered_at)
SELECT w.k, w.i, w.h, w.a::jsonb, now()
FROM unnest($12::text[], $13::text[], $14::bytea[], $15::text[]) AS w(k, i, h, a)
"""


async def record_group(conn: asyncpg.Connection, record: GroupRecord, day: date) -> None:
    """Write a transaction's run counters, owned counts, allowances and answered requests."""
    await conn.execute(
        RECORD_GROUP,
        *_columns(record.runs, 2),
        *_columns(record.owned, 4),
        *_columns(record.allowances, 1),
        day,
        *[[request[i] for request in record.requests] for i in range(4)],
    )


def _columns(counts: Counter[Any], width: int) -> list[list[Any]]:
    """A counter keyed by ``width``-tuples (or plain values when ``width`` is 1) as ``width``
    key columns plus a count column."""
    keys = [key if width > 1 else (key,) for key in counts]
    return [[key[i] for key in keys] for i in range(width)] + [list(counts.values())]


async def owned_by_address(
    pool: asyncpg.Pool, address: str
) -> dict[str, list[tuple[str, str, int]]]:
    """Per key of ``address``: (title, finish, owned) rows."""
    rows = await pool.fetch(
        "SELECT owner_key, title, finish, owned FROM mint.owned WHERE address = $1 "
        "ORDER BY owner_key, title, finish",
        address,
    )
    found: dict[str, list[tuple[str, str, int]]] = {}
    for row in rows:
        found.setdefault(row[0], []).append((row[1], row[2], row[3]))
    return found


async def all_owned(pool: asyncpg.Pool) -> Counter[tuple[str, str, str]]:
    """Every owned count, keyed by (owner key, title, finish)."""
    rows = await pool.fetch("SELECT owner_key, title, finish, owned FROM mint.owned")
    return Counter({(row[0], row[1], row[2]): row[3] for row in rows})
