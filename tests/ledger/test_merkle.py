"""RFC 6962 Merkle trees: generation against the RFC's own definitions, verification, policy."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.errors import ProofError
from ledger.merkle import (
    EMPTY_ROOT,
    CompactRange,
    LeafHashes,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    required_subtrees,
    root_from,
    verify_consistency,
    verify_inclusion,
)


def _leaves(n: int) -> list[bytes]:
    return [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


# The RFC 9162 §2.1 definitions, transcribed literally over a list of leaf hashes: the oracle.
def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(d: list[bytes]) -> bytes:
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return d[0]
    k = _k(len(d))
    return node_hash(_mth(d[:k]), _mth(d[k:]))


def _path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = _k(len(d))
    if m < k:
        return [*_path(m, d[:k]), _mth(d[k:])]
    return [*_path(m - k, d[k:]), _mth(d[:k])]


def _subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    if m == len(d):
        return [] if b else [_mth(d)]
    k = _k(len(d))
    if m <= k:
        return [*_subproof(m, d[:k], b), _mth(d[k:])]
    return [*_subproof(m - k, d[k:], False), _mth(d[:k])]


def test_hash_prefixes() -> None:
    """Leaves hash under 0x00 and nodes under 0x01, so a leaf can never pose as a node."""
    assert leaf_hash(b"x") == hashlib.sha256(b"\x00x").digest()
    assert (
        node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    )
    assert root_from(0, LeafHashes([])) == EMPTY_ROOT == hashlib.sha256(b"").digest()


def test_roots_and_inclusion_proofs_match_the_rfc_definitions() -> None:
    """For every size up to 70 and every leaf, root and audit path equal RFC 9162 and verify."""
    for n in range(1, 71):
        d = _leaves(n)
        tree = LeafHashes(d)
        root = tree.root()
        assert root == _mth(d)
        for m in range(n):
            proof = inclusion_proof(m, n, tree)
            assert proof == _path(m, d)
            verify_inclusion(m, n, d[m], proof, root)


def test_consistency_proofs_match_the_rfc_definitions() -> None:
    """For all 0 < m < n <= 40 the proof equals RFC 9162's SUBPROOF and verifies."""
    d = _leaves(40)
    tree = LeafHashes(d)
    for n in range(2, 41):
        for m in range(1, n):
            proof = consistency_proof(m, n, tree)
            assert proof == _subproof(m, d[:n], True)
            verify_consistency(m, n, _mth(d[:m]), _mth(d[:n]), proof)


@given(st.integers(1, 300), st.data())
def test_any_altered_inclusion_proof_fails(n: int, data: st.DataObject) -> None:
    """Flipping any bit of any proof hash, the leaf or the root makes verification fail."""
    d = _leaves(n)
    tree = LeafHashes(d)
    m = data.draw(st.integers(0, n - 1))
    proof = inclusion_proof(m, n, tree)
    root = tree.root()
    target = data.draw(st.integers(0, len(proof) + 1))
    bit = data.draw(st.integers(0, 255))
    flip = bytearray([*proof, d[m], root][target])
    flip[bit // 8] ^= 1 << (bit % 8)
    if target < len(proof):
        proof[target] = bytes(flip)
    leaf = bytes(flip) if target == len(proof) else d[m]
    root = bytes(flip) if target == len(proof) + 1 else root
    with pytest.raises(ProofError):
        verify_inclusion(m, n, leaf, proof, root)


@given(st.integers(2, 300), st.data())
def test_consistency_proof_fails_for_wrong_sizes_or_altered_hashes(
    n: int, data: st.DataObject
) -> None:
    """A consistency proof checked against another size or an altered hash is refused."""
    d = _leaves(n)
    tree = LeafHashes(d)
    m = data.draw(st.integers(1, n - 1))
    proof = consistency_proof(m, n, tree)
    root1, root2 = _mth(d[:m]), tree.root()
    verify_consistency(m, n, root1, root2, proof)
    other = data.draw(st.integers(1, n).filter(lambda x: x != m))
    with pytest.raises(ProofError):
        verify_consistency(other, n, root1, root2, proof)
    i = data.draw(st.integers(0, len(proof) - 1))
    altered = [*proof]
    altered[i] = bytes([altered[i][0] ^ 1]) + altered[i][1:]
    with pytest.raises(ProofError):
        verify_consistency(m, n, root1, root2, altered)


def test_equal_sizes_and_empty_tree_policy() -> None:
    """Our written policy: equal sizes and the empty tree need an empty proof and exact roots."""
    d = _leaves(5)
    root5 = _mth(d)
    verify_consistency(5, 5, root5, root5, [])
    verify_consistency(0, 5, EMPTY_ROOT, root5, [])
    verify_consistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])
    assert consistency_proof(5, 5, LeafHashes(d)) == []
    assert consistency_proof(0, 5, LeafHashes(d)) == []
    with pytest.raises(ProofError, match="same tree size"):
        verify_consistency(5, 5, root5, _mth(d[:4]), [])
    with pytest.raises(ProofError, match="must be empty"):
        verify_consistency(5, 5, root5, root5, [root5])
    with pytest.raises(ProofError, match="empty tree"):
        verify_consistency(0, 5, root5, root5, [])
    with pytest.raises(ProofError, match="larger"):
        verify_consistency(5, 4, root5, root5, [])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: verify_inclusion(0, 1, b"short", [], EMPTY_ROOT), "leaf hash"),
        (lambda: verify_inclusion(0, 2, EMPTY_ROOT, [b"x" * 31], EMPTY_ROOT), "proof hash 0"),
        (lambda: verify_inclusion(-1, 2, EMPTY_ROOT, [], EMPTY_ROOT), "non-negative"),
        (lambda: verify_inclusion(2, 2, EMPTY_ROOT, [], EMPTY_ROOT), "outside"),
        (lambda: verify_inclusion(0, 2**64, EMPTY_ROOT, [], EMPTY_ROOT), "2\\*\\*64"),
        (lambda: verify_inclusion(0, 9, EMPTY_ROOT, [EMPTY_ROOT] * 66, EMPTY_ROOT), "longer"),
        (lambda: verify_consistency(1, 2, EMPTY_ROOT, b"", [EMPTY_ROOT]), "second root"),
        (lambda: inclusion_proof(3, 3, LeafHashes(_leaves(3))), "outside"),
        (lambda: consistency_proof(4, 3, LeafHashes(_leaves(3))), "larger"),
    ],
)
def test_malformed_input_is_a_proof_error(call: object, message: str) -> None:
    """Malformed hashes, sizes and indices raise ProofError with a message naming the fault."""
    with pytest.raises(ProofError, match=message):
        call()  # type: ignore[operator]


def test_compact_range_closes_every_subtree_once_and_tracks_the_root() -> None:
    """Appending leaf by leaf yields each complete subtree exactly once and the right roots."""
    d = _leaves(100)
    tree = LeafHashes(d)
    edge = CompactRange()
    closed: dict[tuple[int, int], bytes] = {}
    for i, leaf in enumerate(d):
        for level, index, h in edge.append(leaf):
            assert (level, index) not in closed
            closed[(level, index)] = h
        assert edge.size == i + 1
        assert edge.root() == _mth(d[: i + 1])
    assert len(closed) == 100 - (100).bit_count()
    assert all(tree(level, index) == h for (level, index), h in closed.items())
    resumed = CompactRange(edge.size, edge.hashes)
    assert resumed.root() == edge.root()
    with pytest.raises(ProofError):
        CompactRange(5, [EMPTY_ROOT])


def test_proofs_at_a_million_leaves_read_only_logarithmically_many_subtrees() -> None:
    """A proof in a tree of 10**6 leaves reads at most 2·log2(n) stored subtrees, never leaves."""
    n = 1_000_000
    reads = required_subtrees(lambda get: inclusion_proof(123_457, n, get))
    assert 0 < len(reads) <= 40
    reads = required_subtrees(lambda get: consistency_proof(654_321, n, get))
    assert 0 < len(reads) <= 40
    reads = required_subtrees(lambda get: root_from(n, get))
    assert len(reads) == n.bit_count()


def test_proofs_from_only_the_required_subtrees() -> None:
    """Serving exactly the required subtrees (nothing else) produces the full, valid proof."""
    d = _leaves(1000)
    tree = LeafHashes(d)
    needed = required_subtrees(lambda get: inclusion_proof(777, 1000, get))
    only = {key: tree(*key) for key in needed}
    proof = inclusion_proof(777, 1000, lambda level, index: only[(level, index)])
    verify_inclusion(777, 1000, d[777], proof, tree.root())
    needed = required_subtrees(lambda get: consistency_proof(333, 1000, get))
    only = {key: tree(*key) for key in needed}
    proof = consistency_proof(333, 1000, lambda level, index: only[(level, index)])
    verify_consistency(333, 1000, _mth(d[:333]), tree.root(), proof)
