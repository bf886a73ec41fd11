"""Servers a fixture holds for its test, closed after it: a server already started (as a
``serve`` helper returns it), or the league's services composed in one app on the settings'
known port (so a follower reaches the others at the server's own address)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from aiohttp.test_utils import TestServer

from services.http.apps import Service
from services.kernel.compose import compose
from services.kernel.settings import LeagueSettings


@asynccontextmanager
async def closing(server: TestServer) -> AsyncIterator[TestServer]:
    """The started ``server``, closed on the way out."""
    try:
        yield server
    finally:
        await server.close()


@asynccontextmanager
async def composed(
    settings: LeagueSettings, services: Sequence[Service]
) -> AsyncIterator[TestServer]:
    """``services`` composed in one app (in this order) on ``settings.port``, started, and
    closed on the way out."""
    server = TestServer(compose(settings, services), host="127.0.0.1", port=settings.port)
    await server.start_server()
    async with closing(server):
        yield server
