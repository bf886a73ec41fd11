"""The witness's evidence, checked offline (ledger.api.witness; docs/eventlog.md, "Witnesses")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from ledger.api.witness import Evidence, EvidenceKind, prefix_from_inclusion, prefix_root
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.encoding import encode_b64
from ledger.errors import VerificationError
from ledger.keys import SigningKey
from ledger.merkle import LeafHashes, consistency_proof, inclusion_proof, leaf_hash, root_from

ORIGIN = "league.test/mint"
KEY = SigningKey(bytes(range(32)))


def tree(n: int, salt: int = 0) -> LeafHashes:
    return LeafHashes([leaf_hash(f"{salt}:{i}".encode()) for i in range(n)])


def signed(
    leaves: LeafHashes, size: int, key: SigningKey = KEY, origin: str = ORIGIN
) -> Checkpoint:
    return sign_checkpoint(origin, size, root_from(size, leaves), key)


def evidence(
    kind: EvidenceKind,
    cosigned: Checkpoint,
    submitted: Checkpoint,
    proof: Sequence[bytes] = (),
    old_size: int | None = None,
) -> Evidence:
    return Evidence(
        id=1,
        origin=ORIGIN,
        recorded_at="2026-12-03T03:00:00.000000Z",
        kind=kind,
        reason="test",
        cosigned=str(cosigned),
        submitted=str(submitted),
        old_size=cosigned.size if old_size is None else old_size,
        proof=[encode_b64(h) for h in proof],
    )


def test_prefix_root_is_the_root_a_valid_proof_shows() -> None:
    """For every old size that is not a power of two the proof shows the old root; for a
    power of two (left out of the proof by RFC 9162) and for a proof of another tree it
    shows none."""
    for n in range(2, 34):
        leaves, other = tree(n), tree(n, salt=1)
        for m in range(1, n):
            proof = consistency_proof(m, n, leaves)
            shown = prefix_root(m, n, leaves.root(), proof)
            assert shown == (None if m & (m - 1) == 0 else root_from(m, leaves))
            assert prefix_root(m, n, other.root(), proof) is None
    assert prefix_root(0, 5, tree(5).root(), []) is None
    assert prefix_root(3, 3, tree(3).root(), []) is None


def test_an_inclusion_proof_shows_the_root_of_every_prefix() -> None:
    """The audit path of leaf i shows the root of the first i + 1 leaves, powers of two
    included; a path that does not verify shows nothing."""
    for n in range(1, 34):
        leaves = tree(n)
        for i in range(n):
            path = inclusion_proof(i, n, leaves)
            assert prefix_from_inclusion(i, n, leaves(0, i), path, leaves.root()) == root_from(
                i + 1, leaves
            )
            assert prefix_from_inclusion(i, n, leaf_hash(b"x"), path, leaves.root()) is None


def test_the_log_s_inclusion_proof_convicts_a_fork_at_a_power_of_two() -> None:
    """Cosigned at 4, the forked tree of 6: its consistency proof cannot show the root at 4
    (no evidence alone), its inclusion proof of leaf 3 does (fork). The honest tree's inclusion
    proof shows the cosigned root: no conviction, and no fork claim stands on it."""
    honest, forked = tree(6), tree(6, salt=1)
    record = evidence(
        "fork", signed(honest, 4), signed(forked, 6), consistency_proof(4, 6, forked)
    ).model_copy(
        update={
            "leaf_hash": encode_b64(forked(0, 3)),
            "inclusion_proof": [encode_b64(h) for h in inclusion_proof(3, 6, forked)],
        }
    )
    assert record.convicts(KEY.public)
    garbled = [leaf_hash(b"x")] * 3
    consistent = evidence("fork", signed(honest, 4), signed(honest, 6), garbled).model_copy(
        update={
            "leaf_hash": encode_b64(honest(0, 3)),
            "inclusion_proof": [encode_b64(h) for h in inclusion_proof(3, 6, honest)],
        }
    )
    with pytest.raises(VerificationError, match="does not show"):
        consistent.convicts(KEY.public)


def test_two_roots_at_one_size_convict_the_log() -> None:
    """Same size, two roots, both signed by the log: convicts, whatever the old size was."""
    record = evidence("same-size", signed(tree(4), 4), signed(tree(4, salt=1), 4), old_size=2)
    assert record.convicts(KEY.public)


def test_a_proof_showing_another_root_convicts_the_log() -> None:
    """The submitted tree's own valid proof shows another root at the cosigned size."""
    honest, forked = tree(7), tree(7, salt=1)
    record = evidence("fork", signed(honest, 3), signed(forked, 7), consistency_proof(3, 7, forked))
    assert record.convicts(KEY.public)
    assert Evidence.model_validate_json(record.model_dump_json()).convicts(KEY.public)


def test_a_failing_proof_alone_is_no_evidence() -> None:
    """A garbled proof (anyone can pair a log's public checkpoints with one), or a fork's
    proof at a power-of-two size that shows no root, proves nothing about the log: whatever
    it claims, it does not convict, and 'unproven' is no kind of evidence at all."""
    honest, forked = tree(6), tree(6, salt=1)
    for kind in ("fork", "same-size"):
        garbled = evidence(kind, signed(honest, 3), signed(honest, 6), [leaf_hash(b"x")] * 3)
        with pytest.raises(VerificationError, match="does not show"):
            garbled.convicts(KEY.public)
    proof = consistency_proof(4, 6, forked)
    claimed = evidence("fork", signed(honest, 4), signed(forked, 6), proof)
    with pytest.raises(VerificationError, match="does not show"):
        claimed.convicts(KEY.public)
    with pytest.raises(ValidationError, match="kind"):
        evidence("unproven", signed(honest, 3), signed(honest, 6))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "case", ["other key", "other origin", "consistent", "same checkpoint", "old size"]
)
def test_what_is_no_evidence_is_refused(case: str) -> None:
    """Checkpoints not both signed by the log, of another origin, a consistent pair (with
    its valid proof), one checkpoint twice, or an old size that is not the cosigned one."""
    leaves = tree(5)
    first, second = signed(leaves, 3), signed(leaves, 5)
    proof = consistency_proof(3, 5, leaves)
    record = evidence("fork", first, second, proof)
    if case == "other key":
        record = evidence("fork", first, signed(tree(5, 1), 5, key=SigningKey.generate()))
    elif case == "other origin":
        record = evidence("same-size", first, signed(tree(3, 1), 3, origin="league.test/x"))
    elif case == "same checkpoint":
        record = evidence("same-size", first, first)
    elif case == "old size":
        record = evidence("fork", first, signed(tree(5, 1), 5), proof, old_size=2)
    with pytest.raises(VerificationError):
        record.convicts(KEY.public)
