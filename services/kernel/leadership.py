"""Which worker leads each log: elected through PostgreSQL, one leader a log at a time.

Every worker of a service (``league serve --workers N``) answers requests and appends to the
log: the log's head-row lock orders every append whichever worker makes it, and a group reads
the state it decides on under that lock, so the lock *is* the log's one sequencer
(services/eventlog/store.py). What must run once per log, not once per worker, is the
leader's: the checkpointer's beat, the submission of checkpoints to witnesses, the following
of other services' feeds and the saga's resumer. :class:`Leadership` elects that leader.

Each service's leader holds a PostgreSQL session advisory lock named for its log, on a
connection of its own. A worker that is not leading waits for the lock in the database
(``pg_advisory_lock``), so when the leader's process dies its session ends, the lock is
released and a waiting worker leads at once, without polling. A leader checks its connection
every :data:`HEARTBEAT` seconds; a connection lost is leadership lost: its work is cancelled
and the worker stands again.

The leader's work is safe to run twice (a follower's page applies once under its position's
row lock, a checkpoint is signed under the log's lock, a witness answers a repeated
submission with the same cosignature, a purchase's step appends at its expected stream
version), so the instant two leaders might overlap (a leader cut off from the database but not
yet aware of it, for at most a heartbeat) costs work, never correctness. The election keeps
that work to one worker and the published checkpoint cadence to one beat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

import asyncpg

log = logging.getLogger(__name__)

#: Seconds between two checks that the leader's connection is alive.
HEARTBEAT = 1.0
#: Seconds to wait before standing again after the database did not answer.
RETRY = 1.0
#: The advisory lock's namespace (PostgreSQL's two-key form: namespace, then the log's key).
LOCK_NAMESPACE = 0x4C45  # "LE"

#: Work only the leader runs: started when this worker leads, cancelled when it stops.
LeaderTask = Callable[[], Awaitable[None]]


def lock_key(log_name: str) -> str:
    """The text the log's advisory lock is keyed by (``hashtext`` of it in SQL)."""
    return f"the-window-league/leader/{log_name}"


class Leadership:
    """The election of ``log_name``'s leader among the workers over ``database_url``."""

    def __init__(self, database_url: str, log_name: str) -> None:
        self.database_url = database_url
        self.log_name = log_name
        #: Whether this worker leads now (read by work that runs everywhere but beats only
        #: in the leader, such as the checkpointer).
        self.leading = False
        #: Times this worker has become leader (a figure for tests and the operator).
        self.terms = 0
        self._changed = asyncio.Event()

    async def run(self, tasks: Sequence[LeaderTask]) -> None:
        """Stand for election until cancelled; run ``tasks`` for as long as this worker leads."""
        while True:
            try:
                conn = await asyncpg.connect(self.database_url)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("%s: cannot stand for leader: %s", self.log_name, exc)
                await asyncio.sleep(RETRY)
                continue
            try:
                await conn.execute(
                    "SELECT pg_advisory_lock($1, hashtext($2))",
                    LOCK_NAMESPACE,
                    lock_key(self.log_name),
                )
                await self._lead(conn, tasks)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                if self.leading:
                    log.warning("%s: leadership lost: %s", self.log_name, exc)
                await asyncio.sleep(RETRY)
            finally:
                self._set(leading=False)
                conn.terminate()  # ends the session: the lock, if held, is released at once

    async def _lead(self, conn: asyncpg.Connection, tasks: Sequence[LeaderTask]) -> None:
        """Run ``tasks`` while ``conn`` (holding the lock) answers; return when it does not."""
        self.terms += 1
        self._set(leading=True)
        log.info("%s: this worker leads the log (term %d)", self.log_name, self.terms)
        running = [
            asyncio.create_task(_kept_running(self.log_name, task), name=f"leader {self.log_name}")
            for task in tasks
        ]
        try:
            while True:
                await asyncio.sleep(HEARTBEAT)
                await asyncio.wait_for(conn.fetchval("SELECT 1"), HEARTBEAT * 5)
        except TimeoutError as exc:
            raise OSError("the leader's connection stopped answering") from exc
        finally:
            for task in running:
                task.cancel()
            # Each piece logged its own failures; stopping it is all that is left to do.
            await asyncio.gather(*running, return_exceptions=True)

    def _set(self, *, leading: bool) -> None:
        if self.leading != leading:
            self.leading = leading
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()

    async def changed(self) -> None:
        """Wait until this worker starts or stops leading."""
        await self._changed.wait()


#: Seconds before the leader's work is started again after a failure (doubling to the cap).
WORK_BACKOFF = 1.0
WORK_BACKOFF_CAP = 30.0


async def _kept_running(log_name: str, task: LeaderTask) -> None:
    """Run one piece of the leader's work for as long as this worker leads: a failure (the
    database down, say) is logged and the work started again after a pause, never left
    dead while the worker still leads."""
    delay = WORK_BACKOFF
    while True:
        try:
            await task()
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception(
                "%s: the leader's work failed; starting it again in %g s", log_name, delay
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, WORK_BACKOFF_CAP)
