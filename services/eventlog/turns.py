"""Whose turn it is to form a group for a log, among the processes that append to it.

Every worker of a service (``league serve --workers N``) appends to the service's log, and the
log's head lock orders the appends (:mod:`services.eventlog.store`). A worker's writer
(:class:`services.kernel.writer.GroupWriter`) takes the requests waiting *then* waits for that
lock: while another worker's group holds it, the requests that arrive meanwhile wait for the
group after, and every worker's groups come out about 1/N of what one writer would take in
that time. Measured on two workers of the treasury: twice the transactions a purchase, the
same requests spread over half-size groups, and each transaction's fixed cost (its round
trips, its flush, its signing pass) paid twice as often.

A :class:`Turnstile` takes the turn *before* the group is formed: a PostgreSQL session advisory
lock named for the log, on a connection of its own (never a pooled one: a writer holding the
turn must still get a pooled connection for its transaction). A worker waiting for its turn
keeps gathering requests, so its group is everything that arrived while the other worker
wrote, as one writer's would be. Within one process the writers of one log (the treasury's
claims and purchase steps) take turns through an :class:`asyncio.Lock` first, so the process
asks the database for one turn at a time.

A turn costs two round trips a group (the lock, the unlock), so a writer takes turns where its
groups' transactions cost more than that: the treasury's, whose purchase steps and claims read
and write several tables a group (with two workers, bench/treasury.py measured 6-8% less CPU a
claim and a purchase). The mint's and the notary's groups are cheap enough that the round trips
cost more than the larger groups save (the notary's hops in slips of one, two workers: 10% more
CPU a hop), so their writers do not take turns.

The turn is only ever an optimization: correctness is the head lock's. A turnstile that
cannot reach the database (the connection lost, the server restarting), or waits longer than
:data:`TURN_WAIT` (a worker holding the turn stuck), lets the writer go on without a turn and
tries the database again :data:`RETRY_AFTER` seconds later; a turn whose connection fails is
given back by the session's end. A cancelled wait ends the connection, so no process ever
holds a turn it does not know it holds (the server drops a wait whose client has gone, at the
latest when the wait would be granted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import asyncpg

log = logging.getLogger(__name__)

#: The advisory locks' namespace (PostgreSQL's two-key form: namespace, then the log's key);
#: not the leaders' (services/kernel/leadership.py).
TURN_NAMESPACE = 0x5455  # "TU"
#: Seconds a turnstile lets writers go without a turn after the database did not answer it.
RETRY_AFTER = 5.0
#: Seconds a connection, a wait for the turn or its giving back may take before the turnstile
#: gives up on it: a turn held longer is a worker stuck (its loop blocked, its pool starved),
#: a silent one a connection dropped on the way; either way the writers go on without turns.
TURN_WAIT = 5.0

_LOCK = "SELECT pg_advisory_lock($1, hashtext($2))"
_UNLOCK = "SELECT pg_advisory_unlock($1, hashtext($2))"


def turn_key(log_name: str) -> str:
    """The text a log's turn is keyed by (``hashtext`` of it in SQL)."""
    return f"the-window-league/turn/{log_name}"


class Turnstile:
    """The turns of one log's writers, across the processes over ``database_url``."""

    def __init__(self, database_url: str, log_name: str) -> None:
        self.database_url = database_url
        self.log_name = log_name
        self._key = turn_key(log_name)
        self._local = asyncio.Lock()
        self._conn: asyncpg.Connection | None = None
        self._retry_at = 0.0
        self._closed = False
        #: Turns taken through the database (a figure for tests and the operator).
        self.turns = 0

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold this log's turn for the block (or go without one when the database does not
        answer the turnstile: see the module's docstring)."""
        async with self._local:
            conn = await self._take()
            try:
                yield
            finally:
                if conn is not None:
                    await self._give_back(conn)

    async def _take(self) -> asyncpg.Connection | None:
        loop = asyncio.get_running_loop()
        if self._closed or loop.time() < self._retry_at:
            return None
        try:
            async with asyncio.timeout(TURN_WAIT):
                if self._conn is None or self._conn.is_closed():
                    self._conn = await asyncpg.connect(self.database_url, timeout=TURN_WAIT)
                await self._conn.execute(_LOCK, TURN_NAMESPACE, self._key)
        except asyncio.CancelledError:
            self._end()  # the lock may have been granted as the wait was cancelled
            raise
        except Exception as exc:  # only an optimization: any failure, and writers go on
            self._end()
            self._retry_at = loop.time() + RETRY_AFTER
            log.info("%s: writing without turns for %g s: %s", self.log_name, RETRY_AFTER, exc)
            return None
        self.turns += 1
        return self._conn

    async def _give_back(self, conn: asyncpg.Connection) -> None:
        try:
            async with asyncio.timeout(TURN_WAIT):
                await conn.execute(_UNLOCK, TURN_NAMESPACE, self._key)
        except asyncio.CancelledError:
            self._end()
            raise
        except Exception:  # the group is decided: its answers must not fail with the turn
            self._end()  # the session's end gives the turn back

    def _end(self) -> None:
        if self._conn is not None:
            self._conn.terminate()
            self._conn = None

    def close(self) -> None:
        """End the turnstile's connection, and with its session any turn it holds; a writer
        still at work after this goes without turns."""
        self._closed = True
        self._end()
