"""The mint served over real HTTP in this process, a client of it, and a wait for the
checkpoint covering a test's stamps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.checkpoint import Checkpoint
from services.kernel.settings import LeagueSettings
from services.mint.app import create_app
from tests.harness.serving import closing


async def checkpoint_covering(league: LeagueClient, size: int, service: str = "mint") -> str:
    """The served checkpoint, once the background checkpointer has signed one of at least
    ``size`` leaves (a bounded wait: about 200 checkpoint intervals)."""
    for _ in range(200):
        text = await league.checkpoint(service=service)
        if Checkpoint.from_note(text).size >= size:
            return text
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {service} checkpoint covering {size} leaves was signed")


async def serve(settings: LeagueSettings) -> TestServer:
    """The mint app on a real port (the caller closes it)."""
    server = TestServer(create_app(settings))
    await server.start_server()
    return server


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    async with closing(await serve(settings)) as server:
        yield server


@pytest.fixture
async def league(server: TestServer) -> AsyncIterator[LeagueClient]:
    async with LeagueClient(str(server.make_url(""))) as client:
        yield client
