"""The endpoints every service serves over its own event log: feed, checkpoint, proofs.

``GET /<service>/events?after=N&limit=M`` is the signed feed: each event with its leaf hash
and the service's signature, enough for anyone to recompute the leaf
(``ledger.leaf.event_leaf``) and check both offline. Checkpoints are C2SP signed
notes (``text/plain``); proofs are RFC 6962 hashes in standard base64, as in checkpoints.

Every one of them reads the log's :func:`read_view`: a streaming replica when the operator
gives ``DATABASE_READ_URL`` (a prefix of the primary's log, with checkpoints whose trees it
holds), else the log itself.
"""

from __future__ import annotations

from typing import Protocol

import orjson
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ledger.api.logs import ConsistencyProof, Feed, FeedEvent, InclusionProof
from ledger.checkpoint import Checkpoint
from ledger.encoding import encode_b64
from ledger.errors import ProofError
from ledger.leaf import Event
from ledger.limits import MAX_FEED_PAGE, MAX_FEED_PAGE_BYTES
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.http.pool import READ_POOL

#: The largest seq or tree size a query names: the log's BIGINT (64-bit signed) columns.
INT64_MAX = 2**63 - 1


class LogQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeedQuery(LogQuery):
    """Which events of a feed to read."""

    after: int = Field(
        default=-1, ge=-1, le=INT64_MAX, description="Return events with seq greater than this"
    )
    limit: int = Field(
        default=100,
        ge=1,
        le=MAX_FEED_PAGE,
        description="At most this many (fewer when their bodies pass MAX_FEED_PAGE_BYTES: read "
        "on from next_after)",
    )


class InclusionQuery(LogQuery):
    """Which leaf, in which tree."""

    index: int = Field(ge=0, le=INT64_MAX, description="The event's seq (its leaf index)")
    size: int = Field(ge=1, le=INT64_MAX, description="The tree size, e.g. of a signed checkpoint")


class ConsistencyQuery(LogQuery):
    """Which two trees."""

    first: int = Field(ge=0, le=INT64_MAX, description="The older tree size")
    second: int = Field(ge=0, le=INT64_MAX, description="The newer tree size")


class CheckpointSource(Protocol):
    """What serves a log's checkpoint with the cosignatures its witnesses returned
    (``services.kernel.witness_client``), as ``reads`` (a read view of the log) holds them."""

    async def served_checkpoint(self, reads: EventStore | None = None) -> Checkpoint: ...


_SERVED: dict[str, web.AppKey[CheckpointSource]] = {}


def served_checkpoint_key(service: str) -> web.AppKey[CheckpointSource]:
    """Where an app keeps what serves ``service``'s checkpoint when it is not the bare log."""
    key = _SERVED.get(service)
    if key is None:  # made once: an AppKey made again (setdefault's argument) is another key
        key = _SERVED[service] = web.AppKey(f"{service}_checkpoints", CheckpointSource)
    return key


def read_view(app: web.Application, log_key: web.AppKey[EventStore]) -> EventStore:
    """The log at ``log_key`` as a read endpoint reads it: over ``app[READ_POOL]`` (a
    streaming replica's, else the primary's pool, and then the log itself)."""
    return app[log_key].reader(app[READ_POOL])


def within_page_bytes(events: list[Event]) -> list[Event]:
    """The first of ``events`` whose bodies come to at most :data:`MAX_FEED_PAGE_BYTES`
    (at least one): a feed of large events (anyone can make a purchase's event tens of
    KiB) is served in more, smaller pages, never in one no reader takes."""
    total = 0
    for count, event in enumerate(events):
        total += len(orjson.dumps(event.body))
        if total > MAX_FEED_PAGE_BYTES and count:
            return events[:count]
    return events


def log_endpoints(service: str, log_key: web.AppKey[EventStore]) -> tuple[Endpoint, ...]:
    """The feed, checkpoint and proof endpoints of ``service``'s log, at ``/<service>/...``."""

    async def events(request: web.Request, query: FeedQuery) -> Feed:
        found = within_page_bytes(
            await read_view(request.app, log_key).read(query.after, query.limit)
        )
        next_after = found[-1].seq if found else query.after
        return Feed(events=[FeedEvent.of(e) for e in found], next_after=next_after)

    served = served_checkpoint_key(service)

    async def checkpoint(request: web.Request) -> str:
        reads = read_view(request.app, log_key)
        witnessed = request.app.get(served)
        if witnessed is None:
            return str(await reads.served_checkpoint())
        return str(await witnessed.served_checkpoint(reads))

    async def inclusion(request: web.Request, query: InclusionQuery) -> InclusionProof:
        log = read_view(request.app, log_key)
        proof = await log.inclusion_proof(query.index, query.size)
        event = await log.event(query.index)
        if event is None:  # a leaf within a proven tree is never missing from a sound log
            raise ProofError(f"no event at index {query.index}")
        return InclusionProof(
            index=query.index,
            size=query.size,
            leaf_hash=encode_b64(event.leaf_hash),
            proof=[encode_b64(h) for h in proof],
        )

    async def consistency(request: web.Request, query: ConsistencyQuery) -> ConsistencyProof:
        proof = await read_view(request.app, log_key).consistency_proof(query.first, query.second)
        return ConsistencyProof(
            first=query.first, second=query.second, proof=[encode_b64(h) for h in proof]
        )

    prefix = f"/{service}"
    return (
        Endpoint(
            "GET",
            f"{prefix}/events",
            f"The {service} log's signed feed",
            events,
            Feed,
            query=FeedQuery,
        ),
        Endpoint(
            "GET",
            f"{prefix}/checkpoint",
            f"The {service} log's latest signed checkpoint (C2SP tlog-checkpoint)",
            checkpoint,
            str,
            description="The checkpoint the service's background task signed last; reading "
            "it never signs or writes anything. It is at most one checkpoint interval (a "
            "published policy of the manifest) behind the log. It carries every cosignature "
            "the league's other services returned for it as witnesses (tlog-cosignature v1, "
            "each named by its witness's origin, <league>/<service>).",
        ),
        Endpoint(
            "GET",
            f"{prefix}/proof/inclusion",
            "Inclusion proof of one event",
            inclusion,
            InclusionProof,
            query=InclusionQuery,
            problems=(ProofError,),
        ),
        Endpoint(
            "GET",
            f"{prefix}/proof/consistency",
            "Consistency proof between two tree sizes",
            consistency,
            ConsistencyProof,
            query=ConsistencyQuery,
            problems=(ProofError,),
        ),
    )
