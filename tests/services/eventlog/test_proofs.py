"""Proofs and checkpoints served from the store's stored subtree hashes."""

from __future__ import annotations

import pytest

from services.eventlog import CheckpointRefused, NewEvent, PostgresEventStore


async def _fill(log: PostgresEventStore, n: int, start: int = 0) -> None:
    await log.append_batch([NewEvent("s", start + i, "t", {"i": start + i}) for i in range(n)])


async def test_a_checkpoint_inconsistent_with_the_last_one_is_never_signed(
    log: PostgresEventStore,
) -> None:
    """If the stored tree no longer extends the last signed root, signing is refused."""
    await _fill(log, 5)
    await log.sign_checkpoint()
    await log._pool.execute("UPDATE mint.checkpoints SET root_hash = $1", b"\x07" * 32)
    await _fill(log, 3, start=5)
    with pytest.raises(CheckpointRefused, match="size 5"):
        await log.sign_checkpoint()
    assert len(await log._pool.fetch("SELECT 1 FROM mint.checkpoints")) == 1
