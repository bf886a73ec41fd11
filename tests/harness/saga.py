"""The purchase saga's steps on each path, and a purchase asked until it ends and read back from
the treasury's log (a purchase taken across a crash of the treasury: crashed_saga.py)."""

from __future__ import annotations

import asyncio

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from ledger.api.treasury import BuyAnswer, BuyRequest
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_service_key
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from tests.harness.ports import free_port
from tests.harness.served import GUARD_SECONDS
from tests.harness.treasury import Faucet, check_supply

DELIVERED = [
    "purchase-opened",
    "payment-notarized",
    "order-signed",
    "print-delivered",
    "payment-returned",
    "purchase-closed",
]


REFUNDED = [
    "purchase-opened",
    "payment-notarized",
    "order-signed",
    "order-refused",
    "purchase-closed",
]


REJECTED = ["purchase-opened", "payment-rejected", "purchase-closed"]


@pytest.fixture
def ports() -> tuple[int, int]:
    return free_port(), free_port()


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


def stamps_of(events: list[PrintStamped], pid: str) -> int:
    return sum(1 for e in events if e.request_id == pid)


async def mint_stamps(server: TestServer) -> list[PrintStamped]:
    return [
        body
        for e in await server.app[MINT_LOG].read()
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)
    ]
