"""The notary follows the mint's feed over HTTP, exactly once across a SIGKILL and a restart
(docs/architecture.md §4: the services follow each other's feeds)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.catalog import PLAYING
from ledger.certificates import PrintCertificate
from ledger.checkpoint import Checkpoint
from ledger.endorsements import Chain
from ledger.keys import SigningKey
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.founding import TEST_POLICIES
from tests.harness.mint import checkpoint_covering, serve
from tests.harness.ports import free_port
from tests.harness.served import GUARD_SECONDS, serve_child
from tests.harness.serving import closing, composed
from tests.harness.trading import Trade, hop


@pytest.fixture
async def mint_alone(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    """The mint served by itself: the notary runs in its own process, following it."""
    async with closing(await serve(settings)) as server:
        yield server


async def followed(pool: asyncpg.Pool) -> int:
    """The next mint seq the notary will apply (0 before its first page)."""
    return await pool.fetchval(
        "SELECT coalesce((SELECT position FROM notary.followed_feeds WHERE source = 'mint'), 0)"
    )


async def wait_until_followed(pool: asyncpg.Pool, size: int) -> None:
    """Until the notary followed ``size`` mint events (a guard against a stuck follower, not a
    timing assertion)."""
    for _ in range(GUARD_SECONDS * 20):
        if await followed(pool) >= size:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the notary never followed the mint to {size} events")


async def test_the_notary_killed_while_following_loses_and_doubles_nothing(
    settings: LeagueSettings, mint_alone: TestServer
) -> None:
    """While prints are being stamped, a notary process following the mint is killed with
    SIGKILL; more are stamped while it is down; a restarted notary ends with every stamp of
    the mint's log exactly once, in order, and notarizes a trade of the last one (nothing lost
    or doubled)."""
    mint_url = str(mint_alone.make_url("")).rstrip("/")
    titles = [card.name for card in PLAYING][:30]
    owner, receiver = SigningKey.generate(), SigningKey.generate()
    async with (
        LeagueClient(mint_url) as league,
        asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool,
    ):
        manifest = await league.manifest()

        async def stamp(chosen: list[str]) -> None:
            for title in chosen:
                await league.stamp(stamp_request(owner, manifest, [(title, "standard")]))

        await stamp(titles[:5])
        notary, _ = await serve_child(settings, "notary", MINT_URL=mint_url)
        try:
            stamping = asyncio.create_task(stamp(titles[5:20]))
            await wait_until_followed(pool, 1)
        finally:
            notary.send_signal(signal.SIGKILL)
            await notary.wait()
        await stamping
        await stamp(titles[20:])
        assert await followed(pool) < len(titles)  # it has missed the stamps since the kill

        notary, notary_url = await serve_child(settings, "notary", MINT_URL=mint_url)
        try:
            await checkpoint_covering(league, len(titles))
            await wait_until_followed(pool, len(titles))
            rows = await pool.fetch("SELECT serial, mint_seq FROM notary.prints ORDER BY mint_seq")
            feed = await league.events(-1, 1000)
            assert [(r["serial"], r["mint_seq"]) for r in rows] == [
                (e.body["certificate"]["serial"], e.seq) for e in feed.events
            ]
            assert len(rows) == len(titles)

            last = feed.events[-1].body["certificate"]
            chain = Chain(certificate=PrintCertificate.from_wire(last), endorsements=())
            async with LeagueClient(notary_url) as at_notary:
                answer = await at_notary.notarize([hop(chain, owner, receiver)])
            assert answer.recorded == 1
        finally:
            notary.send_signal(signal.SIGTERM)
            await notary.wait()


async def test_a_print_stamped_a_moment_ago_is_followed_without_waiting_for_the_beat(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """The notary asked about a print the mint has stamped but not yet checkpointed asks the
    mint for a checkpoint (services/eventlog/signals.py) instead of waiting for its beat:
    with a beat of a minute, the print's provenance answers, its stamp proven in a mint
    checkpoint that covers it (the guard is shorter than the beat)."""
    slow = TEST_POLICIES.model_copy(update={"checkpoint_interval_ms": 60_000})
    settings = make_settings(policies=slow).model_copy(update={"port": free_port()})
    owner = SigningKey.generate()
    async with (
        composed(settings, [MINT, NOTARY]) as server,
        LeagueClient(str(server.make_url(""))) as league,
    ):
        stamped = await Trade(league, await league.manifest()).stamp(owner)
        life = await asyncio.wait_for(league.provenance(stamped.serial), GUARD_SECONDS / 4)
    assert life.stamp is not None
    assert Checkpoint.from_note(life.stamp.checkpoint).size > life.stamp.index
    assert life.holder == owner.public.to_text()
