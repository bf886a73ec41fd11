"""The treasury served over real HTTP, its faucet as a wallet calls it, and the supply
invariant checked over HTTP and against the log."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueProblem
from ledger.api.problems import Problem
from ledger.api.treasury import ClaimAnswer, ClaimRequest, TreasurySupply, claim_request
from ledger.events import TREASURY_EVENTS, NoteIssued, NoteReturned, parse_event
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from services.eventlog import EventStore
from services.kernel.compose import compose
from services.kernel.founding import load_manifest
from services.kernel.projections import Projection, rebuild
from services.kernel.settings import LeagueSettings
from services.treasury.app import SERVICE, TREASURY_LOG
from services.treasury.projection import PROJECTION
from tests.harness.founding import TEST_POLICIES
from tests.harness.serving import closing


async def serve(settings: LeagueSettings) -> TestServer:
    """The treasury app alone on a real port (the caller closes it)."""
    server = TestServer(compose(settings, [SERVICE]))
    await server.start_server()
    return server


@dataclass
class Faucet:
    """The treasury over HTTP, as a wallet would call it."""

    session: aiohttp.ClientSession
    url: str
    manifest: LeagueManifest

    def request(
        self, owner: SigningKey, marks: int, *, request_id: str | None = None, **kw: Any
    ) -> ClaimRequest:
        return claim_request(
            owner,
            self.manifest,
            marks,
            request_id=request_id or f"claim-{time.monotonic_ns()}",
            at=kw.pop("at", int(time.time())),
            **kw,
        )

    async def post(self, body: dict[str, Any]) -> ClaimAnswer:
        async with self.session.post(f"{self.url}/treasury/claim", json=body) as response:
            text = await response.text()
            if response.status >= 400:
                assert response.content_type == "application/problem+json"
                raise LeagueProblem(Problem.model_validate_json(text))
            return ClaimAnswer.model_validate_json(text)

    async def claim(self, owner: SigningKey, marks: int, **kw: Any) -> ClaimAnswer:
        return await self.post(self.request(owner, marks, **kw).to_wire())

    async def supply(self) -> TreasurySupply:
        async with self.session.get(f"{self.url}/treasury") as response:
            assert response.status == 200
            return TreasurySupply.model_validate_json(await response.text())


def refused(caught: pytest.ExceptionInfo[LeagueProblem]) -> tuple[int, str]:
    return caught.value.status, caught.value.slug


async def check_supply(faucet: Faucet, store: EventStore) -> None:
    """The supply invariant: per denomination reserve + circulation is the note set's count,
    the marks sum to its total, the circulation is what the log issued and did not take
    back, no note is out twice, and the tables are what the log folds to."""
    supply = await faucet.supply()
    note_set = faucet.manifest.note_set
    assert supply.marks.supply == note_set.total_marks
    assert supply.marks.reserve + supply.marks.circulation == note_set.total_marks
    for row in supply.denominations:
        assert row.supply == note_set.count_of[row.denomination]
        assert row.reserve + row.circulation == row.supply
    out: Counter[int] = Counter()
    holding: dict[str, int] = {}
    for event in await store.read(-1, 100_000):
        body = parse_event(event, TREASURY_EVENTS)
        if isinstance(body, NoteIssued):
            serial = body.certificate.serial
            assert serial not in holding, f"{serial} issued while out"
            holding[serial] = body.certificate.issue
            out[body.certificate.denomination] += 1
        elif isinstance(body, NoteReturned):
            assert holding.pop(body.serial) == body.issue
            out[int(body.serial.split("-")[1][1:])] -= 1
    assert {d.denomination: d.circulation for d in supply.denominations} == {
        d: out[d] for d in note_set.count_of
    }
    assert (await rebuild(store, PROJECTION, commit=False)).agrees


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    async with closing(await serve(settings)) as server:
        yield server


@asynccontextmanager
async def checked_faucet(
    settings: LeagueSettings,
    server: TestServer,
    *rebuilt: tuple[web.AppKey[EventStore], Projection[Any]],
) -> AsyncIterator[Faucet]:
    """The faucet of the treasury ``server`` serves; on the way out (the test done) the supply
    invariant is checked, and each ``rebuilt`` log (the server's app key of the store, and its
    projection) rebuilds to its tables."""
    async with aiohttp.ClientSession() as session:
        faucet = Faucet(session, str(server.make_url("")).rstrip("/"), load_manifest(settings))
        yield faucet
        await check_supply(faucet, server.app[TREASURY_LOG])
        for log, projection in rebuilt:
            assert (await rebuild(server.app[log], projection, commit=False)).agrees


@pytest.fixture
async def faucet(settings: LeagueSettings, server: TestServer) -> AsyncIterator[Faucet]:
    """The treasury's faucet; the supply invariant is checked after the test."""
    async with checked_faucet(settings, server) as faucet:
        yield faucet


@asynccontextmanager
async def throttled_faucet(
    make_settings: Callable[..., LeagueSettings], burst: int
) -> AsyncIterator[tuple[Faucet, TestServer]]:
    """The treasury alone, a source network allowed ``burst`` requests at once and then one
    a minute (the manifest's source_prints_* policies): its faucet and server, the supply
    invariant checked on the way out."""
    policies = TEST_POLICIES.model_copy(
        update={"source_prints_per_minute": 1, "source_prints_burst": burst}
    )
    settings = make_settings(policies=policies)
    async with closing(await serve(settings)) as server, checked_faucet(settings, server) as faucet:
        yield faucet, server
