"""``league serve --workers N`` (services/kernel/workers.py): N processes serve one league.

A real server in a child process over the test's database: stamping goes on from several
clients while workers are killed (SIGKILL, mid-group as likely as not), every original
worker in turn, so the first leader surely dies. The supervisor starts each again; every
request, asked again with its own id after a lost answer, is answered once; nothing is lost
or stamped twice (serials unique, the census equal to the answers, the log dense and its
projections rebuilt equal: ``league verify``); and a new leader keeps signing checkpoints.
The per-source limit holds across the workers: a source spreading its connections over
them gets the published burst, not N times it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable, stamp_request
from ledger.api.mint import Stamped
from ledger.catalog import PLAYING
from ledger.checkpoint import Checkpoint
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.requests import StampRequest
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from tests.harness.founding import TEST_POLICIES
from tests.harness.served import GUARD_SECONDS, Served, clean_env, league

WORKERS = 2
CLIENTS = 6


def env_of(settings: LeagueSettings) -> dict[str, str]:
    return {**clean_env(), "LEAGUE_HOME": str(settings.data_dir), "DATABASE_URL": settings.database}


def workers_of(parent: int) -> set[int]:
    """The pids of ``parent``'s children (its workers)."""
    found: set[int] = set()
    for task in Path(f"/proc/{parent}/task").iterdir():
        text = (task / "children").read_text()
        found.update(int(pid) for pid in text.split())
    return found


@pytest.fixture
def served(settings: LeagueSettings) -> Iterator[Served]:
    server = Served(env_of(settings), "mint", "--workers", str(WORKERS))
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


async def until_workers(parent: int, count: int, without: set[int]) -> set[int]:
    """Wait until ``parent`` runs ``count`` workers, none of them in ``without``."""
    async with asyncio.timeout(GUARD_SECONDS):
        while True:
            running = workers_of(parent)
            if len(running) == count and not running & without:
                return running
            await asyncio.sleep(0.05)


#: Requests asked again after their worker died holding them (printed, not asserted: when a
#: kill lands is the scheduler's choice).
ASKED_AGAIN = [0]


async def answered(client: LeagueClient, request: StampRequest) -> Any:
    """The request's answer, asked again (the same request, the same id) while the worker
    holding it dies or the server is busy."""
    async with asyncio.timeout(GUARD_SECONDS):
        while True:
            try:
                return await client.stamp(request)
            except LeagueUnreachable:
                ASKED_AGAIN[0] += 1
            except LeagueProblem as problem:
                if problem.status != 503:
                    raise
            await asyncio.sleep(0.02)


async def stamping(url: str, manifest: LeagueManifest, stop: asyncio.Event, seed: int) -> list[Any]:
    """One client's requests until ``stop``: one to three prints of any run, each request
    by a new key, each answered (a print of an exhausted run is answered refused)."""
    chance = random.Random(seed)
    runs = [(card.name, finish) for card in PLAYING for finish in ("standard", "gilt")]
    answers = []
    async with LeagueClient(url, timeout=10.0) as client:
        while not stop.is_set():
            chosen = chance.sample(runs, chance.randint(1, 3))
            request = stamp_request(SigningKey.generate(), manifest, chosen)
            answers.append(await answered(client, request))
    return answers


async def test_workers_killed_under_load_lose_nothing_and_stamp_nothing_twice(
    settings: LeagueSettings, served: Served
) -> None:
    manifest = load_manifest(settings)
    parent = served.process.pid
    originals = await until_workers(parent, WORKERS, set())
    stop = asyncio.Event()
    load = asyncio.gather(*(stamping(served.url, manifest, stop, seed) for seed in range(CLIENTS)))
    killed: set[int] = set()
    for victim in sorted(originals):
        await asyncio.sleep(0.3)  # into the load
        os.kill(victim, signal.SIGKILL)
        killed.add(victim)
        await until_workers(parent, WORKERS, killed)
    await asyncio.sleep(0.3)  # the load goes on with the new workers
    stop.set()
    answers = [answer for client in await load for answer in client]
    print(
        f"{len(answers)} requests, {ASKED_AGAIN[0]} asked again after a kill, "
        f"{sum(a.replayed for a in answers)} answered as replays"
    )

    stamped = [
        item.certificate for answer in answers for item in answer.items if isinstance(item, Stamped)
    ]
    assert stamped
    assert len({c.serial for c in stamped}) == len(stamped)
    async with LeagueClient(served.url) as client:
        census = await client.census()
        assert sum(count.stamped for t in census.titles for count in t.finishes.values()) == (
            len(stamped)
        )  # none lost: every print stamped is in an answer
        # The leader now is a worker started after the first died: it keeps the beat.
        async with asyncio.timeout(GUARD_SECONDS):
            while True:
                signed = Checkpoint.from_note(await client.checkpoint(service="mint"))
                if signed.size >= len(stamped):
                    break
                await asyncio.sleep(0.05)
    code, stderr = served.stop()
    assert code == 0, stderr
    assert stderr.count("killed by signal 9") == WORKERS, stderr
    verified = league(env_of(settings), "verify")
    assert verified.returncode == 0, verified.stderr
    assert f"mint log: {len(stamped)} events" in verified.stdout


def test_a_supervisor_killed_outright_leaves_no_worker_serving(served: Served) -> None:
    """SIGKILL to the supervisor (nothing it can catch): its workers stop too (the kernel
    tells them, Linux's parent-death signal), rather than serving on unsupervised."""
    workers = asyncio.run(until_workers(served.process.pid, WORKERS, set()))
    served.process.kill()
    served.process.wait(timeout=GUARD_SECONDS)
    deadline = time.monotonic() + GUARD_SECONDS
    while any(_alive(pid) for pid in workers):
        assert time.monotonic() < deadline, f"workers {workers} outlived their supervisor"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (an exited process not yet reaped is a zombie: not running)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_the_per_source_limit_holds_across_workers(
    make_settings: Any,
) -> None:
    """Burst 3, one a minute: six requests on six fresh connections, spread over the two
    workers by the kernel, get three stamps and three 429s, not six stamps."""
    policies = TEST_POLICIES.model_copy(
        update={"source_prints_per_minute": 1, "source_prints_burst": 3}
    )
    settings = make_settings(policies=policies)
    server = Served(env_of(settings), "mint", "--workers", str(WORKERS))
    try:
        manifest = load_manifest(settings)

        async def six() -> list[int]:
            statuses = []
            for index in range(6):
                request = stamp_request(
                    SigningKey.generate(), manifest, [(PLAYING[index].name, "standard")]
                )
                async with LeagueClient(server.url) as client:  # a fresh connection
                    try:
                        await client.stamp(request)
                        statuses.append(200)
                    except LeagueProblem as problem:
                        statuses.append(problem.status)
            return statuses

        assert sorted(asyncio.run(six())) == [200, 200, 200, 429, 429, 429]
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.stop()


ORPHAN = """
import os, signal, sys, time
from services.kernel.workers import watch_supervisor
supervisor = os.getpid()
child = os.fork()
if child == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a shutdown that hangs
    watch_supervisor(supervisor, 0.2, every=0.05)
    while True:
        time.sleep(1)
print(child, flush=True)
os._exit(0)
"""


def test_an_orphaned_worker_that_hangs_is_killed_after_the_grace() -> None:
    """A worker whose supervisor is gone and whose shutdown hangs (it ignores SIGTERM here)
    does not serve on: its own watch kills it once the grace the supervisor would have given
    is over."""
    started = subprocess.run(
        [sys.executable, "-c", ORPHAN], capture_output=True, text=True, timeout=GUARD_SECONDS
    )
    orphan = int(started.stdout.split()[0])
    deadline = time.monotonic() + GUARD_SECONDS
    while _alive(orphan):
        assert time.monotonic() < deadline, f"worker {orphan} outlived its supervisor"
        time.sleep(0.05)
