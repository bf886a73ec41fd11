"""The defence against draining the runs (docs/economy.md): proof of work per print, priced by
how empty its run is, and a token bucket per source network, both published in the
manifest and enforced by the mint over real HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from apiclient.league import LeagueClient, LeagueProblem, new_request_id, stamp_request
from ledger.api.mint import Refused, Stamped
from ledger.errors import RateLimited
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.requests import StampRequest
from ledger.work import challenge, target, work_hash, work_per_print
from services.kernel.ratelimit import TokenBuckets, source_of
from services.kernel.settings import LeagueSettings
from tests.harness.founding import TEST_POLICIES
from tests.harness.mint import serve

#: A price small enough for tests (256 expected hashes), rising to 4× as a run empties.
PRICED = TEST_POLICIES.model_copy(update={"stamp_work": 256, "stamp_work_rise": 4})


def request_with_nonce(
    owner: SigningKey,
    manifest: LeagueManifest,
    prints: list[tuple[str, str]],
    pick: Callable[[int], bool],
) -> StampRequest:
    """A request whose nonce for each print is the first one ``pick`` accepts (by its hash)."""
    unsigned: dict[str, Any] = {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": new_request_id(),
        "time": int(time.time()),
        "owner": owner.public.to_text(),
        "prints": [{"title": t, "finish": f} for t, f in prints],
    }
    bound = challenge({"kind": StampRequest.KIND, **unsigned})
    nonces = [
        next(n for n in range(1 << 20) if pick(work_hash(bound, index, n)))
        for index in range(len(prints))
    ]
    return StampRequest.sign(owner, **unsigned, work=nonces)


async def test_a_request_without_work_is_refused_whole(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """Nonces short of the base price refuse the request (422 insufficient-work) before it
    reaches the writer; nothing is stamped."""
    server = await serve(make_settings(policies=PRICED))
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            manifest = await league.manifest()
            lazy = request_with_nonce(
                SigningKey.generate(),
                manifest,
                [("Gram", "standard")],
                lambda h: h >= target(256),
            )
            with pytest.raises(LeagueProblem) as caught:
                await league.stamp(lazy)
            assert (caught.value.status, caught.value.slug) == (422, "insufficient-work")
            assert (await league.census()).totals["all"].stamped == 0
    finally:
        await server.close()


async def test_the_price_rises_as_a_run_empties(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """After one of a run of three is stamped (tier 3 of 9), a nonce worth the base price
    but not the risen one refuses that print alone, naming the price; the client that reads
    the census pays the right price and is stamped."""
    server = await serve(make_settings(policies=PRICED))
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            manifest = await league.manifest()
            owner = SigningKey.generate()
            first = await league.stamp_prints(owner, manifest, [("Gram", "standard")])
            assert isinstance(first.items[0], Stamped)
            risen = work_per_print(256, 4, 3, 1)
            assert risen == 512
            cheap = request_with_nonce(
                owner,
                manifest,
                [("Gram", "standard")],
                lambda h: target(risen) <= h < target(256),
            )
            (refused,) = (await league.stamp(cheap)).items
            assert isinstance(refused, Refused)
            assert refused.problem == "insufficient-work"
            assert "512 expected hashes" in refused.reason
            paid = await league.stamp_prints(owner, manifest, [("Gram", "standard")])
            assert isinstance(paid.items[0], Stamped)
            assert paid.items[0].certificate.serial == "CZ-GRAM-0002"
    finally:
        await server.close()


async def test_a_source_over_its_bucket_gets_429_with_retry_after(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """With 60 prints a minute in bursts of 3 per source, three prints from 127.0.0.0/24 are
    stamped whatever keys sign them, and the fourth is 429 rate-limited with Retry-After."""
    policies = TEST_POLICIES.model_copy(
        update={"source_prints_per_minute": 60, "source_prints_burst": 3}
    )
    server = await serve(make_settings(policies=policies))
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            manifest = await league.manifest()
            for title in ("Gram", "Trace", "Alphabet"):
                await league.stamp(
                    stamp_request(SigningKey.generate(), manifest, [(title, "standard")])
                )
            extra = stamp_request(SigningKey.generate(), manifest, [("Tally", "standard")])
        async with (
            aiohttp.ClientSession() as session,
            session.post(server.make_url("/mint/stamp"), json=extra.to_wire()) as response,
        ):
            assert response.status == 429
            assert int(response.headers["Retry-After"]) >= 1
            assert (await response.json(content_type=None))["type"] == "/problems/rate-limited"
    finally:
        await server.close()


def test_sources_are_networks_not_addresses() -> None:
    """Addresses count by their /24 or /56; IPv4-mapped IPv6 counts as IPv4; anything else is
    one local source."""
    assert source_of("203.0.113.7") == source_of("203.0.113.200") == "203.0.113.0/24"
    assert source_of("2001:db8:0:1::5") == source_of("2001:db8:0:ff::1") == "2001:db8::/56"
    assert source_of("::ffff:203.0.113.9") == "203.0.113.0/24"
    assert source_of(None) == source_of("unix") == "local"


def test_a_bucket_refills_at_its_rate_and_forgets_the_oldest_sources() -> None:
    """A bucket holds at most its burst, refills at the published rate, refuses without
    spending, and at most max_sources buckets are kept."""
    now = [0.0]
    buckets = TokenBuckets(per_minute=60, burst=5, clock=lambda: now[0], max_sources=2)
    buckets.take("a", 5)
    with pytest.raises(RateLimited, match="try again in 2 s"):
        buckets.take("a", 2)
    now[0] += 2
    buckets.take("a", 2)
    with pytest.raises(RateLimited, match="more than a source may ever send"):
        buckets.take("b", 6)
    buckets.take("c", 1)
    assert len(buckets) == 2
