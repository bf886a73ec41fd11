"""A league on disk, its database migrated, and the mint served over real HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient
from ledger.catalog import PLAYING
from ledger.checkpoint import Checkpoint
from ledger.manifest import Policies
from ledger.print_runs import PrintRun, PrintRunTable
from ledger.savecode import MINIMUM_KDF
from services.eventlog.migrate import upgrade
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings
from services.mint.app import create_app

#: Every title with tiny runs: 3 standard, 2 gilt, 1 holofoil (serials 0001-0003, 0004-0005,
#: 0006), so exhaustion is reachable in a test.
SMALL_RUNS = PrintRunTable(
    runs=tuple(
        PrintRun(title=c.name, set=c.card_set.value, standard=3, gilt=2, holofoil=1)
        for c in PLAYING
    )
)
#: Checkpoints every 20 ms, so a test waits little for the one covering its stamps; proof of
#: work free (1 expected hash), except in the tests of proof of work; no source limit to speak
#: of (every test client is 127.0.0.1), except in the tests of rate limits.
TEST_POLICIES = Policies(
    faucet_marks_per_day=50,
    stamp_allowance_per_day=50,
    stamp_batch_limit=10,
    checkpoint_interval_ms=20,
    stamp_work=1,
    stamp_work_rise=1,
    source_prints_per_minute=1_000_000,
    source_prints_burst=1_000_000,
)


async def checkpoint_covering(league: LeagueClient, size: int, service: str = "mint") -> str:
    """The served checkpoint, once the background checkpointer has signed one of at least
    ``size`` leaves (a bounded wait: about 200 checkpoint intervals)."""
    for _ in range(200):
        text = await league.checkpoint(service=service)
        if Checkpoint.from_note(text).size >= size:
            return text
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {service} checkpoint covering {size} leaves was signed")


@pytest.fixture
def make_settings(tmp_path: Path, database_url: str) -> Callable[..., LeagueSettings]:
    """Create a league in a fresh data dir over the migrated test database."""
    upgrade(database_url)
    counter = iter(range(100))

    def make(**league: Any) -> LeagueSettings:
        settings = LeagueSettings(
            data_dir=tmp_path / f"league-{next(counter)}", database_url=database_url
        )
        league.setdefault("print_runs", SMALL_RUNS)
        league.setdefault("policies", TEST_POLICIES)
        league.setdefault("kdf", MINIMUM_KDF)
        create_league(settings, **league)
        return settings

    return make


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    return make_settings()


async def serve(settings: LeagueSettings) -> TestServer:
    """The mint app on a real port (the caller closes it)."""
    server = TestServer(create_app(settings))
    await server.start_server()
    return server


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    server = await serve(settings)
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def league(server: TestServer) -> AsyncIterator[LeagueClient]:
    async with LeagueClient(str(server.make_url(""))) as client:
        yield client
