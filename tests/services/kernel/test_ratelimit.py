"""Per-source buckets shared by a service's workers through the database
(services/kernel/ratelimit.py): two workers spend from one bucket per source, so spreading
requests over them gains a source nothing; full buckets are forgotten without changing an
answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from ledger.errors import RateLimited
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.ratelimit import FORGET, SharedBuckets, TokenBuckets, source_buckets
from services.kernel.settings import LeagueSettings


@pytest.fixture
async def stores(settings: LeagueSettings) -> AsyncIterator[tuple[PostgresEventStore, ...]]:
    """The mint's log as two workers see it: two pools over one database."""
    manifest = load_manifest(settings)
    pools = [await asyncpg.create_pool(settings.database, min_size=1, max_size=2) for _ in range(2)]
    try:
        yield tuple(
            PostgresEventStore(
                pool,
                schema="mint",
                origin=f"{manifest.league}/mint",
                key=read_key(settings.keys_dir, "mint"),
            )
            for pool in pools
        )
    finally:
        for pool in pools:
            await pool.close()


async def test_two_workers_spend_from_one_bucket_per_source(
    stores: tuple[PostgresEventStore, ...],
) -> None:
    """A burst of 3 a minute: 2 spent through one worker leave 1 for the other; the next 2
    are refused (429) with the seconds until they could be, spending nothing; another source
    and another bucket of the same source are untouched."""
    first, second = (SharedBuckets(store, "stamps", per_minute=60, burst=3) for store in stores)
    await first.spend("203.0.113.0/24", 2)
    with pytest.raises(RateLimited) as refused:
        await second.spend("203.0.113.0/24", 2)
    assert refused.value.retry_after is not None
    assert 1 <= refused.value.retry_after <= 2
    await second.spend("203.0.113.0/24", 1)  # the refusal spent nothing
    with pytest.raises(RateLimited):
        await first.spend("203.0.113.0/24", 1)
    await second.spend("198.51.100.0/24", 3)
    await SharedBuckets(stores[0], "claims", per_minute=60, burst=3).spend("203.0.113.0/24", 3)


async def test_more_than_a_burst_at_once_is_refused_before_the_database(
    stores: tuple[PostgresEventStore, ...],
) -> None:
    """More tokens than the burst can never be spent: refused at once, a minute's wait."""
    buckets = SharedBuckets(stores[0], "stamps", per_minute=60, burst=3, what="prints")
    with pytest.raises(RateLimited, match="4 prints at once"):
        await buckets.spend("203.0.113.0/24", 4)
    assert await stores[0].fetchval("SELECT count(*) FROM mint.source_buckets") == 0


async def test_a_bucket_refills_at_the_published_rate(
    stores: tuple[PostgresEventStore, ...],
) -> None:
    """An empty bucket last spent a second ago at 60 a minute holds one token again (the
    database's clock refills it, whichever worker asks)."""
    buckets = SharedBuckets(stores[0], "stamps", per_minute=60, burst=3)
    await buckets.spend("203.0.113.0/24", 3)
    with pytest.raises(RateLimited):
        await buckets.spend("203.0.113.0/24", 1)
    await stores[0].fetchval(
        "UPDATE mint.source_buckets SET at = at - interval '1.5 seconds' RETURNING 1"
    )
    await buckets.spend("203.0.113.0/24", 1)
    with pytest.raises(RateLimited):
        await buckets.spend("203.0.113.0/24", 1)


async def test_full_buckets_are_forgotten_and_others_kept(
    stores: tuple[PostgresEventStore, ...],
) -> None:
    """The leader's sweep deletes a bucket full again (it holds what a fresh one would) and
    keeps one still refilling, whose refusal stands."""
    buckets = SharedBuckets(stores[0], "stamps", per_minute=60, burst=3)
    await buckets.spend("203.0.113.0/24", 3)
    await buckets.spend("198.51.100.0/24", 1)
    await stores[0].fetchval(
        "UPDATE mint.source_buckets SET full_at = clock_timestamp() - interval '1 second' "
        "WHERE source = '198.51.100.0/24' RETURNING 1"
    )
    gone = await stores[0].fetchval(FORGET.replace("{s}", "mint"))
    assert gone == 1
    rows = await stores[0].fetch("SELECT source FROM mint.source_buckets")
    assert [row[0] for row in rows] == ["203.0.113.0/24"]
    with pytest.raises(RateLimited):
        await buckets.spend("203.0.113.0/24", 1)


def test_one_worker_keeps_its_buckets_in_memory(stores: tuple[PostgresEventStore, ...]) -> None:
    """A service served by one process needs no round trip: its buckets are in memory."""
    kept = source_buckets(stores[0], "stamps", per_minute=60, burst=3, what="prints", shared=False)
    assert isinstance(kept, TokenBuckets)
    shared = source_buckets(stores[0], "stamps", per_minute=60, burst=3, what="prints", shared=True)
    assert isinstance(shared, SharedBuckets)


async def test_a_busy_sources_spends_are_taken_a_batch_a_statement(
    stores: tuple[PostgresEventStore, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spends of one source arriving while its statement is in flight are taken together in
    one statement (a busy source costs a statement a batch, not a request), and a batch the
    bucket cannot hold whole is spent again one by one in arrival order: the bucket grants
    and refuses exactly what it would one request at a time."""
    store = stores[0]
    statements = 0
    spend = store.fetchval

    async def counted(query: str, *args: object) -> object:
        nonlocal statements
        statements += 1
        return await spend(query, *args)

    monkeypatch.setattr(store, "fetchval", counted)
    # A token a minute: the test's own time refills nothing that changes an answer.
    buckets = SharedBuckets(store, "claims", per_minute=1, burst=10)
    await asyncio.gather(*(buckets.spend("203.0.113.0/24", 1) for _ in range(8)))
    assert statements == 1  # eight asked at once: one statement
    statements = 0
    answers = await asyncio.gather(
        *(buckets.spend("203.0.113.0/24", 1) for _ in range(4)), return_exceptions=True
    )
    # Four cannot be spent together from the two left: one by one, in arrival order.
    assert answers[:2] == [None, None]
    assert all(isinstance(answer, RateLimited) for answer in answers[2:])
    assert statements == 7  # the batch refused, 1, 1, then two refused (each with its wait)
    left = await store.fetchval("SELECT tokens FROM mint.source_buckets WHERE bucket = 'claims'")
    assert 0 <= left < 1
