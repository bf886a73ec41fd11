"""The one verifier of a log read from outside: its signed checkpoints, its feed's events in
dense order, and the Merkle tree they build, held up against what the log signed.

Every reader of another service's log uses it: the feed follower of a service
(``services/kernel/follower.py``), the independent auditor (:mod:`ledger.audit`), and the
player's client through :mod:`ledger.api.provenance` and the receipts of :mod:`ledger.api`.
What it checks, and nothing else:

- **a checkpoint** (:func:`signed_checkpoint`): a C2SP signed note whose origin line is the
  log's origin and which carries the log key's signature (cosignatures are checked by who
  knows the witnesses: the auditor);
- **each event's place** (:meth:`LogTree.place`): seqs are dense from 0, each where the one
  before it left off;
- **each event** (:func:`bind_page`, over :meth:`ledger.api.logs.FeedEvent.bound` and
  :meth:`~ledger.api.logs.FeedEvent.verified`): its leaf recomputed from its content equal to
  the leaf hash served beside it, and with a key, the log's signature over that leaf;
- **the tree** (:class:`LogTree`): the leaf hashes appended to the Merkle edge of everything
  read so far; :meth:`LogTree.matches` holds it against a checkpoint of the same size,
  :meth:`LogTree.prefix_of` against a larger one through an RFC 6962 consistency proof.

A reader that holds the whole history (the auditor) matches roots; one that holds only its
edge and reads on (the follower) proves each page a prefix of the checkpoint it reads toward.
The auditor's fast path (:mod:`ledger.audit.facts`) computes leaves from raw JSON for speed,
pinned to give :meth:`~ledger.api.logs.FeedEvent.verified`'s verdicts, and places them here.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field

from ledger.api.logs import FeedEvent
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.errors import LedgerError, VerificationError
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.merkle import CompactRange, verify_consistency
from ledger.signed_note import Note

#: A complete subtree of a log's Merkle tree: (level, index, hash); level 0 is a leaf.
Node = tuple[int, int, bytes]


class OutOfPlace(VerificationError):
    """A feed served an event at a seq other than the next one."""

    def __init__(self, seq: int, expected: int) -> None:
        super().__init__(
            f"the feed serves seq {seq} where seq {expected} is next (seqs are dense from 0)"
        )
        self.seq = seq
        self.expected = expected


def signed_checkpoint(
    data: str | bytes | Note | Checkpoint, origin: str, key: PublicKey
) -> Checkpoint:
    """The checkpoint in ``data``, after checking that it is of the log ``origin`` and signed
    by that log's ``key`` (raises :class:`~ledger.errors.LedgerError` otherwise)."""
    checkpoint = data if isinstance(data, Checkpoint) else Checkpoint.from_note(data)
    if checkpoint.origin != origin:
        raise VerificationError(
            f"the checkpoint names the origin {checkpoint.origin!r}, not {origin!r}"
        )
    checkpoint.verify([log_verifier(origin, key)])
    return checkpoint


class LogTree(CompactRange):
    """What a reader has verified of one log: the next seq (its size) and the Merkle edge of
    the events before it."""

    __slots__ = ()

    @classmethod
    def of(cls, edge: CompactRange) -> LogTree:
        """A reader standing where ``edge`` ends (a copy: the edge is not changed)."""
        return cls(edge.size, edge.hashes)

    def place(self, seq: int) -> None:
        """Raise :class:`OutOfPlace` unless ``seq`` is the next one."""
        if seq != self.size:
            raise OutOfPlace(seq, self.size)

    def add(self, seq: int, leaf: bytes) -> list[Node]:
        """Place the event at ``seq`` and append its leaf hash; the subtrees it completes."""
        self.place(seq)
        return self.append(leaf)

    def matches(self, checkpoint: Checkpoint) -> bool:
        """Whether the events read so far are exactly the tree ``checkpoint`` signs."""
        return checkpoint.size == self.size and hmac.compare_digest(self.root(), checkpoint.root)

    def prefix_of(self, checkpoint: Checkpoint, proof: Sequence[bytes]) -> None:
        """Raise unless the events read so far are a prefix of the tree ``checkpoint`` signs
        (see :func:`prefix_of`)."""
        prefix_of(self.size, self.root(), checkpoint, proof)


def prefix_of(size: int, root: bytes, checkpoint: Checkpoint, proof: Sequence[bytes]) -> None:
    """Raise unless the tree of ``size`` leaves with ``root`` (a reader's edge, or a checkpoint
    verified before) is a prefix of the tree ``checkpoint`` signs, by ``proof``: RFC 6962
    consistency from ``size`` to its size, empty when the tree is empty or the sizes equal.
    A smaller checkpoint is no extension (raises)."""
    verify_consistency(size, checkpoint.size, root, checkpoint.root, proof)


@dataclass(slots=True)
class BoundPage:
    """A page of a feed as :func:`bind_page` found it: the events that held, in order, the
    subtrees they completed (when asked), and the first that did not (its offset in the page
    and why), if any: none after it is taken."""

    events: list[Event] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    failure: tuple[int, LedgerError] | None = None


def bind_page(
    tree: LogTree,
    served: Sequence[FeedEvent],
    *,
    key: PublicKey | None = None,
    nodes: bool = False,
) -> BoundPage:
    """Take ``served`` into ``tree`` in order: each event in its place, its leaf recomputed
    and bound to its leaf hash, with ``key`` its signature verified too, its leaf appended;
    with ``nodes``, each leaf and the subtrees it completes kept. Stops at the first event
    that fails (``tree`` then ends just before it)."""
    page = BoundPage()
    for offset, item in enumerate(served):
        try:
            tree.place(item.seq)
            event = item.bound() if key is None else item.verified(key)
        except LedgerError as exc:
            page.failure = (offset, exc)
            return page
        closed = tree.append(event.leaf_hash)
        if nodes:
            page.nodes.append((0, event.seq, event.leaf_hash))
            page.nodes.extend(closed)
        page.events.append(event)
    return page
