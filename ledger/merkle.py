"""RFC 6962 / RFC 9162 Merkle trees: hashes, roots, inclusion and consistency proofs.

Leaves are hashed as ``SHA-256(0x00 || data)`` and interior nodes as
``SHA-256(0x01 || left || right)``; the tree over ``n`` leaves splits at the largest power of
two below ``n`` (RFC 9162 §2.1.1).

Proof *generation* never needs the leaves themselves: it asks a :data:`SubtreeGetter` for the
hash of complete subtrees ``(level, index)`` (the ``2**level`` leaves starting at
``index * 2**level``). A store that keeps every complete subtree hash serves any proof in
O(log n) reads; :func:`required_subtrees` names those reads up front so they can be fetched in
one round trip. :class:`LeafHashes` is the in-memory getter over a list of leaf hashes.

Verification follows RFC 9162 §2.1.3.2 and §2.1.4.2 and raises :class:`ProofError`. The edge
cases the RFC leaves open (equal sizes, the empty tree) follow the policy in docs/eventlog.md:
every hash is exactly 32 bytes, the empty tree's root is SHA-256 of the empty string, and a
proof between equal sizes (or from the empty tree) is empty.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

from ledger.errors import ProofError

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
#: The root of the empty tree: SHA-256 of the empty string (RFC 9162 §2.1.1).
EMPTY_ROOT = hashlib.sha256(b"").digest()
#: Longest proof we accept: a tree of 2**64 leaves has proofs of at most 64 (+1) hashes.
MAX_PROOF_LENGTH = 65

#: ``get(level, index)`` -> hash of the complete subtree over leaves
#: ``[index * 2**level, (index + 1) * 2**level)``; level 0 is the leaf hash itself.
SubtreeGetter = Callable[[int, int], bytes]


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256 of 0x00 followed by the leaf bytes."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: SHA-256 of 0x01, the left and the right child hash."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two strictly below ``size`` (``size`` >= 2)."""
    return 1 << ((size - 1).bit_length() - 1)


def _check_size(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProofError(f"{what} must be a non-negative integer, not {value!r}")
    if value >= 1 << 64:
        raise ProofError(f"{what} {value} is beyond 2**64")


def range_hash(start: int, end: int, get: SubtreeGetter) -> bytes:
    """MTH of leaves ``[start, end)`` built from complete subtrees, as RFC 9162 splits them.

    ``start`` must be a multiple of the largest power of two not above ``end - start``, which
    holds for every range a proof or a root ever asks for.
    """
    size = end - start
    if size <= 0:
        raise ProofError("a Merkle range must hold at least one leaf")
    if size & (size - 1) == 0:
        level = size.bit_length() - 1
        return get(level, start >> level)
    k = _split(size)
    return node_hash(range_hash(start, start + k, get), range_hash(start + k, end, get))


def root_from(size: int, get: SubtreeGetter) -> bytes:
    """Root of the tree of ``size`` leaves (the empty tree's root for size 0)."""
    _check_size(size, "tree size")
    return EMPTY_ROOT if size == 0 else range_hash(0, size, get)


def inclusion_proof(index: int, size: int, get: SubtreeGetter) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size`` leaves (RFC 9162 §2.1.3.1)."""
    _check_size(index, "leaf index")
    _check_size(size, "tree size")
    if index >= size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            path.append(range_hash(start + k, end, get))
            end = start + k
        else:
            path.append(range_hash(start, start + k, get))
            start += k
    path.reverse()
    return path


def consistency_proof(size1: int, size2: int, get: SubtreeGetter) -> list[bytes]:
    """The proof that the tree of ``size1`` leaves is a prefix of ``size2`` (RFC 9162 §2.1.4.1).

    Equal sizes and ``size1 == 0`` give the empty proof (our policy, docs/eventlog.md).
    """
    _check_size(size1, "first tree size")
    _check_size(size2, "second tree size")
    if size1 > size2:
        raise ProofError(f"first tree size {size1} is larger than second tree size {size2}")
    if size1 == 0 or size1 == size2:
        return []
    proof: list[bytes] = []
    start, end, m, complete = 0, size2, size1, True
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            proof.append(range_hash(start + k, end, get))
            end = start + k
        else:
            proof.append(range_hash(start, start + k, get))
            start += k
            m -= k
            complete = False
    if not complete:
        proof.append(range_hash(start, end, get))
    proof.reverse()
    return proof


def required_subtrees(build: Callable[[SubtreeGetter], object]) -> list[tuple[int, int]]:
    """The ``(level, index)`` subtrees ``build`` reads, in first-use order, without hashes.

    Proof shapes never depend on hash values, so running ``build`` once over a placeholder
    getter names every read a store must serve; it then fetches them in one round trip.
    """
    seen: dict[tuple[int, int], None] = {}

    def record(level: int, index: int) -> bytes:
        seen[(level, index)] = None
        return EMPTY_ROOT

    build(record)
    return list(seen)


class LeafHashes:
    """A :data:`SubtreeGetter` over an in-memory list of leaf hashes (every level cached)."""

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self._levels: list[list[bytes]] = [list(leaves)]
        while len(self._levels[-1]) > 1:
            below = self._levels[-1]
            self._levels.append(
                [node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
            )

    def __call__(self, level: int, index: int) -> bytes:
        try:
            return self._levels[level][index]
        except IndexError:
            raise ProofError(f"no complete subtree at level {level}, index {index}") from None

    @property
    def size(self) -> int:
        return len(self._levels[0])

    def root(self) -> bytes:
        return root_from(self.size, self)


class CompactRange:
    """The right edge of a growing tree: one complete subtree hash per 1-bit of its size.

    Appending a leaf returns the complete subtrees it closes, so a store can save every
    interior node exactly once; :meth:`root` folds the edge into the tree's root.
    """

    __slots__ = ("hashes", "size")

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        _check_size(size, "tree size")
        if len(hashes) != size.bit_count():
            raise ProofError(f"a tree of size {size} has {size.bit_count()} edge hashes")
        self.size = size
        self.hashes = list(hashes)

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add leaf hash ``leaf``; return the ``(level, index, hash)`` subtrees it completes."""
        closed: list[tuple[int, int, bytes]] = []
        h, level, index = leaf, 0, self.size
        while index & 1:
            h = node_hash(self.hashes.pop(), h)
            index >>= 1
            level += 1
            closed.append((level, index, h))
        self.hashes.append(h)
        self.size += 1
        return closed

    def root(self) -> bytes:
        if not self.hashes:
            return EMPTY_ROOT
        r = self.hashes[-1]
        for h in reversed(self.hashes[:-1]):
            r = node_hash(h, r)
        return r


def _check_hash(value: bytes, what: str) -> None:
    if not isinstance(value, bytes | bytearray) or len(value) != HASH_SIZE:
        raise ProofError(f"{what} is not a {HASH_SIZE}-byte SHA-256 hash")


def _check_proof(proof: Sequence[bytes]) -> None:
    if len(proof) > MAX_PROOF_LENGTH:
        raise ProofError(f"a proof of {len(proof)} hashes is longer than any tree needs")
    for i, item in enumerate(proof):
        _check_hash(item, f"proof hash {i}")


def _equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """Raise :class:`ProofError` unless ``proof`` places leaf hash ``leaf`` at ``index``.

    ``leaf`` is the leaf *hash* (see :func:`leaf_hash`); ``root`` the root at ``size``.
    """
    _check_size(index, "leaf index")
    _check_size(size, "tree size")
    _check_hash(leaf, "leaf hash")
    _check_hash(root, "root hash")
    _check_proof(proof)
    if index >= size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    fn, sn, r = index, size - 1, bytes(leaf)
    for p in proof:
        if sn == 0:
            raise ProofError("inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion proof is shorter than the tree is deep")
    if not _equal(r, root):
        raise ProofError(f"inclusion proof of leaf {index} does not lead to the root")


def verify_consistency(
    size1: int, size2: int, root1: bytes, root2: bytes, proof: Sequence[bytes]
) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows tree ``size1`` is a prefix of ``size2``."""
    _check_size(size1, "first tree size")
    _check_size(size2, "second tree size")
    _check_hash(root1, "first root")
    _check_hash(root2, "second root")
    _check_proof(proof)
    if size1 > size2:
        raise ProofError(f"first tree size {size1} is larger than second tree size {size2}")
    if size1 == 0 or size1 == size2:
        if proof:
            raise ProofError("a proof between equal sizes or from the empty tree must be empty")
        if size1 == 0 and not _equal(root1, EMPTY_ROOT):
            raise ProofError("the first root is not the root of the empty tree")
        if size1 == size2 and not _equal(root1, root2):
            raise ProofError(f"two different roots for the same tree size {size1}")
        return
    if not proof:
        raise ProofError(f"consistency proof from size {size1} to {size2} is empty")
    path = list(proof)
    if size1 & (size1 - 1) == 0:
        path.insert(0, bytes(root1))
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("consistency proof is longer than the trees need")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof is shorter than the trees need")
    if not _equal(fr, root1):
        raise ProofError(f"consistency proof does not lead to the root of size {size1}")
    if not _equal(sr, root2):
        raise ProofError(f"consistency proof does not lead to the root of size {size2}")
