"""verify_all re-derives the log from its rows and names the first bad seq."""

from __future__ import annotations

import asyncio

import pytest

from services.eventlog import EventLog, NewEvent, TamperedLog

EDITS = {
    "body": "UPDATE mint.events SET body = jsonb_set(body, '{i}', '999') WHERE seq = $1",
    "stream": "UPDATE mint.events SET stream = 'elsewhere' WHERE seq = $1",
    "type": "UPDATE mint.events SET type = 'burned' WHERE seq = $1",
    "recorded_at": "UPDATE mint.events SET recorded_at = recorded_at + interval '1 us' "
    "WHERE seq = $1",
    "leaf_hash": "UPDATE mint.events SET leaf_hash = sha256(leaf_hash) WHERE seq = $1",
    "signature": "UPDATE mint.events SET signature = "
    "overlay(signature placing '\\x00'::bytea from 1) WHERE seq = $1",
    "deleted": "DELETE FROM mint.events WHERE seq = $1",
}


async def _fill(log: EventLog, n: int, start: int = 0) -> None:
    """Events ``start .. start + n - 1``, spread round-robin over three streams."""
    items = [NewEvent(f"s{i % 3}", i // 3, "t", {"i": i}) for i in range(start, start + n)]
    await log.append_batch(items)


async def test_an_untouched_log_verifies(log: EventLog) -> None:
    """A log of appends and checkpoints passes, and the summary counts what was checked."""
    empty = await log.verify_all()
    assert empty.events == 0
    await log.create_checkpoint()
    await _fill(log, 39)
    await log.create_checkpoint()
    await _fill(log, 10, start=39)
    summary = await log.verify_all()
    assert (summary.events, summary.checkpoints) == (49, 2)
    assert summary.subtrees == 49 - (49).bit_count()
    assert summary.root == (await log.head()).root


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("seq", [0, 23, 48])
async def test_an_edited_row_is_named_by_its_seq(log: EventLog, edit: str, seq: int) -> None:
    """Editing any column of one row (or deleting it) makes verify_all name exactly that seq."""
    await _fill(log, 49)
    await log.pool.execute(EDITS[edit], seq)
    with pytest.raises(TamperedLog) as caught:
        await log.verify_all()
    assert caught.value.seq == seq, caught.value.diagnostics()
    assert f"seq {seq}" in caught.value.diagnostics()


async def test_edits_are_found_on_several_processes(log: EventLog, migrated_url: str) -> None:
    """With the leaf pass spread over two processes, the first bad seq is still named."""
    await _fill(log, 60)
    assert (await log.verify_all(database_url=migrated_url, workers=2)).workers == 2
    await log.pool.execute(EDITS["signature"], 45)
    await log.pool.execute(EDITS["body"], 50)
    with pytest.raises(TamperedLog) as caught:
        await log.verify_all(database_url=migrated_url, workers=2)
    assert caught.value.seq == 45


async def test_verify_all_reads_one_snapshot_while_appends_go_on(
    log: EventLog, migrated_url: str
) -> None:
    """Appends and checkpoints committed during an audit neither fail it nor get half-read."""
    await _fill(log, 300)
    stop = asyncio.Event()

    async def keep_appending() -> int:
        n = 300
        while not stop.is_set():
            await _fill(log, 7, start=n)
            await log.create_checkpoint()
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


async def test_a_stored_subtree_edit_is_found(log: EventLog) -> None:
    """An altered stored subtree is named at the seq that completes it."""
    await _fill(log, 16)
    await log.pool.execute(
        "UPDATE mint.tree_nodes SET hash = sha256(hash) WHERE level = 2 AND idx = 1"
    )
    with pytest.raises(TamperedLog, match=r"subtree \(2, 1\)") as caught:
        await log.verify_all()
    assert caught.value.seq == 7


async def test_a_forged_checkpoint_is_found(log: EventLog) -> None:
    """A checkpoint whose signature or root no longer matches the events is named."""
    await _fill(log, 10)
    await log.create_checkpoint()
    note = await log.pool.fetchval("SELECT note FROM mint.checkpoints")
    unsigned = note.rsplit("\n\n", 1)[0] + "\n\n— league.test/mint AAAAAAAA\n"
    await log.pool.execute("UPDATE mint.checkpoints SET note = $1", unsigned)
    with pytest.raises(TamperedLog, match="no signature from a known key") as caught:
        await log.verify_all()
    assert caught.value.seq == 9
    await log.pool.execute("UPDATE mint.checkpoints SET note = $1", note)
    await log.verify_all()
    await log.pool.execute("UPDATE mint.checkpoints SET root_hash = sha256(root_hash)")
    with pytest.raises(TamperedLog, match="checkpoint of size 10") as caught:
        await log.verify_all()
    assert caught.value.seq == 9
