"""What every service's log serves: the signed feed, and RFC 6962 proofs.

``GET /<service>/events?after=N&limit=M`` is the signed feed: each event with its leaf hash
and the service's signature, enough to recompute the leaf (:mod:`ledger.leaf`) and check both
offline (:meth:`FeedEvent.verified`). Checkpoints are C2SP signed notes (``text/plain``);
proofs are RFC 6962 hashes in standard base64, as in checkpoints.
"""

from __future__ import annotations

import hmac
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ledger.encoding import decode_b64, decode_b64url, encode_b64, encode_b64url
from ledger.errors import BadSignatureError, VerificationError
from ledger.keys import PublicKey
from ledger.leaf import Event, format_time, parse_time
from ledger.merkle import leaf_hash


class LogAnswer(BaseModel):
    """Base of the log's answers: unknown fields refused when parsed back."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FeedEvent(LogAnswer):
    """One event as the feed serves it."""

    seq: int = Field(ge=0)
    stream: str
    stream_version: int = Field(ge=1)
    type: str
    body: dict[str, Any]
    recorded_at: str = Field(description="UTC, microseconds: 2026-12-02T15:51:34.123456Z")
    leaf_hash: str = Field(description="RFC 6962 leaf hash, standard base64")
    signature: str = Field(description="The service's Ed25519 signature of the leaf, base64url")

    @classmethod
    def of(cls, event: Event) -> FeedEvent:
        return cls(
            seq=event.seq,
            stream=event.stream,
            stream_version=event.stream_version,
            type=event.type,
            body=event.body,
            recorded_at=format_time(event.recorded_at),
            leaf_hash=encode_b64(event.leaf_hash),
            signature=encode_b64url(event.signature),
        )

    def verified(self, key: PublicKey) -> Event:
        """The event, after recomputing its leaf from the content and checking the served
        leaf hash and the service's signature over it (raises on either)."""
        event, leaf = self._recomputed()
        try:
            key.verify_raw(leaf, event.signature)
        except BadSignatureError:
            raise BadSignatureError(
                f"event {self.seq}: the service's signature does not verify"
            ) from None
        return event

    def bound(self) -> Event:
        """The event, after recomputing its leaf from the content and checking the served
        leaf hash (raises unless equal); its signature is not checked. The leaf hash then
        binds the content: a reader that proves the leaf hashes against a checkpoint the
        service signed (the feed follower) knows the service logged this content without
        the signature; it is kept for anyone who checks an event alone (the audit)."""
        return self._recomputed()[0]

    def _recomputed(self) -> tuple[Event, bytes]:
        event = Event(
            seq=self.seq,
            stream=self.stream,
            stream_version=self.stream_version,
            type=self.type,
            body=self.body,
            recorded_at=parse_time(self.recorded_at),
            leaf_hash=decode_b64(self.leaf_hash, what="leaf hash"),
            signature=decode_b64url(self.signature, what="event signature"),
        )
        leaf = event.leaf()
        if not hmac.compare_digest(leaf_hash(leaf), event.leaf_hash):
            raise VerificationError(f"event {self.seq}: the leaf hash is not its content's")
        return event, leaf


class Feed(LogAnswer):
    """A page of the feed; read on with ``after=next_after`` until ``events`` is empty."""

    events: list[FeedEvent]
    next_after: int = Field(description="Pass as ?after= to read the following page")


class InclusionProof(LogAnswer):
    """The audit path of one leaf in a tree of ``size`` leaves."""

    index: int
    size: int
    leaf_hash: str
    proof: list[str]


class ConsistencyProof(LogAnswer):
    """The proof that the tree of ``first`` leaves is a prefix of the tree of ``second``."""

    first: int
    second: int
    proof: list[str]
