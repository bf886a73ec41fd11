"""The treasury's tables (schema ``treasury``), read and written in SQL through its event store.

``supply``, ``notes`` and ``faucet`` are the projection (``services.treasury.projection``);
``league`` binds the database to one league; ``claims`` keeps each answered claim so that a
replay gets the same answer (see migration 0006).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ledger.manifest import LeagueManifest
from services.eventlog import EventLogError, EventStore, StoreTransaction
from services.kernel.errors import LeagueError


async def bind_league(store: EventStore, manifest: LeagueManifest) -> None:
    """On first start, record the league and its note set; afterwards, refuse any other."""
    async with store.transaction() as tx:
        # Under the log's lock: workers starting together bind it once (the first), and
        # the others find it bound (FOR UPDATE locks no row that is not there yet).
        await tx.lock()
        row = await tx.fetchrow("SELECT league, manifest FROM treasury.league FOR UPDATE")
        if row is None:
            await tx.execute(
                "INSERT INTO treasury.league (league, manifest) VALUES ($1, $2)",
                manifest.league,
                manifest.hash_text(),
            )
            issues = manifest.note_set.issues
            await tx.execute(
                "INSERT INTO treasury.supply (denomination, notes) "
                "SELECT * FROM unnest($1::int[], $2::int[])",
                [issue.denomination for issue in issues],
                [issue.count for issue in issues],
            )
            return
        if (row["league"], row["manifest"]) != (manifest.league, manifest.hash_text()):
            raise LeagueError(
                f"this database holds the treasury of league {row['league']} (manifest "
                f"{row['manifest']}), not {manifest.league} ({manifest.hash_text()})"
            )


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


@dataclass(frozen=True, slots=True)
class GroupState:
    """What a claiming transaction reads under the log lock before it issues."""

    supply: dict[int, SupplyRow]
    #: Stored (hash, answer) of already answered claims, by (owner key, request id).
    answered: dict[tuple[str, str], tuple[bytes, dict[str, Any]]]
    #: Marks claimed today by each claiming key (keys with none are absent).
    claimed: dict[str, int]


#: The three reads of a claiming transaction as one statement (one round trip under the lock).
READ_GROUP = """
SELECT
    (SELECT coalesce(json_agg(json_build_array(denomination, notes, first_issued,
                                               circulating)), '[]')
     FROM treasury.supply),
    (SELECT coalesce(json_agg(json_build_array(c.owner_key, c.request_id,
                                               encode(c.request_hash, 'hex'), c.answer)), '[]')
     FROM treasury.claims c JOIN unnest($1::text[], $2::text[]) AS w(owner_key, id)
     ON c.owner_key = w.owner_key AND c.request_id = w.id),
    (SELECT coalesce(json_agg(json_build_array(owner_key, marks)), '[]')
     FROM treasury.faucet WHERE owner_key = ANY($3::text[]) AND day = $4)
"""


async def read_group(
    tx: StoreTransaction, request_keys: Sequence[tuple[str, str]], day: date
) -> GroupState:
    """The supply counters, prior answers and today's faucet use a group of claims needs."""
    row = await tx.fetchrow(
        READ_GROUP,
        [k for k, _ in request_keys],
        [i for _, i in request_keys],
        sorted({k for k, _ in request_keys}),
        day,
    )
    if row is None:  # a SELECT without FROM returns exactly one row: never, from PostgreSQL
        raise EventLogError("the claiming transaction's group read returned no row")
    supply_json, answered, claimed = row
    return GroupState(
        supply={d: SupplyRow(d, n, f, c) for d, n, f, c in json.loads(supply_json)},
        answered={
            (key, rid): (bytes.fromhex(digest), answer)
            for key, rid, digest, answer in json.loads(answered)
        },
        claimed=dict(json.loads(claimed)),
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


#: Answered claims of one transaction: (owner key, request id, request hash, answer JSON).
AnsweredClaim = tuple[str, str, bytes, str]


async def record_answers(tx: StoreTransaction, answers: Sequence[AnsweredClaim]) -> None:
    """Keep the answers of a transaction's claims (a replay reads them back)."""
    if answers:
        await tx.execute(
            "INSERT INTO treasury.claims (owner_key, request_id, request_hash, answer,"
            " answered_at) SELECT w.k, w.i, w.h, w.a::jsonb, now()"
            " FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[]) AS w(k, i, h, a)",
            *[[answer[i] for answer in answers] for i in range(4)],
        )
