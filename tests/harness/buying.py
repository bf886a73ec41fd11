"""The whole league (mint, treasury, notary) composed on a known port, its faucet checked
after the test (supply invariant, every projection rebuilt), and purchase builders."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient
from ledger.endorsements import Chain, endorse
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey, SigningKey
from services.eventlog import EventStore
from services.kernel.compose import compose
from services.kernel.founding import load_manifest
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.app import SERVICE as MINT
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.app import NOTARY_LOG
from services.notary.app import SERVICE as NOTARY
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import SERVICE as TREASURY
from services.treasury.app import TREASURY_LOG
from tests.harness.ports import free_port
from tests.harness.trading import T0
from tests.harness.treasury import Faucet, check_supply


@pytest.fixture
def settings(make_settings: object) -> LeagueSettings:
    make = make_settings
    assert callable(make)
    made: LeagueSettings = make()
    return made.model_copy(update={"port": free_port()})


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    server = TestServer(
        compose(settings, [MINT, TREASURY, NOTARY]), host="127.0.0.1", port=settings.port
    )
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def league(server: TestServer) -> AsyncIterator[LeagueClient]:
    async with LeagueClient(str(server.make_url(""))) as client:
        yield client


@pytest.fixture
async def faucet(settings: LeagueSettings, server: TestServer) -> AsyncIterator[Faucet]:
    """The faucet; after the test the supply invariant and every rebuild are checked."""
    async with aiohttp.ClientSession() as session:
        faucet = Faucet(session, str(server.make_url("")).rstrip("/"), load_manifest(settings))
        yield faucet
        await check_supply(faucet, server.app[TREASURY_LOG])
        for store, projection in (
            (server.app[MINT_LOG], MINT_PROJECTION),
            (server.app[NOTARY_LOG], NOTARY_PROJECTION),
        ):
            assert (await rebuild(store, projection, commit=False)).agrees  # type: ignore[arg-type]


def to_treasury(faucet: Faucet, chain: Chain, holder: SigningKey) -> Chain:
    return endorse(chain, holder, PublicKey.from_text(faucet.manifest.treasury), T0)


async def purchase_steps(store: EventStore, pid: str) -> list[str]:
    return [e.type for e in await store.read_stream(f"purchase/{pid}")]


async def ordered(store: EventStore, pid: str) -> list[PrintStamped]:
    return [
        body for e in await store.read()
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)
        and body.request_id == pid
    ]
