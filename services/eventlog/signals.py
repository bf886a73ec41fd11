"""Wake-ups when a log signs a checkpoint: in this process, and across processes through
PostgreSQL ``LISTEN/NOTIFY``.

A follower of a log waits for the log's next checkpoint instead of polling for it:

- **In one process** (the services composed in one app), the store that signs a checkpoint
  rings :data:`CHECKPOINTS` for its log once the checkpoint has committed.
- **Across processes**, the signing transaction also sends ``NOTIFY`` on the log's channel
  (:func:`checkpoint_channel`), which PostgreSQL delivers at commit to the sessions of the
  same database that ``LISTEN`` on it. :func:`relaying` keeps one connection of a pool
  listening on the channels followed in this process and rings :data:`CHECKPOINTS` for each
  notification (one sent by this process was rung already and is skipped); a connection
  that drops is replaced, and every channel is rung once it listens again, since
  notifications sent meanwhile are lost.

A follower waiting for an event the log has appended but not yet checkpointed (a print
stamped a moment ago, named by a certificate) asks for a checkpoint the same two ways, on the
log's other channel (:func:`wanted_channel`): the log's checkpointer signs one at once
rather than at its next beat (services/kernel/checkpoints.py), as it does when a receipt
needs one.

A ring only wakes: the follower then reads the followed log's checkpoint as ever and
verifies it, so a spurious ring costs one look and a forged one nothing more (a wanted
checkpoint, one signature). A lost ring (a dropped connection, a followed log in another
database, which PostgreSQL cannot notify here) only delays: followers keep a timer beside
the bell, and checkpointers their beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg

log = logging.getLogger(__name__)

#: PostgreSQL's longest channel name (an identifier: NAMEDATALEN - 1 bytes).
MAX_CHANNEL = 63
#: A lost listening connection is opened again after this many seconds, doubling to the cap.
RELAY_RETRY = 0.1
RELAY_RETRY_CAP = 5.0
#: How often the listening connection looks whether its pool is closing (it then gives its
#: connection back, or the pool's close would wait for it forever).
RELAY_LOOK = 0.25


def checkpoint_channel(schema: str) -> str:
    """The channel a log in ``schema`` notifies at each new checkpoint (and the key of its
    bell in this process)."""
    return f"{schema}_checkpoint"[:MAX_CHANNEL]


def wanted_channel(schema: str) -> str:
    """The channel on which followers of the log in ``schema`` ask it for a checkpoint."""
    return f"{schema}_wanted"[:MAX_CHANNEL]


#: This process's token and the process id it was drawn in (see :func:`process_token`).
_TOKEN: tuple[int, str] = (-1, "")


def process_token() -> str:
    """Names this process in its notifications, so its relay skips what it already rang: a
    random token, drawn again in a forked child (``league serve --workers`` forks workers
    that must tell each other's notifications from their own)."""
    global _TOKEN
    if _TOKEN[0] != os.getpid():
        _TOKEN = (os.getpid(), secrets.token_hex(8))
    return _TOKEN[1]


def notice(size: int) -> str:
    """The payload of a checkpoint's notification: its size, and the process that signed it."""
    return f"{size} {process_token()}"


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Bell:
    """Rings by channel; each channel counts its rings, so a waiter that took a
    :meth:`mark` before it looked misses no ring that came after."""

    def __init__(self) -> None:
        # Rung from any event loop's thread (a test may serve from another loop).
        self._lock = threading.Lock()
        self._rung: Counter[str] = Counter()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._subscribers: dict[
            str, dict[int, tuple[asyncio.AbstractEventLoop, Callable[[], object]]]
        ] = {}
        self._subscriptions = 0

    def mark(self, channel: str) -> int:
        """How many times ``channel`` has rung: pass it to :meth:`wait`."""
        with self._lock:
            return self._rung[channel]

    def ring(self, channel: str) -> None:
        """Wake every waiter of ``channel``."""
        with self._lock:
            self._rung[channel] += 1
            waiters = self._waiters.pop(channel, set())
            subscribers = list(self._subscribers.get(channel, {}).values())
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)
        for loop, callback in subscribers:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(callback)

    def subscribe(self, channel: str, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` (in the calling event loop) at every ring of ``channel`` until
        the function returned is called."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._subscriptions += 1
            key = self._subscriptions
            self._subscribers.setdefault(channel, {})[key] = (loop, callback)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.get(channel, {}).pop(key, None)

        return unsubscribe

    async def wait(self, channel: str, since: int, within: float) -> bool:
        """Return once ``channel`` has rung after the :meth:`mark` ``since`` (True), or
        after ``within`` seconds (False)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        waiter = (loop, future)
        with self._lock:
            if self._rung[channel] != since:
                return True
            self._waiters.setdefault(channel, set()).add(waiter)
        try:
            await asyncio.wait_for(future, max(within, 0))
        except TimeoutError:
            return False
        finally:
            with self._lock:
                waiting = self._waiters.get(channel)
                if waiting is not None:
                    waiting.discard(waiter)
        return True


#: Every log's signals (its checkpoints, and the checkpoints its followers want), as they
#: are rung in this process or notified to it.
CHECKPOINTS = Bell()


class _Relay:
    """One connection of a pool listening on the channels this process follows."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.channels: Counter[str] = Counter()
        self.conn: Any = None
        #: The channels the current connection listens on.
        self.listened: set[str] = set()
        self.task: asyncio.Task[None] | None = None

    @staticmethod
    def _notified(conn: object, pid: int, channel: str, payload: str) -> None:
        if not payload.endswith(process_token()):
            CHECKPOINTS.ring(channel)

    async def join(self, channel: str) -> None:
        self.channels[channel] += 1
        if self.channels[channel] == 1 and self.conn is not None:
            with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                await self.conn.add_listener(channel, self._notified)
                self.listened.add(channel)
        if self.task is None:
            self.task = asyncio.create_task(self._run(), name="checkpoint notifications")

    async def leave(self, channel: str) -> bool:
        """Stop listening on ``channel``; True once no channel is left (the relay stopped)."""
        self.channels[channel] -= 1
        if self.channels[channel] <= 0:
            del self.channels[channel]
            if self.conn is not None and channel in self.listened:
                self.listened.discard(channel)
                with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                    await self.conn.remove_listener(channel, self._notified)
        if self.channels or self.task is None:
            return not self.channels
        task, self.task = self.task, None
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return not self.channels  # a channel joined meanwhile has started a task again

    async def _run(self) -> None:
        delay = RELAY_RETRY
        while not self.pool.is_closing():
            try:
                await self._listen()
                delay = RELAY_RETRY
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                if self.pool.is_closing():
                    return
                log.warning(
                    "checkpoint notifications: %s: %s; listening again in %.1f s",
                    type(exc).__name__,
                    exc,
                    delay,
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RELAY_RETRY_CAP)

    async def _listen(self) -> None:
        """Listen on one connection until it drops or its pool closes; every channel is rung
        once listening, for what was notified while no connection listened."""
        async with self.pool.acquire() as conn:
            lost = asyncio.Event()

            def dropped(_: object) -> None:
                lost.set()

            conn.add_termination_listener(dropped)
            try:
                self.listened = set()
                for channel in list(self.channels):
                    await conn.add_listener(channel, self._notified)
                    self.listened.add(channel)
                self.conn = conn
                for channel in self.listened:
                    CHECKPOINTS.ring(channel)
                while not self.pool.is_closing():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lost.wait(), RELAY_LOOK)
                        return
            finally:
                self.conn = None
                listened, self.listened = self.listened, set()
                conn.remove_termination_listener(dropped)
                if not conn.is_closed():
                    # Back in the pool, the connection listens to nothing (were its reset
                    # skipped, a later user would carry these listeners).
                    with contextlib.suppress(
                        asyncpg.PostgresError, asyncpg.InterfaceError, OSError
                    ):
                        for channel in listened:
                            await conn.remove_listener(channel, self._notified)


#: The relay of each pool in this process (by ``id``: a pool takes no weak reference).
_RELAYS: dict[int, _Relay] = {}


@contextlib.asynccontextmanager
async def relaying(pool: asyncpg.Pool, channel: str) -> AsyncIterator[None]:
    """While the block runs, ring :data:`CHECKPOINTS` for ``channel`` (a log's
    :func:`checkpoint_channel` or :func:`wanted_channel`) at each notification on it from
    another process. One connection of ``pool`` serves every channel relayed
    over it (held from the pool while any is)."""
    relay = _RELAYS.get(id(pool))
    if relay is None or relay.pool is not pool:
        relay = _RELAYS[id(pool)] = _Relay(pool)
    await relay.join(channel)
    try:
        yield
    finally:
        if await relay.leave(channel) and _RELAYS.get(id(pool)) is relay:
            del _RELAYS[id(pool)]
