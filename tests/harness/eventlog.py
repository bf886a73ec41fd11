"""Fixtures for the event store: a migrated database, a pool and the mint's log."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from ledger.keys import SigningKey
from services.eventlog import PostgresEventStore

ORIGIN = "league.test/mint"


@pytest.fixture
async def migrated_url(database_url: str) -> str:
    """The test's own database, every migration applied (it is a copy of the session's
    template, tests/conftest.py)."""
    return database_url


@pytest.fixture
async def pool(migrated_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(migrated_url, min_size=1, max_size=10)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def key() -> SigningKey:
    return SigningKey(bytes(range(32)))


@pytest.fixture
def log(pool: asyncpg.Pool, key: SigningKey) -> PostgresEventStore:
    return PostgresEventStore(pool, schema="mint", origin=ORIGIN, key=key)
