"""A witnessed table's log as its auditor reads it: the tables' feed and a checkpoint covering
it, the tables' audit of a feed with the game's referee, and an event edited as a dishonest
operator (or a forger) would edit it."""

from __future__ import annotations

from typing import Any

from apiclient.league import LeagueClient
from game.window.witnessed import referee
from ledger.api.logs import FeedEvent
from ledger.audit.tables import TablesChecker, TablesReport
from ledger.checkpoint import Checkpoint
from ledger.encoding import encode_b64, encode_b64url
from ledger.keys import SigningKey
from ledger.leaf import canonical_leaf, parse_time
from ledger.manifest import LeagueManifest
from ledger.merkle import leaf_hash
from tests.harness.mint import checkpoint_covering


def edited(event: FeedEvent, body: dict[str, Any], key: SigningKey | None) -> FeedEvent:
    """``event`` with ``body``, signed again by ``key`` (the service's, as a dishonest
    operator would) or left with its old signature."""
    leaf = canonical_leaf(
        seq=event.seq,
        stream=event.stream,
        stream_version=event.stream_version,
        type=event.type,
        body=body,
        recorded_at=parse_time(event.recorded_at),
    )
    signature = encode_b64url(key.sign_raw(leaf)) if key is not None else event.signature
    return event.model_copy(
        update={"body": body, "leaf_hash": encode_b64(leaf_hash(leaf)), "signature": signature}
    )


def audited(
    manifest: LeagueManifest, checkpoint: str | None, feed: list[FeedEvent]
) -> TablesReport:
    """The tables' audit of ``feed`` (against ``checkpoint`` when given), with the game's
    referee."""
    checker = TablesChecker(manifest, referee)
    if checkpoint is not None:
        checker.checkpoint(Checkpoint.from_note(checkpoint))
    checker.add(feed)
    return checker.report()


async def tables_feed(url: str) -> tuple[str, list[Any]]:
    """The tables' whole feed and a checkpoint covering it."""
    async with LeagueClient(url) as league:
        size = len((await league.events(-1, 1000, service="tables")).events)
        text = await checkpoint_covering(league, size, service="tables")
        return text, (await league.events(-1, 1000, service="tables")).events
