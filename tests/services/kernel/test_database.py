"""The test database fixture and the league's database resolution."""

from __future__ import annotations

import asyncpg


async def test_fresh_database_is_real_postgres(database_url: str) -> None:
    """Every database test talks to a real PostgreSQL, in a database of its own."""
    conn = await asyncpg.connect(database_url)
    try:
        version = await conn.fetchval("SHOW server_version_num")
        tables = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        )
    finally:
        await conn.close()
    assert int(version) >= 140000
    assert tables == 0
