"""The event store on a real PostgreSQL: appends, feed, conflicts, projections, restarts."""

from __future__ import annotations

import asyncio
import itertools
import json

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.encoding import decode_b64, decode_b64url, encode_b64, encode_b64url
from ledger.errors import LedgerError
from ledger.keys import SigningKey
from ledger.leaf import canonical_leaf, format_time, parse_time
from ledger.merkle import leaf_hash
from services.eventlog import (
    EventLogError,
    NewEvent,
    PostgresEventStore,
    StoreIntegrityError,
    StoreUnavailable,
    StreamConflict,
)
from tests.services.eventlog.conftest import ORIGIN


async def test_append_then_read_the_feed(log: PostgresEventStore, key: SigningKey) -> None:
    """Appends get dense seqs and stream versions; the feed returns them after N, signed."""
    a = await log.append("print/A", 0, "stamped", {"serial": "A", "n": 1})
    b = await log.append("print/B", 0, "stamped", {"serial": "B"})
    c = await log.append("print/A", 1, "endorsed", {"hop": 1, "to": "ü"})
    assert [(e.seq, e.stream, e.stream_version) for e in (a, b, c)] == [
        (0, "print/A", 1),
        (1, "print/B", 1),
        (2, "print/A", 2),
    ]
    assert await log.read() == [a, b, c]
    assert await log.read(after=0) == [b, c]
    assert await log.read(after=0, limit=1) == [b]
    assert await log.read(after=2) == []
    assert await log.read_stream("print/A") == [a, c]
    assert await log.event(1) == b
    assert await log.event(3) is None
    for event in (a, b, c):
        key.public.verify_raw(event.leaf(), event.signature)
        assert event.leaf_hash == leaf_hash(event.leaf())
    head = await log.head()
    assert head.size == 3


async def test_wrong_expected_version_is_a_stream_conflict(log: PostgresEventStore) -> None:
    """A stale expected version raises StreamConflict naming stream, expected and actual."""
    await log.append("s", 0, "t", {})
    await log.append("s", 1, "t", {})
    with pytest.raises(StreamConflict) as caught:
        await log.append("s", 1, "t", {})
    assert (caught.value.stream, caught.value.expected, caught.value.actual) == ("s", 1, 2)
    assert "stream 's' is at version 2" in caught.value.diagnostics()
    with pytest.raises(StreamConflict):
        await log.append("new", 3, "t", {})
    assert (await log.head()).size == 2


async def test_a_batch_is_all_or_nothing(log: PostgresEventStore) -> None:
    """A conflict anywhere in a batch writes none of it; a good batch chains versions."""
    await log.append("x", 0, "t", {})
    bad = [NewEvent("y", 0, "t", {}), NewEvent("x", 0, "t", {})]
    with pytest.raises(StreamConflict):
        await log.append_batch(bad)
    assert (await log.head()).size == 1
    good = [NewEvent("y", 0, "t", {"i": 0}), NewEvent("y", 1, "t", {"i": 1})]
    events = await log.append_batch(good)
    assert [(e.seq, e.stream_version) for e in events] == [(1, 1), (2, 2)]


@pytest.mark.parametrize(
    ("stream", "body"),
    [
        ("s", {"price": 1.5}),
        ("s", {"nul": "a\x00b"}),
        ("", {}),
        ("s" * 201, {}),
        ("s", {"big": "x" * 70_000}),
        ("s", ["not", "an", "object"]),
    ],
)
async def test_bad_events_are_refused_before_writing(
    log: PostgresEventStore, stream: str, body: dict[str, object]
) -> None:
    """Floats, NULs, empty or long streams and oversized bodies are typed errors, not rows."""
    with pytest.raises(LedgerError):
        await log.append(stream, 0, "t", body)
    assert (await log.head()).size == 0


async def test_projection_commits_and_rolls_back_with_the_append(log: PostgresEventStore) -> None:
    """Projection SQL in the append's transaction commits with it and rolls back with it."""
    await log._pool.execute("CREATE TABLE mint.census (serial text PRIMARY KEY)")
    async with log.transaction() as tx:
        event = await tx.append("print/A", 0, "stamped", {"serial": "A"})
        await tx.execute("INSERT INTO mint.census VALUES ($1)", event.body["serial"])

    async def failing_handler() -> None:
        async with log.transaction() as tx:
            await tx.append("print/B", 0, "stamped", {"serial": "B"})
            await tx.execute("INSERT INTO mint.census VALUES ('B')")
            raise RuntimeError("handler failed after the append")

    with pytest.raises(RuntimeError):
        await failing_handler()
    assert await log._pool.fetch("SELECT serial FROM mint.census") == [("A",)]
    assert [e.stream for e in await log.read()] == ["print/A"]
    assert (await log.head()).size == 1


async def test_lock_first_makes_check_then_append_atomic(log: PostgresEventStore) -> None:
    """Taking the log lock before reading a projection stops two callers both passing a check."""
    await log._pool.execute("CREATE TABLE mint.run (remaining int NOT NULL)")
    await log._pool.execute("INSERT INTO mint.run VALUES (1)")

    async def stamp(who: str) -> bool:
        async with log.transaction() as tx:
            next_seq = await tx.lock()
            remaining = await tx.fetchval("SELECT remaining FROM mint.run")
            await asyncio.sleep(0.05)  # widen the window a lock-free check would lose in
            if remaining == 0:
                return False
            event = await tx.append(f"print/{who}", 0, "stamped", {"to": who})
            assert event.seq == next_seq
            await tx.execute("UPDATE mint.run SET remaining = remaining - 1")
            return True

    results = await asyncio.gather(*(stamp(f"p{i}") for i in range(4)))
    assert sorted(results) == [False, False, False, True]
    assert (await log.head()).size == 1


async def test_projection_constraint_violations_are_typed(log: PostgresEventStore) -> None:
    """A projection write the database refuses rolls back the append as StoreIntegrityError."""
    await log._pool.execute("CREATE TABLE mint.owners (serial text PRIMARY KEY)")
    await log._pool.execute("INSERT INTO mint.owners VALUES ('A')")

    async def duplicate() -> None:
        async with log.transaction() as tx:
            await tx.append("print/A", 0, "stamped", {})
            await tx.execute("INSERT INTO mint.owners VALUES ('A')")

    with pytest.raises(StoreIntegrityError):
        await duplicate()
    assert await log.stream_version("print/A") == 0
    await log.append("print/A", 0, "stamped", {})
    assert await log.stream_version("print/A") == 1


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
    """A driver error (here: a schema without tables) leaves as StoreUnavailable."""
    log = PostgresEventStore(pool, schema="nowhere", origin="l/x", key=SigningKey.generate())
    with pytest.raises(StoreUnavailable, match="nowhere"):
        await log.append("s", 0, "t", {})
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
