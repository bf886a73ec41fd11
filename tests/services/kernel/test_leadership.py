"""The election of a log's leader among its workers (services/kernel/leadership.py): one
leads at a time; when the leader's session ends (its process dies, its connection is cut) a
waiting worker leads at once and the leader's work runs there; a leader that lost its
connection stops its work."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg
import pytest

from services.kernel.leadership import LOCK_NAMESPACE, Leadership, lock_key
from services.kernel.settings import LeagueSettings
from tests.harness.waiting import until

#: A guard against a hung election, not a timing assertion.
GUARD = 30.0


class Worker:
    """One worker standing for the mint's log: its leadership and the count of its leader
    work's beats."""

    def __init__(self, database_url: str) -> None:
        self.leadership = Leadership(database_url, "mint")
        self.beats = 0
        self.task: asyncio.Task[None] | None = None

    async def work(self) -> None:
        while True:
            self.beats += 1
            await asyncio.sleep(0.01)

    def start(self) -> None:
        self.task = asyncio.create_task(self.leadership.run((self.work,)))

    async def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


@pytest.fixture
async def workers(settings: LeagueSettings) -> AsyncIterator[list[Worker]]:
    made = [Worker(settings.database) for _ in range(2)]
    try:
        yield made
    finally:
        for worker in made:
            if worker.task is not None:
                await worker.stop()


async def test_one_worker_leads_and_the_other_takes_over_when_it_stops(
    workers: list[Worker],
) -> None:
    """The first worker leads and runs the leader's work; the second waits and runs none.
    The first stops (its session ends): the second leads and works, the first no longer."""
    first, second = workers
    first.start()
    await until(lambda: first.leadership.leading and first.beats > 0)
    second.start()
    await asyncio.sleep(0.2)  # time enough for a wrong second leader to start working
    assert not second.leadership.leading
    assert second.beats == 0
    await first.stop()
    assert not first.leadership.leading
    stopped_at = first.beats
    await until(lambda: second.leadership.leading and second.beats > 0)
    await asyncio.sleep(0.05)
    assert first.beats == stopped_at


async def test_a_leader_whose_session_is_killed_stops_and_the_other_leads(
    workers: list[Worker], settings: LeagueSettings
) -> None:
    """The leader's database session is terminated (a crashed process, a cut connection):
    its lock is released, the waiting worker leads; the old leader notices within its
    heartbeat, stops its work and stands again, waiting."""
    first, second = workers
    first.start()
    await until(lambda: first.leadership.leading)
    second.start()
    conn = await asyncpg.connect(settings.database)
    try:
        holder = await conn.fetchval(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND classid = $1 AND objid = hashtext($2)::oid",
            LOCK_NAMESPACE,
            lock_key("mint"),
        )
        assert holder is not None
        await conn.execute("SELECT pg_terminate_backend($1)", holder)
    finally:
        await conn.close()
    await until(lambda: second.leadership.leading and not first.leadership.leading)
    assert first.leadership.terms == 1
    assert second.leadership.terms == 1
    stopped_at = first.beats
    await asyncio.sleep(0.1)
    assert first.beats == stopped_at


async def test_the_leaders_work_that_fails_is_started_again(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A piece of the leader's work that fails (its database down a moment) is logged and
    started again while the worker leads, and stopping the worker stops it cleanly: a
    failure never ends the work for good nor escapes the election."""
    monkeypatch.setattr("services.kernel.leadership.WORK_BACKOFF", 0.01)
    attempts = [0]

    async def flaky() -> None:
        attempts[0] += 1
        if attempts[0] < 3:
            raise RuntimeError("the database does not answer")
        await asyncio.Event().wait()

    leadership = Leadership(settings.database, "mint")
    election = asyncio.create_task(leadership.run((flaky,)))
    try:
        await until(lambda: attempts[0] >= 3)
        assert leadership.leading
    finally:
        election.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await election
    assert election.cancelled()
