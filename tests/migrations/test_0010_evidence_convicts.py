"""Migration 0010_evidence_convicts: a deployed witness's ``unproven`` records (which an
outsider could plant, and which failed every audit for good) are deleted, and ``kind`` holds
only evidence that convicts by itself (docs/eventlog.md, "Witnesses")."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from migrations import SCHEMAS
from services.eventlog.migrate import upgrade

INSERT = (
    "INSERT INTO {s}.witness_evidence (origin, kind, reason, cosigned, submitted, "
    "cosigned_root, submitted_root, old_size, proof) "
    "VALUES ('league.test/mint', $1, 'test', 'a', 'b', $2, $3, 3, '{{}}')"
)


async def test_unproven_records_go_and_cannot_come_back(empty_database_url: str) -> None:
    """At 0009 every schema holds a fork and an unproven record; after the upgrade only the
    fork is left, and an unproven record is refused by the kind's check."""
    await asyncio.to_thread(upgrade, empty_database_url, "0009_print_returns")
    conn = await asyncpg.connect(empty_database_url)
    try:
        for schema in SCHEMAS:
            insert = INSERT.format(s=schema)
            await conn.execute(insert, "fork", b"\1" * 32, b"\2" * 32)
            await conn.execute(insert, "unproven", b"\1" * 32, b"\3" * 32)
        await asyncio.to_thread(upgrade, empty_database_url)
        for schema in SCHEMAS:
            kinds = await conn.fetch(f"SELECT kind FROM {schema}.witness_evidence")  # noqa: S608
            assert [r[0] for r in kinds] == ["fork"]
            with pytest.raises(asyncpg.CheckViolationError):
                await conn.execute(INSERT.format(s=schema), "unproven", b"\1" * 32, b"\4" * 32)
    finally:
        await conn.close()
