"""The one feed verifier (ledger/feed.py): a checkpoint is taken only of its own log and
signed by that log's key; events only in their place, dense from 0, bound to their leaf hash
(and with a key, to the log's signature); the tree they build held against a checkpoint of
its size (matches) or a larger one (a consistency proof). The follower and the auditor read
through it (tests/services/kernel/test_follower.py, tests/ledger/audit/)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger.api.logs import FeedEvent
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.errors import BadSignatureError, LedgerError, ProofError, VerificationError
from ledger.feed import LogTree, OutOfPlace, bind_page, prefix_of, signed_checkpoint
from ledger.keys import SigningKey
from ledger.leaf import Event, canonical_leaf
from ledger.merkle import LeafHashes, consistency_proof, leaf_hash

ORIGIN = "league-0001/mint"
KEY = SigningKey.generate()
AT = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)


def served(seq: int, *, key: SigningKey = KEY, note: str = "n") -> FeedEvent:
    """The feed's form of a log's event ``seq`` (signed by ``key``)."""
    body = {"n": note}
    leaf = canonical_leaf(
        seq=seq, stream="s", stream_version=1, type="t", body=body, recorded_at=AT
    )
    event = Event(seq, "s", 1, "t", body, AT, leaf_hash(leaf), key.sign_raw(leaf))
    return FeedEvent.of(event)


LOG = [served(seq, note=f"event {seq}") for seq in range(7)]
LEAVES = [item.bound().leaf_hash for item in LOG]
HASHES = LeafHashes(LEAVES)


def checkpoint_at(size: int, *, origin: str = ORIGIN, key: SigningKey = KEY) -> Checkpoint:
    """The log's checkpoint over its first ``size`` events."""
    return sign_checkpoint(origin, size, LeafHashes(LEAVES[:size]).root(), key)


def test_a_checkpoint_is_taken_only_of_its_log_under_its_key() -> None:
    """The origin line and the log key's signature, both required."""
    good = checkpoint_at(3)
    assert signed_checkpoint(str(good), ORIGIN, KEY.public).size == 3
    with pytest.raises(VerificationError, match="names the origin"):
        signed_checkpoint(str(checkpoint_at(3, origin="league-0001/notary")), ORIGIN, KEY.public)
    with pytest.raises(LedgerError):
        signed_checkpoint(str(checkpoint_at(3, key=SigningKey.generate())), ORIGIN, KEY.public)


def test_events_only_in_their_place_dense_from_zero() -> None:
    """A gap or a repeat is refused, naming both seqs; the tree does not move."""
    tree = LogTree()
    tree.add(0, HASHES(0, 0))
    for wrong in (0, 2):
        with pytest.raises(OutOfPlace, match=f"seq {wrong} where seq 1 is next"):
            tree.add(wrong, HASHES(0, wrong))
    assert tree.size == 1


def test_a_page_is_bound_and_stops_at_the_first_bad_event() -> None:
    """Events before a tampered one are taken; it and what follows are not, and the
    tree ends just before it. With the key, a foreign signature is refused too."""
    tampered = LOG[3].model_copy(update={"body": {"n": "edited"}})
    tree = LogTree()
    page = bind_page(tree, [*LOG[:3], tampered, LOG[4]], nodes=True)
    assert [event.seq for event in page.events] == [0, 1, 2]
    assert page.failure is not None
    assert page.failure[0] == 3
    assert "leaf hash" in page.failure[1].diagnostics()
    assert tree.size == 3
    assert tree.root() == LeafHashes(LEAVES[:3]).root()
    assert (0, 2, HASHES(0, 2)) in page.nodes
    assert (1, 0, HASHES(1, 0)) in page.nodes

    forged = served(3, key=SigningKey.generate(), note="event 3")
    assert bind_page(LogTree.of(tree), [forged]).failure is None  # bound: no signature asked
    failure = bind_page(LogTree.of(tree), [forged], key=KEY.public).failure
    assert failure is not None
    assert isinstance(failure[1], BadSignatureError)


def test_the_tree_is_held_against_what_the_log_signed() -> None:
    """Equal size: the roots must match. Larger: a consistency proof must show the prefix."""
    tree = LogTree()
    assert bind_page(tree, LOG[:4], key=KEY.public).failure is None
    assert tree.matches(checkpoint_at(4))
    assert not tree.matches(checkpoint_at(5))
    other = [served(seq, note="another history") for seq in range(4)]
    forked = LogTree()
    bind_page(forked, other)
    assert not forked.matches(checkpoint_at(4))

    later = checkpoint_at(7)
    proof = consistency_proof(4, 7, HASHES)
    tree.prefix_of(later, proof)
    with pytest.raises(ProofError):
        forked.prefix_of(later, proof)
    with pytest.raises(ProofError):  # a checkpoint already verified must be extended, too
        prefix_of(7, later.root, checkpoint_at(4), [])
