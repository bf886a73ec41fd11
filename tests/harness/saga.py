"""The purchase saga across a crash: ``league serve treasury`` as a child process on a known
port beside the mint and the notary served in this process, the steps of each path, and a
purchase taken across a kill and a restart over the same database."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient
from ledger.api.treasury import BuyAnswer, BuyRequest
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from services.eventlog import PostgresEventStore
from services.kernel.compose import compose
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.ports import free_port
from tests.harness.served import COMMAND, GUARD_SECONDS
from tests.harness.treasury import Faucet, check_supply

DELIVERED = [
    "purchase-opened", "payment-notarized", "order-signed", "print-delivered",
    "payment-returned", "purchase-closed",
]


REFUNDED = [
    "purchase-opened", "payment-notarized", "order-signed", "order-refused", "purchase-closed",
]


REJECTED = ["purchase-opened", "payment-rejected", "purchase-closed"]


#: Every kill point, with the path of the purchase that passes it.
CASES = [
    *[(point, "delivered") for point in (
        "opened", "notary-answered", "notarized", "order-signed", "mint-answered",
        "delivered", "returned", "closed",
    )],
    ("mint-answered", "refunded"),
    ("refused", "refunded"),
    ("refunded", "refunded"),
    ("notary-answered", "rejected"),
    ("rejected", "rejected"),
]


@dataclass
class Child:
    process: asyncio.subprocess.Process
    url: str

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(self.process.wait(), GUARD_SECONDS)


async def start_treasury(
    settings: LeagueSettings, port: int, peers: str, kill_at: str | None = None
) -> Child:
    """``league serve treasury`` on ``port``, reaching the mint and the notary at ``peers``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("LEAGUE_") and k != "TREASURY_KILL_AT"}
    env.update(LEAGUE_HOME=str(settings.data_dir), DATABASE_URL=settings.database,
               MINT_URL=peers, NOTARY_URL=peers)
    if kill_at is not None:
        env["TREASURY_KILL_AT"] = kill_at
    process = await asyncio.create_subprocess_exec(
        *COMMAND, "serve", "treasury", "--port", str(port), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), GUARD_SECONDS)).decode()
    assert line.startswith("serving on "), line
    return Child(process, f"http://127.0.0.1:{port}")


@pytest.fixture
def ports() -> tuple[int, int]:
    return free_port(), free_port()


@pytest.fixture
async def peers(
    settings: LeagueSettings, ports: tuple[int, int]
) -> AsyncIterator[tuple[TestServer, LeagueClient]]:
    """The mint and the notary in this process, the notary following the child treasury.
    A free port can be taken between the probe and the bind: then another is probed."""
    there = ports[1]
    for _ in range(5):
        here = free_port()
        own = settings.model_copy(
            update={"port": here, "treasury_url": f"http://127.0.0.1:{there}"}
        )
        server = TestServer(compose(own, [MINT, NOTARY]), host="127.0.0.1", port=here)
        try:
            await server.start_server()
            break
        except OSError:
            await server.close()
    else:
        raise AssertionError("no free port to serve the mint and the notary on")
    try:
        async with LeagueClient(f"http://127.0.0.1:{here}") as league:
            yield server, league
    finally:
        await server.close()


async def post_buy(session: aiohttp.ClientSession, url: str, request: BuyRequest) -> BuyAnswer:
    async with session.post(f"{url}/treasury/buy", json=request.to_wire()) as response:
        text = await response.text()
        assert response.status == 200, text
        return BuyAnswer.model_validate_json(text)


async def until_answered(
    session: aiohttp.ClientSession, url: str, request: BuyRequest
) -> BuyAnswer:
    """The purchase's answer, asked again while it waits (503) for a service coming back."""
    for _ in range(GUARD_SECONDS * 10):
        async with session.post(f"{url}/treasury/buy", json=request.to_wire()) as response:
            text = await response.text()
            if response.status == 200:
                return BuyAnswer.model_validate_json(text)
            assert response.status == 503, text
        await asyncio.sleep(0.1)
    raise AssertionError("the purchase never ended")


async def checked(settings: LeagueSettings, faucet: Faucet, pid: str) -> list[str]:
    """The purchase's steps in its stream, and the supply invariant checked."""
    manifest = faucet.manifest
    key = load_service_key(settings, manifest, "treasury", None)
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(
            pool, schema="treasury", origin=f"{manifest.league}/treasury", key=key
        )
        await check_supply(faucet, store)
        return [e.type for e in await store.read_stream(f"purchase/{pid}")]


async def bought_across_a_kill(
    settings: LeagueSettings,
    port: int,
    server: TestServer,
    point: str,
    prepare: Callable[[Faucet], Awaitable[BuyRequest]],
) -> tuple[BuyAnswer, list[str]]:
    """The purchase ``prepare`` makes (its notes claimed from the treasury about to die) sent
    to a treasury killed at ``point``, then to one restarted over the same database: its
    answer (the same when asked again) and its steps, with the supply invariant checked."""
    manifest = load_manifest(settings)
    peers_url = str(server.make_url("")).rstrip("/")
    child = await start_treasury(settings, port, peers_url, kill_at=point)
    async with aiohttp.ClientSession() as session:
        request = await prepare(Faucet(session, child.url, manifest))
        with pytest.raises((aiohttp.ClientError, asyncio.TimeoutError)):
            await post_buy(session, child.url, request)
        assert await asyncio.wait_for(child.process.wait(), GUARD_SECONDS) == 137

        child = await start_treasury(settings, port, peers_url)
        try:
            answer = await until_answered(session, child.url, request)
            assert await post_buy(session, child.url, request) == answer
            steps = await checked(
                settings, Faucet(session, child.url, manifest), request.purchase_id
            )
        finally:
            await child.stop()
    return answer, steps


def stamps_of(events: list[PrintStamped], pid: str) -> int:
    return sum(1 for e in events if e.request_id == pid)


async def mint_stamps(server: TestServer) -> list[PrintStamped]:
    return [
        body for e in await server.app[MINT_LOG].read()
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)
    ]
