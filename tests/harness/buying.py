"""The whole league (mint, treasury, notary) composed on a known port, its faucet checked
after the test (supply invariant, every projection rebuilt), and purchase builders."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from ledger.endorsements import Chain, endorse
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey, SigningKey
from services.eventlog import EventStore
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.app import SERVICE as MINT
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.app import NOTARY_LOG
from services.notary.app import SERVICE as NOTARY
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import SERVICE as TREASURY
from tests.harness.mint import league as league  # the league over this module's server
from tests.harness.ports import free_port
from tests.harness.serving import composed
from tests.harness.trading import T0
from tests.harness.treasury import Faucet, checked_faucet


@pytest.fixture
def settings(make_settings: object) -> LeagueSettings:
    make = make_settings
    assert callable(make)
    made: LeagueSettings = make()
    return made.model_copy(update={"port": free_port()})


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    async with composed(settings, [MINT, TREASURY, NOTARY]) as server:
        yield server


@pytest.fixture
async def faucet(settings: LeagueSettings, server: TestServer) -> AsyncIterator[Faucet]:
    """The faucet; after the test the supply invariant and every rebuild are checked."""
    rebuilt = ((MINT_LOG, MINT_PROJECTION), (NOTARY_LOG, NOTARY_PROJECTION))
    async with checked_faucet(settings, server, *rebuilt) as faucet:
        yield faucet


def to_treasury(faucet: Faucet, chain: Chain, holder: SigningKey) -> Chain:
    return endorse(chain, holder, PublicKey.from_text(faucet.manifest.treasury), T0)


async def purchase_steps(store: EventStore, pid: str) -> list[str]:
    return [e.type for e in await store.read_stream(f"purchase/{pid}")]


async def ordered(store: EventStore, pid: str) -> list[PrintStamped]:
    return [
        body
        for e in await store.read()
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped) and body.request_id == pid
    ]
