"""The alembic migrations create one event-log schema per service, idempotently."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from migrations import SCHEMAS
from services.eventlog.migrate import head_revision, sqlalchemy_url, upgrade

TABLES = {"checkpoints", "events", "log_head", "tree_nodes"}


async def test_upgrade_creates_every_service_schema(empty_database_url: str) -> None:
    """After upgrade each of mint, treasury, notary holds the four log tables and a head row."""
    await asyncio.to_thread(upgrade, empty_database_url)
    await asyncio.to_thread(upgrade, empty_database_url)  # a second run is a no-op
    conn = await asyncpg.connect(empty_database_url)
    try:
        for schema in SCHEMAS:
            rows = await conn.fetch(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
                schema,
            )
            assert {r[0] for r in rows} >= TABLES
            head = await conn.fetchrow(f"SELECT size, edge FROM {schema}.log_head")  # noqa: S608
            assert (head["size"], head["edge"]) == (0, [])
        assert await conn.fetchval("SELECT version_num FROM alembic_version") == head_revision()
    finally:
        await conn.close()
    assert set(SCHEMAS) == {"mint", "treasury", "notary"}


def test_database_urls_become_psycopg_urls() -> None:
    """libpq URLs, including the embedded server's socket form, map onto SQLAlchemy+psycopg."""
    socket = "postgresql://postgres:@/postgres?host=/tmp/pg"
    assert sqlalchemy_url(socket) == "postgresql+psycopg://postgres:@/postgres?host=/tmp/pg"
    assert sqlalchemy_url("postgres://u:p@h:5/d") == "postgresql+psycopg://u:p@h:5/d"
    with pytest.raises(ValueError, match="postgresql://"):
        sqlalchemy_url("mysql://x")
