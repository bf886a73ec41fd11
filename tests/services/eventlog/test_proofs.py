"""Proofs and checkpoints served from the store's stored subtree hashes."""

from __future__ import annotations

import pytest

from ledger.checkpoint import Checkpoint, log_verifier
from ledger.errors import ProofError
from ledger.keys import SigningKey
from ledger.merkle import (
    EMPTY_ROOT,
    LeafHashes,
    consistency_proof,
    inclusion_proof,
    verify_consistency,
    verify_inclusion,
)
from services.eventlog import CheckpointRefused, NewEvent, PostgresEventStore
from tests.services.eventlog.conftest import ORIGIN


async def _fill(log: PostgresEventStore, n: int, start: int = 0) -> None:
    await log.append_batch([NewEvent("s", start + i, "t", {"i": start + i}) for i in range(n)])


async def test_store_proofs_equal_the_pure_ones_and_verify(log: PostgresEventStore) -> None:
    """For many sizes, store proofs equal proofs over the leaf list and verify against roots."""
    await _fill(log, 7)
    await _fill(log, 30, start=7)
    leaves = [e.leaf_hash for e in await log.read()]
    tree = LeafHashes(leaves)
    for size in (1, 2, 5, 8, 16, 31, 37):
        root = LeafHashes(leaves[:size]).root()
        assert await log.root(size) == root
        for index in {0, size // 2, size - 1}:
            proof = await log.inclusion_proof(index, size)
            assert proof == inclusion_proof(index, size, tree)
            verify_inclusion(index, size, leaves[index], proof, root)
        for old in {1, size // 3 or 1, size - 1 or 1}:
            proof = await log.consistency_proof(old, size)
            assert proof == consistency_proof(old, size, tree)
            verify_consistency(old, size, LeafHashes(leaves[:old]).root(), root, proof)
    assert (await log.head()).root == tree.root()


async def test_proofs_beyond_the_head_are_refused(log: PostgresEventStore) -> None:
    """Asking for a tree larger than the log, or a leaf outside it, is a ProofError."""
    await _fill(log, 4)
    with pytest.raises(ProofError, match="beyond"):
        await log.inclusion_proof(0, 5)
    with pytest.raises(ProofError, match="outside"):
        await log.inclusion_proof(4, 4)
    with pytest.raises(ProofError, match="beyond"):
        await log.consistency_proof(2, 9)


async def test_checkpoints_are_signed_consistent_and_verifiable(
    log: PostgresEventStore, key: SigningKey
) -> None:
    """Checkpoints verify under the log key, name head size and root, and chain consistently."""
    verifier = log_verifier(ORIGIN, key.public)
    empty = await log.sign_checkpoint()
    assert (empty.size, empty.root) == (0, EMPTY_ROOT)
    await _fill(log, 5)
    first = await log.sign_checkpoint()
    assert first.verify([verifier]) == [verifier]
    assert (first.origin, first.size, first.root) == (ORIGIN, 5, (await log.head()).root)
    assert await log.sign_checkpoint() == first
    await _fill(log, 6, start=5)
    second = await log.sign_checkpoint()
    proof = await log.consistency_proof(first.size, second.size)
    verify_consistency(first.size, second.size, first.root, second.root, proof)
    assert await log.latest_checkpoint() == second
    assert await log.checkpoints() == [empty, first, second]
    assert Checkpoint.from_note(str(second)) == second


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
