"""The PostgreSQL event store: the whole contract, and what only a real database shows
(concurrent appenders, restarts, separate schemas, driver failures, jsonb round trips)."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import UTC, datetime

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.encoding import decode_b64, decode_b64url, encode_b64, encode_b64url
from ledger.keys import SigningKey
from ledger.leaf import canonical_leaf, format_time, parse_time
from ledger.merkle import leaf_hash
from services.eventlog import (
    EventLogError,
    NewEvent,
    PostgresEventStore,
    StoreUnavailable,
)
from tests.harness.eventlog import ORIGIN
from tests.services.eventlog.contract import EventStoreContract


class TestPostgresEventStore(EventStoreContract):
    """The contract, on a real PostgreSQL."""

    @pytest.fixture
    def store(self, log: PostgresEventStore) -> PostgresEventStore:
        return log


async def test_a_store_given_a_clock_records_its_time(pool: asyncpg.Pool, key: SigningKey) -> None:
    """A test sets the time explicitly: the store's clock replaces the database's for the
    transaction time, the events' recorded_at and now()."""
    moment = datetime(2026, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    store = PostgresEventStore(pool, schema="mint", origin=ORIGIN, key=key, clock=lambda: moment)
    event = await store.append("s", 0, "t", {})
    assert event.recorded_at == moment
    assert await store.now() == moment
    (read,) = await store.read()
    assert read.recorded_at == moment


async def test_an_event_is_timed_after_the_logs_lock_is_taken(
    pool: asyncpg.Pool, log: PostgresEventStore
) -> None:
    """An append that waits for the log's lock is timed when it has it, not when it asked:
    held by a transaction that changes nothing (no newer row to re-read), the lock's release
    comes before the waiting append's recorded_at, so recorded_at never runs backwards in the
    log (the tables' move clock reads it, docs/formats.md "Witnessed tables")."""
    first = await log.append("s", 0, "t", {})
    async with pool.acquire() as holder, holder.transaction():
        await holder.execute("SELECT size FROM mint.log_head FOR UPDATE")
        appending = asyncio.create_task(log.append("s", 1, "t", {}))
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database() AND query LIKE '%log_head%'"
        )
        for _ in range(500):
            if await pool.fetchval(waiting):
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the append never waited for the log's lock")
        released = await holder.fetchval("SELECT clock_timestamp()")
    second = await asyncio.wait_for(appending, timeout=60)
    assert first.recorded_at <= released <= second.recorded_at


async def test_concurrent_appenders_leave_no_gap_and_no_reader_skips(
    log: PostgresEventStore,
) -> None:
    """8 appenders × 500 events: seq 0..3999 dense, versions contiguous, the feed never skips."""
    writers, per_writer, total = 8, 500, 4000
    seen: list[int] = []

    async def writer(w: int) -> None:
        for v in range(per_writer):
            await log.append(f"w{w}", v, "t", {"w": w, "v": v})

    async def reader() -> None:
        last = -1
        while last < total - 1:
            page = await log.read(after=last, limit=500)
            for event in page:
                assert event.seq == last + 1, f"feed skipped from {last} to {event.seq}"
                last = event.seq
                seen.append(event.seq)
            await asyncio.sleep(0)

    await asyncio.wait_for(
        asyncio.gather(reader(), *(writer(w) for w in range(writers))), timeout=300
    )
    assert seen == list(range(total))
    rows = await log._pool.fetch("SELECT seq, stream, stream_version FROM mint.events ORDER BY seq")
    assert [r["seq"] for r in rows] == list(range(total))
    for w in range(writers):
        versions = [r["stream_version"] for r in rows if r["stream"] == f"w{w}"]
        assert versions == list(range(1, per_writer + 1))
    assert (await log.head()).size == total
    await log.verify_all()


async def test_restart_with_a_new_pool_sees_everything(
    log: PostgresEventStore, migrated_url: str, key: SigningKey
) -> None:
    """A new pool and log object over the same database resume at the next seq."""
    await log.append_batch([NewEvent("s", i, "t", {"i": i}) for i in range(10)])
    checkpoint = await log.sign_checkpoint()
    head = await log.head()
    pool = await asyncpg.create_pool(migrated_url, min_size=1, max_size=2)
    try:
        again = PostgresEventStore(pool, schema="mint", origin=ORIGIN, key=key)
        assert await again.head() == head
        assert await again.read() == await log.read()
        assert await again.latest_checkpoint() == checkpoint
        event = await again.append("s", 10, "t", {"i": 10})
        assert event.seq == 10
        await again.verify_all()
    finally:
        await pool.close()


async def test_logs_of_different_services_are_separate(pool: asyncpg.Pool) -> None:
    """Each service's log lives in its own schema with its own dense seq."""
    mint = PostgresEventStore(pool, schema="mint", origin="l/mint", key=SigningKey.generate())
    notary = PostgresEventStore(pool, schema="notary", origin="l/notary", key=SigningKey.generate())
    await mint.append("a", 0, "t", {})
    await mint.append("a", 1, "t", {})
    event = await notary.append("a", 0, "t", {})
    assert event.seq == 0
    assert (await mint.head()).size == 2


async def test_database_failures_are_wrapped(pool: asyncpg.Pool) -> None:
    """A driver error (here: a schema without tables) leaves as StoreUnavailable, whose
    message names no internals (docs/api.md "Conventions") while the driver's error stays chained
    for the operator's log."""
    log = PostgresEventStore(pool, schema="nowhere", origin="l/x", key=SigningKey.generate())
    with pytest.raises(StoreUnavailable) as caught:
        await log.append("s", 0, "t", {})
    assert "nowhere" not in caught.value.diagnostics()
    assert isinstance(caught.value.__cause__, asyncpg.PostgresError)
    assert "nowhere" in str(caught.value.__cause__)
    with pytest.raises(StoreUnavailable):
        await log.read()
    assert issubclass(StoreUnavailable, EventLogError)
    with pytest.raises(ValueError, match="schema"):
        PostgresEventStore(
            pool, schema="mint; DROP TABLE x", origin="l/x", key=SigningKey.generate()
        )


JSON_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)
_streams = itertools.count()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(body=st.dictionaries(JSON_TEXT, JSON_VALUES, max_size=5))
async def test_any_body_round_trips_through_jsonb_with_its_signature(
    log: PostgresEventStore, key: SigningKey, body: dict[str, object]
) -> None:
    """Any integral JSON body reads back equal, its leaf re-derives to the signed bytes, and
    the audit finds the jsonb column equal to the stored leaf."""
    stream = f"prop/{next(_streams)}"
    event = await log.append(stream, 0, "t", body)
    (stored,) = await log.read_stream(stream)
    assert stored == event
    assert stored.body == body
    assert leaf_hash(stored.leaf()) == event.leaf_hash
    key.public.verify_raw(stored.leaf(), stored.signature)
    await log.verify_all()


async def test_an_auditor_recomputes_a_leaf_from_the_feed_json_alone(
    log: PostgresEventStore, key: SigningKey
) -> None:
    """From the event as JSON text (time as text, hashes encoded), the leaf and both checks hold."""
    event = await log.append("print/A", 0, "stamped", {"serial": "A", "to": "Ž"})
    wire = json.dumps(
        {
            "seq": event.seq,
            "stream": event.stream,
            "stream_version": event.stream_version,
            "type": event.type,
            "body": event.body,
            "recorded_at": format_time(event.recorded_at),
            "leaf_hash": encode_b64(event.leaf_hash),
            "signature": encode_b64url(event.signature),
        }
    )
    seen = json.loads(wire)
    leaf = canonical_leaf(
        seq=seen["seq"],
        stream=seen["stream"],
        stream_version=seen["stream_version"],
        type=seen["type"],
        body=seen["body"],
        recorded_at=parse_time(seen["recorded_at"]),
    )
    assert leaf_hash(leaf) == decode_b64(seen["leaf_hash"])
    key.public.verify_raw(leaf, decode_b64url(seen["signature"]))
