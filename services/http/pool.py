"""The connection pools every service of an app shares (one process, one pool each).

``POOL`` is the primary's: every write, the log's lock, checkpoint signing, following and
witnessing. ``READ_POOL`` is what the read endpoints (feeds, proofs, served checkpoints, the
census, provenance, the treasury's supply, the notary's holders) read from: a streaming
replica's when the operator gives ``DATABASE_READ_URL``, else the primary's pool itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import asyncpg
from aiohttp import web

#: The connection pool every service of an app shares: the primary's.
POOL = web.AppKey("pool", asyncpg.Pool)
#: The pool the read endpoints use: a streaming replica's, else ``POOL`` itself.
READ_POOL = web.AppKey("read_pool", asyncpg.Pool)

#: A cleanup context: code before its ``yield`` runs at start-up, after it at shutdown.
CleanupContext = Callable[[web.Application], AsyncIterator[None]]

#: Connections the shared pool keeps open at most (the read pool too).
POOL_MAX_SIZE = 10


def pool_context(database_url: str, read_url: str | None = None) -> CleanupContext:
    """A cleanup context that opens ``app[POOL]`` (and ``app[READ_POOL]`` over ``read_url``,
    else the same pool) at start-up and closes them at shutdown."""

    async def open_pool(app: web.Application) -> AsyncIterator[None]:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=POOL_MAX_SIZE)
        app[POOL] = pool
        try:
            reads = pool
            if read_url:
                reads = await asyncpg.create_pool(read_url, min_size=1, max_size=POOL_MAX_SIZE)
            app[READ_POOL] = reads
            try:
                yield
            finally:
                if reads is not pool:
                    await reads.close()
        finally:
            await pool.close()

    return open_pool
