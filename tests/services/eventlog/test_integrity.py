"""verify_all re-derives the log from its rows and names the first bad seq."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import asyncpg
import pytest

from ledger.canonical import signing_bytes
from ledger.keys import SigningKey
from ledger.leaf import event_leaf
from ledger.merkle import leaf_hash
from services.eventlog import NewEvent, PostgresEventStore, TamperedLog, integrity

#: An edit of one row, and what verify_all says about it.
EDITS = {
    "body": (
        "UPDATE mint.events SET body = jsonb_set(body, '{i}', '999') WHERE seq = $1",
        "disagree on body",
    ),
    "stream": (
        "UPDATE mint.events SET stream = 'elsewhere' WHERE seq = $1",
        "disagree on stream",
    ),
    "stream_version": (
        "UPDATE mint.events SET stream_version = stream_version + 100 WHERE seq = $1",
        "disagree on stream_version",
    ),
    "type": ("UPDATE mint.events SET type = 'burned' WHERE seq = $1", "disagree on type"),
    "recorded_at": (
        "UPDATE mint.events SET recorded_at = recorded_at + interval '1 us' WHERE seq = $1",
        "disagree on recorded_at",
    ),
    "leaf_hash": (
        "UPDATE mint.events SET leaf_hash = sha256(leaf_hash) WHERE seq = $1",
        "leaf hash is not the hash of the stored leaf",
    ),
    "signature": (
        "UPDATE mint.events SET signature = set_byte(signature, 0, get_byte(signature, 0) # 1)"
        " WHERE seq = $1",
        "signature does not verify",
    ),
    # Byte 29 of a leaf lies inside its JSON (the tag is 10 bytes); one bit of it flips.
    "leaf": (
        "UPDATE mint.events SET leaf = set_byte(leaf, 29, get_byte(leaf, 29) # 1) WHERE seq = $1",
        "leaf hash is not the hash of the stored leaf",
    ),
    "leaf_and_leaf_hash": (
        "UPDATE mint.events SET leaf = set_byte(leaf, 29, get_byte(leaf, 29) # 1), leaf_hash ="
        " sha256('\\x00'::bytea || set_byte(leaf, 29, get_byte(leaf, 29) # 1)) WHERE seq = $1",
        "signature does not verify",
    ),
    "seq": ("UPDATE mint.events SET seq = seq + 1000 WHERE seq = $1", "is missing"),
    "deleted": ("DELETE FROM mint.events WHERE seq = $1", "is missing"),
}


async def _fill(log: PostgresEventStore, n: int, start: int = 0) -> None:
    """Events ``start .. start + n - 1``, spread round-robin over three streams."""
    items = [NewEvent(f"s{i % 3}", i // 3, "t", {"i": i}) for i in range(start, start + n)]
    await log.append_batch(items)


async def test_an_untouched_log_verifies(log: PostgresEventStore) -> None:
    """A log of appends and checkpoints passes, and the summary counts what was checked."""
    empty = await log.verify_all()
    assert empty.events == 0
    await log.sign_checkpoint()
    await _fill(log, 39)
    await log.sign_checkpoint()
    await _fill(log, 10, start=39)
    summary = await log.verify_all()
    assert (summary.events, summary.checkpoints) == (49, 2)
    assert summary.subtrees == 49 - (49).bit_count()
    assert summary.root == (await log.head()).root
    assert summary.cpu_seconds > 0


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("seq", [0, 23, 48])
async def test_an_edited_row_is_named_by_its_seq(
    log: PostgresEventStore, edit: str, seq: int
) -> None:
    """Editing any column of one row (or deleting it) makes verify_all name exactly that seq."""
    await _fill(log, 49)
    sql, reason = EDITS[edit]
    await log._pool.execute(sql, seq)
    with pytest.raises(TamperedLog) as caught:
        await log.verify_all()
    assert caught.value.seq == seq, caught.value.diagnostics()
    assert f"seq {seq}" in caught.value.diagnostics()
    assert reason in caught.value.diagnostics()


@pytest.mark.parametrize(
    ("signed", "stored", "reason"),
    [
        ("1", "true", "disagree on body"),
        ("0", "false", "disagree on body"),
        ("true", "1", "disagree on body"),
        ("[1, false]", "[true, 0]", "disagree on body"),
        ("null", "0", "disagree on body"),
        ("7", "7.0", "body is not integral JSON"),
        ("7", "70e-1", "body is not integral JSON"),
    ],
)
async def test_a_body_value_of_another_json_type_is_named(
    log: PostgresEventStore, signed: str, stored: str, reason: str
) -> None:
    """A value swapped for one Python calls equal (1 == True, 0 == False, 7 == 7.0) is named."""
    await log.append("s", 0, "t", {"x": json.loads(signed)})
    await log.append("s", 1, "t", {"x": json.loads(signed)})
    await log._pool.execute(
        "UPDATE mint.events SET body = jsonb_set(body, '{x}', $1::jsonb) WHERE seq = 1", stored
    )
    with pytest.raises(TamperedLog, match=reason) as caught:
        await log.verify_all()
    assert caught.value.seq == 1


@pytest.mark.parametrize("moment", ["infinity", "-infinity", "10000-01-01 00:00:00+00"])
async def test_a_time_no_event_can_hold_is_named(log: PostgresEventStore, moment: str) -> None:
    """recorded_at set to a value no Python datetime holds is named, not a driver error."""
    await _fill(log, 49)
    await log._pool.execute(
        "UPDATE mint.events SET recorded_at = $2::text::timestamptz WHERE seq = $1", 23, moment
    )
    with pytest.raises(TamperedLog, match="disagree on recorded_at") as caught:
        await log.verify_all()
    assert caught.value.seq == 23


async def test_the_sessions_time_zone_does_not_matter(
    log: PostgresEventStore, migrated_url: str, key: SigningKey
) -> None:
    """Times are compared as UTC text, so an audit over a session in another zone passes."""
    await _fill(log, 10)
    pool = await asyncpg.create_pool(
        migrated_url, min_size=1, max_size=2, server_settings={"timezone": "Pacific/Chatham"}
    )
    try:
        elsewhere = PostgresEventStore(pool, schema="mint", origin=log.origin, key=key)
        assert await pool.fetchval("SHOW timezone") == "Pacific/Chatham"
        assert (await elsewhere.verify_all()).root == (await log.head()).root
    finally:
        await pool.close()


async def _store_signed_leaf(
    log: PostgresEventStore, key: SigningKey, seq: int, leaf: bytes
) -> None:
    await log._pool.execute(
        "UPDATE mint.events SET leaf = $2, leaf_hash = $3, signature = $4 WHERE seq = $1",
        seq,
        leaf,
        leaf_hash(leaf),
        key.sign_raw(leaf),
    )


async def test_another_rows_signed_leaf_is_named(log: PostgresEventStore) -> None:
    """A row given another row's leaf, hash and signature (all valid) is named by its seq."""
    await _fill(log, 49)
    await log._pool.execute(
        "UPDATE mint.events AS e SET leaf = o.leaf, leaf_hash = o.leaf_hash,"
        " signature = o.signature FROM mint.events AS o WHERE e.seq = 23 AND o.seq = 26"
    )
    with pytest.raises(TamperedLog) as caught:
        await log.verify_all()
    assert caught.value.seq == 23
    assert "disagree on body, seq, stream_version" in caught.value.diagnostics()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"body": {"i": 999}}, "disagree on body"),
        ({"type": "burned", "stream": "s0"}, "disagree on stream, type"),
        ({"recorded_at": "2026-01-01T00:00:00.000000Z"}, "disagree on recorded_at"),
        ({"stream_version": True}, "disagree on stream_version"),
        ({"extra": 1}, "disagree on extra"),
    ],
)
async def test_a_signed_leaf_that_says_something_else_than_its_row_is_named(
    log: PostgresEventStore, key: SigningKey, change: dict[str, object], reason: str
) -> None:
    """A leaf hashed and signed by the service key but not matching the columns is named."""
    await _fill(log, 49)
    row = await log.event(23)
    assert row is not None
    leaf = event_leaf(
        seq=23,
        stream=row.stream,
        stream_version=row.stream_version,
        type=row.type,
        body=row.body,
        recorded_at=row.recorded_at,
    )
    await _store_signed_leaf(log, key, 23, leaf)
    await log.verify_all()  # the same content, signed again: nothing to name
    content = json.loads(leaf[len(b"CZ1/event\n") :]) | change
    await _store_signed_leaf(log, key, 23, signing_bytes("event", content))
    with pytest.raises(TamperedLog, match=reason) as caught:
        await log.verify_all()
    assert caught.value.seq == 23


@pytest.mark.parametrize(
    "leaf",
    [
        b'CZ1/event\n{"seq":23',
        b'CZ1/event\n{"seq":23} ',
        b'CZ1/event\n{"seq":2.3e1}',
        b"CZ1/event\n\xff",
        b'CZ1/print\n{"seq":23}',
        b"",
    ],
)
async def test_a_signed_leaf_that_is_not_an_event_is_named(
    log: PostgresEventStore, key: SigningKey, leaf: bytes
) -> None:
    """Signed bytes that are not the event tag and one integral JSON object are named."""
    await _fill(log, 49)
    await log._pool.execute("ALTER TABLE mint.events DROP CONSTRAINT events_leaf_check")
    await _store_signed_leaf(log, key, 23, leaf)
    with pytest.raises(TamperedLog, match="not an event") as caught:
        await log.verify_all()
    assert caught.value.seq == 23


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> int:
    """Pages of 8 events, so that a short log spans many (the size travels to the workers)."""
    monkeypatch.setattr(integrity, "PAGE", 8)
    return 8


async def test_edits_are_found_on_several_processes(
    log: PostgresEventStore, migrated_url: str, small_pages: int
) -> None:
    """With the leaf pass spread over two processes, the first bad seq is still named."""
    await _fill(log, 60)
    whole = await log.verify_all(database_url=migrated_url, workers=2)
    assert whole.workers == 2
    alone = await log.verify_all()
    assert whole == dataclasses.replace(alone, workers=2, cpu_seconds=whole.cpu_seconds)
    await log._pool.execute(EDITS["body"][0], 50)
    await log._pool.execute(EDITS["signature"][0], 12)
    await log._pool.execute(EDITS["leaf"][0], 45)
    with pytest.raises(TamperedLog) as caught:
        await log.verify_all(database_url=migrated_url, workers=2)
    assert caught.value.seq == 12


async def test_a_worker_checks_the_pages_it_claims_in_the_exported_snapshot(
    log: PostgresEventStore, migrated_url: str, small_pages: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's entry point imports the snapshot (an edit committed later is not its to
    see), checks every page left to claim, and reports a bad row on the page that holds it."""
    await _fill(log, 30)
    await log._pool.execute(EDITS["type"][0], 27)
    rows = await log._pool.fetch("SELECT leaf_hash FROM mint.events ORDER BY seq")
    async with log._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        snapshot = await conn.fetchval("SELECT pg_export_snapshot()")
        await log._pool.execute(EDITS["signature"][0], 10)
        pages = integrity._Pages(30)
        assert pages.claim() == 0  # another process has taken the first page
        monkeypatch.setattr(integrity, "_shared_pages", pages)
        done, cpu = await asyncio.to_thread(
            integrity._verify_pages_worker, migrated_url, snapshot, "mint", log.public_key.raw
        )
    assert sorted(done) == [1, 2, 3]
    assert done[1] == (None, b"".join(r[0] for r in rows[8:16]))
    assert done[2] == (None, b"".join(r[0] for r in rows[16:24]))
    bad, hashes = done[3]
    assert bad is not None
    assert (bad.seq, bad.reason) == (27, "the row and its signed leaf disagree on type")
    assert hashes == b"".join(r[0] for r in rows[24:27])
    assert cpu > 0


async def test_verify_all_reads_one_snapshot_while_appends_go_on(
    log: PostgresEventStore, migrated_url: str
) -> None:
    """Appends and checkpoints committed during an audit neither fail it nor get half-read."""
    await _fill(log, 300)
    stop = asyncio.Event()

    async def keep_appending() -> int:
        n = 300
        while not stop.is_set():
            await _fill(log, 7, start=n)
            await log.sign_checkpoint()
            n += 7
        return n

    appender = asyncio.create_task(keep_appending())
    try:
        for workers in (1, 2, 1):
            summary = await log.verify_all(database_url=migrated_url, workers=workers)
            assert summary.events >= 300
    finally:
        stop.set()
        total = await appender
    assert (await log.verify_all()).events == total


async def test_a_stored_subtree_edit_is_found(log: PostgresEventStore) -> None:
    """An altered stored subtree is named at the seq that completes it."""
    await _fill(log, 16)
    await log._pool.execute(
        "UPDATE mint.tree_nodes SET hash = sha256(hash) WHERE level = 2 AND idx = 1"
    )
    with pytest.raises(TamperedLog, match=r"subtree \(2, 1\)") as caught:
        await log.verify_all()
    assert caught.value.seq == 7


async def test_a_forged_checkpoint_is_found(log: PostgresEventStore) -> None:
    """A checkpoint whose signature or root no longer matches the events is named."""
    await _fill(log, 10)
    await log.sign_checkpoint()
    note = await log._pool.fetchval("SELECT note FROM mint.checkpoints")
    unsigned = note.rsplit("\n\n", 1)[0] + "\n\n— league.test/mint AAAAAAAA\n"
    await log._pool.execute("UPDATE mint.checkpoints SET note = $1", unsigned)
    with pytest.raises(TamperedLog, match="no signature from a known key") as caught:
        await log.verify_all()
    assert caught.value.seq == 9
    await log._pool.execute("UPDATE mint.checkpoints SET note = $1", note)
    await log.verify_all()
    await log._pool.execute("UPDATE mint.checkpoints SET root_hash = sha256(root_hash)")
    with pytest.raises(TamperedLog, match="checkpoint of size 10") as caught:
        await log.verify_all()
    assert caught.value.seq == 9
