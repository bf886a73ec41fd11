"""The connection pool every service of an app shares (one process, one pool)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import asyncpg
from aiohttp import web

#: The connection pool every service of an app shares.
POOL = web.AppKey("pool", asyncpg.Pool)

#: A cleanup context: code before its ``yield`` runs at start-up, after it at shutdown.
CleanupContext = Callable[[web.Application], AsyncIterator[None]]

#: Connections the shared pool keeps open at most.
POOL_MAX_SIZE = 10


def pool_context(database_url: str) -> CleanupContext:
    """A cleanup context that opens ``app[POOL]`` at start-up and closes it at shutdown."""

    async def open_pool(app: web.Application) -> AsyncIterator[None]:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=POOL_MAX_SIZE)
        app[POOL] = pool
        try:
            yield
        finally:
            await pool.close()

    return open_pool
