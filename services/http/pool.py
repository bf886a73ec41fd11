"""The connection pools every service of an app shares (one process, one pool each).

``POOL`` is the primary's: every write, the log's lock, checkpoint signing, following and
witnessing. ``READ_POOL`` is what the read endpoints (feeds, proofs, served checkpoints, the
census, provenance, the treasury's supply, the notary's holders) read from: a streaming
replica's when the operator gives ``DATABASE_READ_URL``, else the primary's pool itself.

A connection goes back to its pool without asyncpg's default reset query (``SELECT
pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``, a round trip on every release):
see :func:`keep_session`.
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


async def keep_session(conn: asyncpg.Connection) -> None:
    """What a pool does to a connection given back to it, beyond asyncpg's own cleanup: nothing.

    It is the pool's ``reset`` (``asyncpg.create_pool(reset=...)``, asyncpg 0.30): asyncpg
    calls it in place of :meth:`asyncpg.Connection.reset` and its reset query, a round trip
    on every release. Skipping that query is safe because:

    - a transaction left open is still ended: before calling it asyncpg always runs its own
      cleanup (``Connection._reset``), which rolls back a transaction in progress (an
      ``async with conn.transaction()`` has already committed or rolled back by then, so
      only a connection given back mid-transaction pays that round trip) and drops the
      connection's ``add_listener``/``add_log_listener`` callbacks; a connection whose
      cleanup fails is terminated, never pooled;
    - cursors are only opened inside transactions here (WITHOUT HOLD, so closed with them);
    - no code borrowing a pooled connection leaves its session changed: every ``SET`` is
      ``SET TRANSACTION`` or ``SET LOCAL``, the log's lock is a row lock held by a
      transaction, the election of a log's leader holds its session advisory lock on a
      connection of its own outside the pools (``services/kernel/leadership.py``), and the
      relay of checkpoint notifications that ``LISTEN``s on a pooled connection removes its
      listeners (``UNLISTEN``) before giving it back (``services/eventlog/signals.py``).
      Code that ever needs session state on a pooled connection must undo it itself, the
      same way (``tests/services/http/test_pool.py`` pins what the pools guarantee).
    """
    del conn  # nothing to send: see above


async def new_pool(dsn: str) -> asyncpg.Pool:
    """A connection pool over ``dsn`` as the services use it: at most :data:`POOL_MAX_SIZE`
    connections, given back without a reset round trip (:func:`keep_session`)."""
    return await asyncpg.create_pool(dsn, min_size=1, max_size=POOL_MAX_SIZE, reset=keep_session)


def pool_context(database_url: str, read_url: str | None = None) -> CleanupContext:
    """A cleanup context that opens ``app[POOL]`` (and ``app[READ_POOL]`` over ``read_url``,
    else the same pool) at start-up and closes them at shutdown."""

    async def open_pool(app: web.Application) -> AsyncIterator[None]:
        pool = await new_pool(database_url)
        app[POOL] = pool
        try:
            reads = pool
            if read_url:
                reads = await new_pool(read_url)
            app[READ_POOL] = reads
            try:
                yield
            finally:
                if reads is not pool:
                    await reads.close()
        finally:
            await pool.close()

    return open_pool
