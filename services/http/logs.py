"""The endpoints every service serves over its own event log: feed, checkpoint, proofs.

``GET /<service>/events?after=N&limit=M`` is the signed feed: each event with its leaf hash
and the service's signature, enough for anyone to recompute the leaf
(``services.eventlog.leaf.event_leaf``) and check both offline. Checkpoints are C2SP signed
notes (``text/plain``); proofs are RFC 6962 hashes in standard base64, as in checkpoints.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ledger.encoding import encode_b64, encode_b64url
from ledger.limits import MAX_FEED_PAGE
from services.eventlog import Event, EventLog
from services.eventlog.leaf import format_time
from services.http.endpoints import Endpoint


class LogQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeedQuery(LogQuery):
    """Which events of a feed to read."""

    after: int = Field(default=-1, ge=-1, description="Return events with seq greater than this")
    limit: int = Field(default=100, ge=1, le=MAX_FEED_PAGE, description="At most this many")


class InclusionQuery(LogQuery):
    """Which leaf, in which tree."""

    index: int = Field(ge=0, description="The event's seq (its leaf index)")
    size: int = Field(ge=1, description="The tree size, e.g. of a signed checkpoint")


class ConsistencyQuery(LogQuery):
    """Which two trees."""

    first: int = Field(ge=0, description="The older tree size")
    second: int = Field(ge=0, description="The newer tree size")


class FeedEvent(BaseModel):
    """One event as the feed serves it."""

    seq: int
    stream: str
    stream_version: int
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


class Feed(BaseModel):
    """A page of the feed; read on with ``after=next_after`` until ``events`` is empty."""

    events: list[FeedEvent]
    next_after: int = Field(description="Pass as ?after= to read the following page")


class InclusionProof(BaseModel):
    """The audit path of one leaf in a tree of ``size`` leaves."""

    index: int
    size: int
    leaf_hash: str
    proof: list[str]


class ConsistencyProof(BaseModel):
    """The proof that the tree of ``first`` leaves is a prefix of the tree of ``second``."""

    first: int
    second: int
    proof: list[str]


def log_endpoints(service: str, log_key: web.AppKey[EventLog]) -> tuple[Endpoint, ...]:
    """The feed, checkpoint and proof endpoints of ``service``'s log, at ``/<service>/...``."""

    async def events(request: web.Request, query: FeedQuery) -> Feed:
        found = await request.app[log_key].read(query.after, query.limit)
        next_after = found[-1].seq if found else query.after
        return Feed(events=[FeedEvent.of(e) for e in found], next_after=next_after)

    async def checkpoint(request: web.Request) -> str:
        return str(await request.app[log_key].create_checkpoint())

    async def inclusion(request: web.Request, query: InclusionQuery) -> InclusionProof:
        log = request.app[log_key]
        proof = await log.inclusion_proof(query.index, query.size)
        event = await log.event(query.index)
        assert event is not None  # the proof exists, so the leaf does
        return InclusionProof(
            index=query.index,
            size=query.size,
            leaf_hash=encode_b64(event.leaf_hash),
            proof=[encode_b64(h) for h in proof],
        )

    async def consistency(request: web.Request, query: ConsistencyQuery) -> ConsistencyProof:
        proof = await request.app[log_key].consistency_proof(query.first, query.second)
        return ConsistencyProof(
            first=query.first, second=query.second, proof=[encode_b64(h) for h in proof]
        )

    prefix = f"/{service}"
    return (
        Endpoint(
            "GET", f"{prefix}/events", f"The {service} log's signed feed", events, Feed,
            query=FeedQuery,
        ),
        Endpoint(
            "GET", f"{prefix}/checkpoint",
            f"A signed checkpoint of the {service} log (C2SP tlog-checkpoint)", checkpoint, str,
            description="Signs a new checkpoint when the log has grown since the last one.",
        ),
        Endpoint(
            "GET", f"{prefix}/proof/inclusion", "Inclusion proof of one event", inclusion,
            InclusionProof, query=InclusionQuery, problems=(422,),
        ),
        Endpoint(
            "GET", f"{prefix}/proof/consistency", "Consistency proof between two tree sizes",
            consistency, ConsistencyProof, query=ConsistencyQuery, problems=(422,),
        ),
    )
