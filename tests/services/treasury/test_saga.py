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

import time

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient, LeagueProblem, stamp_request
from ledger.api.treasury import BuyRequest, buy_request
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from services.kernel.compose import compose
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY
from services.treasury.buying import KILL_POINTS
from tests.harness.saga import (
    CASES,
    DELIVERED,
    REFUNDED,
    REJECTED,
    bought_across_a_kill,
    checked,
    mint_stamps,
    peers,
    ports,
    stamps_of,
    until_answered,
)
from tests.harness.trading import T0
from tests.harness.treasury import Faucet

__all__ = ["peers", "ports"]  # fixtures


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
