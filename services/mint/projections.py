"""The mint's projection tables (schema ``mint``), read and written in SQL.

Writes happen inside the event-log transaction that appends the stamps, so a projection never
disagrees with the log; reads go straight to the pool.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import asyncpg

from ledger.manifest import LeagueManifest
from ledger.print_runs import RUN_FINISHES
from services.league.errors import LeagueError

#: Takes the log's head lock (the event store takes the same row lock on its first append in
#: the transaction) and reads the next seq: certificates name their event index before append.
NEXT_SEQ = "SELECT size FROM mint.log_head FOR UPDATE"


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


async def runs_of(conn: asyncpg.Connection, titles: Iterable[str]) -> dict[tuple[str, str], RunRow]:
    rows = await conn.fetch(
        "SELECT title, finish, first_number, size, stamped FROM mint.runs "
        "WHERE title = ANY($1::text[])",
        sorted(set(titles)),
    )
    return {(row[0], row[1]): RunRow(*row) for row in rows}


async def prior_request(
    conn: asyncpg.Connection, owner_key: str, request_id: str
) -> tuple[bytes, list[dict[str, Any]]] | None:
    row = await conn.fetchrow(
        "SELECT request_hash, answer::text FROM mint.stamp_requests "
        "WHERE owner_key = $1 AND request_id = $2",
        owner_key,
        request_id,
    )
    return None if row is None else (bytes(row[0]), json.loads(row[1]))


async def used_allowance(conn: asyncpg.Connection | asyncpg.Pool, owner_key: str, day: date) -> int:
    used = await conn.fetchval(
        "SELECT stamped FROM mint.allowances WHERE owner_key = $1 AND day = $2", owner_key, day
    )
    return used or 0


async def record_stamps(
    conn: asyncpg.Connection,
    *,
    owner_key: str,
    address: str,
    day: date,
    stamped: Sequence[tuple[str, str]],
) -> None:
    """Count ``stamped`` (title, finish) pairs into the runs, the owner and the allowance."""
    if not stamped:
        return
    counts = Counter(stamped)
    titles = [t for t, _ in counts]
    finishes = [f for _, f in counts]
    numbers = list(counts.values())
    await conn.execute(
        "UPDATE mint.runs r SET stamped = r.stamped + w.n "
        "FROM unnest($1::text[], $2::text[], $3::int[]) AS w(title, finish, n) "
        "WHERE r.title = w.title AND r.finish = w.finish",
        titles,
        finishes,
        numbers,
    )
    await conn.execute(
        "INSERT INTO mint.owned (owner_key, address, title, finish, owned) "
        "SELECT $1, $2, w.title, w.finish, w.n "
        "FROM unnest($3::text[], $4::text[], $5::int[]) AS w(title, finish, n) "
        "ON CONFLICT (owner_key, title, finish) DO UPDATE SET owned = mint.owned.owned + "
        "excluded.owned",
        owner_key,
        address,
        titles,
        finishes,
        numbers,
    )
    await conn.execute(
        "INSERT INTO mint.allowances (owner_key, day, stamped) VALUES ($1, $2, $3) "
        "ON CONFLICT (owner_key, day) DO UPDATE SET stamped = mint.allowances.stamped + "
        "excluded.stamped",
        owner_key,
        day,
        len(stamped),
    )


async def record_request(
    conn: asyncpg.Connection,
    *,
    owner_key: str,
    request_id: str,
    request_hash: bytes,
    items: list[dict[str, Any]],
) -> None:
    await conn.execute(
        "INSERT INTO mint.stamp_requests (owner_key, request_id, request_hash, answer, "
        "answered_at) VALUES ($1, $2, $3, $4::jsonb, now())",
        owner_key,
        request_id,
        request_hash,
        json.dumps(items, ensure_ascii=False),
    )


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
