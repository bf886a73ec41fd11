"""The purchase saga survives a crash of any service (issue 11 item 2 and 4): the treasury
killed at each step, and the mint down during a buy, each purchase completes or is refunded
exactly once.

The treasury runs as ``league serve treasury`` in a child process on a known port, with
``TREASURY_KILL_AT`` (test-only, docs/api.md) set to the step it must die at; the mint and the
notary are served in this process and follow it. After the kill a treasury without the
setting is started over the same database: its resumer, and the same request sent again, take
the purchase to its end. Every step is then in the purchase's stream exactly once, the mint
stamped its order at most once, and the supply invariant holds.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient, LeagueProblem, stamp_request
from ledger.api.treasury import BuyAnswer, BuyRequest, buy_request
from ledger.endorsements import Chain, endorse
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey, SigningKey
from services.eventlog import PostgresEventStore
from services.kernel.compose import compose
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY
from services.treasury.buying import KILL_POINTS
from tests.services.notary.conftest import T0, free_port
from tests.services.treasury.conftest import Faucet, check_supply

SCRIPT = Path(sys.executable).parent / "league"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "services.league.cli"]
#: A guard against a hung child, not a timing assertion.
GUARD_SECONDS = 120

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


@pytest.mark.parametrize(("point", "path"), CASES, ids=[f"{p}-{q}" for p, q in CASES])
async def test_the_treasury_killed_at_each_step_ends_the_purchase_once(
    settings: LeagueSettings,
    ports: tuple[int, int],
    peers: tuple[TestServer, LeagueClient],
    point: str,
    path: str,
) -> None:
    """Killed at ``point`` on the way to ``path``, the treasury restarted ends the purchase
    exactly once: each step once in its stream, at most one stamp for its order, the change
    or refund issued once, and the supply invariant holds."""
    assert point in KILL_POINTS
    server, league = peers
    manifest = load_manifest(settings)
    treasury_key = PublicKey.from_text(manifest.treasury)
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    pid = f"buy-{point}-{path}"
    title = "Escrow" if path == "refunded" else "Tally"
    if path == "refunded":  # the run of 3 stamped out before the purchase
        await league.stamp(stamp_request(friend, manifest, [(title, "standard")] * 3))
    notes: list[Chain] = []

    async def prepare(faucet: Faucet) -> BuyRequest:
        notes.extend(Chain(certificate=n, endorsements=())
                     for n in (await faucet.claim(buyer, 50)).notes)
        if path == "rejected":  # the buyer gave the first note to a friend first
            await league.notarize([endorse(notes[0], buyer, friend.public, T0)])
        return buy_request(
            buyer, manifest, title, [endorse(n, buyer, treasury_key, T0) for n in notes],
            purchase_id=pid, at=int(time.time()),
        )

    answer, steps = await bought_across_a_kill(settings, ports[1], server, point, prepare)
    assert answer.outcome == path
    assert steps == {"delivered": DELIVERED, "refunded": REFUNDED, "rejected": REJECTED}[path]
    stamped = stamps_of(await mint_stamps(server), pid)
    if path == "delivered":
        assert stamped == 1
        assert answer.stamped is not None
        assert answer.stamped.issued_to == buyer.public.to_text()
        assert sorted(n.denomination for n in answer.change) == [5, 5, 5, 5]
    else:
        assert stamped == 0
        assert answer.change == []
    if path == "refunded":
        assert [(n.serial, n.issue) for n in answer.refund] == [
            (n.serial, n.issue + 1) for n in notes
        ]
    if path == "rejected":
        (proof,) = answer.proofs
        assert proof.verify() == buyer.public


async def test_the_mint_down_during_a_buy_completes_once_it_is_back(
    settings: LeagueSettings, ports: tuple[int, int]
) -> None:
    """The mint is down when a purchase is made: it waits open (503 retry-later) after its
    payment is notarized and its order signed; once the mint is up, the treasury's resumer
    completes it, the same request answers delivered, and the mint stamped the order once."""
    here, mint_port = ports
    own = settings.model_copy(
        update={"port": here, "mint_url": f"http://127.0.0.1:{mint_port}"}
    )
    server = TestServer(compose(own, [TREASURY, NOTARY]), host="127.0.0.1", port=here)
    await server.start_server()
    mint: TestServer | None = None
    try:
        url = str(server.make_url("")).rstrip("/")
        manifest = load_manifest(settings)
        buyer = SigningKey.generate()
        async with aiohttp.ClientSession() as session:
            faucet = Faucet(session, url, manifest)
            notes = [Chain(certificate=n, endorsements=())
                     for n in (await faucet.claim(buyer, 50)).notes]
            request = buy_request(
                buyer, manifest, "Pairing",
                [endorse(n, buyer, PublicKey.from_text(manifest.treasury), T0) for n in notes],
                purchase_id="buy-mint-down", at=int(time.time()),
            )
            async with session.post(f"{url}/treasury/buy", json=request.to_wire()) as response:
                assert response.status == 503
                assert "mint" in (await response.text())
            async with LeagueClient(url) as league:
                with pytest.raises(LeagueProblem) as waiting:
                    await league.buy(request)
                assert waiting.value.slug == "retry-later"

            mint = TestServer(
                compose(settings.model_copy(update={"port": mint_port}), [MINT]),
                host="127.0.0.1", port=mint_port,
            )
            await mint.start_server()
            answer = await until_answered(session, url, request)
            assert answer.outcome == "delivered"
            assert sorted(n.denomination for n in answer.change) == [5, 5, 5, 5]
            steps = await checked(settings, faucet, "buy-mint-down")
            assert steps == DELIVERED
            assert stamps_of(await mint_stamps(mint), "buy-mint-down") == 1
    finally:
        if mint is not None:
            await mint.close()
        await server.close()
