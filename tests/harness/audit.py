"""Helpers of ``league audit`` over a served league: the command, a stamp, a bounded wait
for a published checkpoint, and a front hiding some of the league's paths."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from apiclient.league import LeagueClient, stamp_request
from ledger.api.mint import Stamped
from ledger.endorsements import Chain
from ledger.keys import SigningKey
from tests.harness.ports import free_port
from tests.harness.served import league

T0 = 1_700_000_000


def audit(
    env: dict[str, str], url: str, state: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return league(env, "audit", url, "--state", str(state), *options)


async def stamp(url: str, owner: SigningKey, title: str) -> Chain:
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        answer = await client.stamp(stamp_request(owner, manifest, [(title, "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped)
    return Chain(certificate=item.certificate, endorsements=())


async def published(url: str, service: str, size: int) -> None:
    """Wait (bounded: a guard, not a timing assertion) for a checkpoint of ``size``."""
    async with LeagueClient(url) as client:
        for _ in range(200):
            if (await client.signed_checkpoint(service=service)).size >= size:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"{service} never published a checkpoint of size {size}")


@asynccontextmanager
async def front(upstream: str, hides: Callable[[str], bool]) -> AsyncIterator[str]:
    """The league at ``upstream`` served through a front that answers each path ``hides``
    with the league's own 404 (a proxy hiding it) and forwards every other GET: its URL."""
    async with aiohttp.ClientSession() as session:

        async def forward(request: web.Request) -> web.Response:
            path = "/no-such-path" if hides(request.path) else request.path
            async with session.get(upstream + path, params=request.query) as answer:
                return web.Response(
                    body=await answer.read(), status=answer.status, content_type=answer.content_type
                )

        app = web.Application()
        app.router.add_get("/{tail:.*}", forward)
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            await runner.cleanup()
