"""services.http.pool: connections go back to the pools without a reset round trip, and a
connection given back mid-transaction is still rolled back before anyone borrows it again."""

from __future__ import annotations

from services.http.pool import new_pool


async def test_release_sends_nothing_to_the_database(empty_database_url: str) -> None:
    """A connection used and given back costs no query on release (asyncpg's default reset,
    ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``, is one round trip
    per release: on the notary's hot path, one per read)."""
    pool = await new_pool(empty_database_url)
    try:
        sent: list[str] = []
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT 1") == 1
            conn.add_query_logger(lambda logged: sent.append(logged.query))
        assert sent == []
    finally:
        await pool.close()


async def test_a_connection_given_back_in_a_transaction_is_rolled_back(
    empty_database_url: str,
) -> None:
    """A connection released with a transaction open (a handler cancelled mid-way, say) is
    rolled back before it is pooled: the next borrower of that very session sees none of
    the transaction's work and no transaction open."""
    pool = await new_pool(empty_database_url)
    try:
        async with pool.acquire() as conn:
            pid = conn.get_server_pid()
            await conn.execute("BEGIN")
            await conn.execute("CREATE TABLE left_open (x int)")
            assert conn.is_in_transaction()
        async with pool.acquire() as again:
            assert again.get_server_pid() == pid  # the pool hands back the same session
            assert not again.is_in_transaction()
            assert await again.fetchval("SELECT to_regclass('left_open')::text") is None
    finally:
        await pool.close()
