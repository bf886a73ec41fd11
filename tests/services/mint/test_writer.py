"""The mint's one writer: one clock (the transaction's) for freshness, allowance days and
recorded times, and a bounded queue that answers 503 with Retry-After when full."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import aiohttp
import asyncpg
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.api.mint import StampAnswer
from ledger.errors import AllowanceExhausted, StaleRequest
from ledger.keys import SigningKey
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint import stamping, tables
from services.mint.app import MINT, STAMPER
from services.mint.mint import Mint
from services.mint.stamping import present, stamp_group
from tests.harness.founding import TEST_POLICIES


class Clock:
    """A time a test sets and moves."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def __call__(self) -> datetime:
        return self.moment


async def test_the_transaction_time_decides_the_allowance_day(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """Two prints a day: two stamped at 23:59:59.9 exhaust that UTC day; 0.2 s later it is the
    next day by the one clock, so a third is stamped, recorded at that time and counted on
    that day. A request signed by the owner's clock counts only for freshness."""
    settings = make_settings(
        policies=TEST_POLICIES.model_copy(update={"stamp_allowance_per_day": 2})
    )
    manifest = load_manifest(settings)
    key = load_service_key(settings, manifest, "mint", None)
    clock = Clock(datetime(2026, 12, 31, 23, 59, 59, 900_000, tzinfo=UTC))
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(
            pool, schema="mint", origin=f"{manifest.league}/mint", key=key, clock=clock
        )
        await tables.bind_league(store, manifest)
        mint = Mint(manifest, key, store)
        owner = SigningKey.generate()

        def request(title: str) -> stamping.Presented:
            signed_at = int(clock.moment.timestamp())
            return present(
                mint, stamp_request(owner, manifest, [(title, "standard")], at=signed_at)
            )

        first = await stamp_group(mint, [request("Gram"), request("Trace")])
        assert all(isinstance(answer, StampAnswer) for answer in first)
        (late,) = await stamp_group(mint, [request("Alphabet")])
        assert isinstance(late, AllowanceExhausted)
        clock.moment += timedelta(seconds=0.2)
        (next_day,) = await stamp_group(mint, [request("Alphabet")])
        assert isinstance(next_day, StampAnswer)
        assert next_day.allowance.day == "2027-01-01"
        assert next_day.allowance.used_today == 1
        events = await store.read()
        assert [e.recorded_at.date().isoformat() for e in events] == [
            "2026-12-31",
            "2026-12-31",
            "2027-01-01",
        ]
        days = await pool.fetch("SELECT day, stamped FROM mint.allowances ORDER BY day")
        assert [(r["day"].isoformat(), r["stamped"]) for r in days] == [
            ("2026-12-31", 2),
            ("2027-01-01", 1),
        ]
        clock.moment += timedelta(seconds=stamping.MAX_CLOCK_SKEW + 1)
        stale = present(
            mint,
            stamp_request(
                owner, manifest, [("Gram", "gilt")], at=int(clock.moment.timestamp()) - 400
            ),
        )
        (refused,) = await stamp_group(mint, [stale])
        assert isinstance(refused, StaleRequest)


async def test_a_full_queue_answers_503_with_retry_after(
    server: TestServer, league: LeagueClient
) -> None:
    """While the writer waits for the log's lock, requests queue up to the bound; the next is
    503 `overloaded` with Retry-After; once the lock is free every queued request is stamped."""
    server.app[STAMPER].writer.max_waiting = 2
    manifest = await league.manifest()
    store = server.app[MINT].store
    holding, release = asyncio.Event(), asyncio.Event()

    async def hold_the_lock() -> None:
        async with store.transaction() as tx:
            await tx.lock()
            holding.set()
            await release.wait()

    holder = asyncio.create_task(hold_the_lock())
    await holding.wait()
    titles = ("Gram", "Trace", "Alphabet")
    queued = []
    for title in titles:  # the first is taken by the writer (blocked), two wait
        request = stamp_request(SigningKey.generate(), manifest, [(title, "standard")])
        queued.append(asyncio.create_task(league.stamp(request)))
        await asyncio.sleep(0.2)
    extra = stamp_request(SigningKey.generate(), manifest, [("Admission", "standard")])
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.make_url("/mint/stamp"), json=extra.to_wire()) as response,
    ):
        assert response.status == 503
        assert response.headers["Retry-After"] == "1"
        assert (await response.json(content_type=None))["type"] == "/problems/overloaded"
    release.set()
    await holder
    answers = await asyncio.gather(*queued)
    assert [a.items[0].status for a in answers] == ["stamped"] * 3
