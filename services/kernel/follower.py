"""The feed follower: applies another service's verified feed to this service, exactly once.

A follower reads a service's feed over HTTP and trusts nothing it reads:

- the feed's checkpoint must be signed by that service's key (from the league manifest) and
  be a consistent extension of the last checkpoint this follower verified;
- every event must carry the service's signature over the leaf recomputed from its content,
  with the leaf hash served beside it, at the next ``seq`` (no gap, no repeat);
- each page's leaves, appended to the Merkle edge of everything applied so far, must give a
  tree that the signed checkpoint extends (a consistency proof to it), so a page is known to
  be history the service signed before a single event of it is applied.

A verified page is applied by the caller's ``apply`` in one transaction of the follower's own
store, and the new position (with the Merkle edge and the checkpoint) is written in that same
transaction: a crash before the commit applies nothing, a crash after it applies everything,
and a restart resumes from the stored position. A feed that contradicts what it signed
(a rewritten or forked history, a forged event) is refused: what it served is kept in
``feed_evidence`` and the follower stops with :class:`FeedRefused` until an operator looks.
A service that is down or busy is retried with capped exponential backoff.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from clients.league import LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.api.logs import FeedEvent
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.encoding import decode_b64
from ledger.errors import LedgerError, VerificationError
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.merkle import CompactRange, verify_consistency
from services.eventlog import EventStore, Row, StoreTransaction, StoreUnavailable
from services.eventlog.sql import SCHEMA_NAME

log = logging.getLogger(__name__)

#: Applies a verified page of the followed feed inside the follower's transaction.
Apply = Callable[[StoreTransaction, Sequence[Event]], Awaitable[None]]

#: Events read and applied per page (and per transaction).
DEFAULT_PAGE = 500
#: Seconds between polls once the follower has caught up.
DEFAULT_IDLE = 0.5
#: Backoff after a failure: from this many seconds, doubling, to the cap.
BACKOFF_START = 0.1
BACKOFF_CAP = 10.0


#: The follower's statements; ``{s}`` is the follower's schema, checked before it is spliced.
READ_POSITION = "SELECT position, edge, checkpoint FROM {s}.followed_feeds WHERE source = $1"
WRITE_POSITION = (
    "INSERT INTO {s}.followed_feeds (source, position, edge, checkpoint) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (source) DO UPDATE SET position = excluded.position, edge = excluded.edge,"
    " checkpoint = excluded.checkpoint"
)
#: The position row made before it is locked: ``FOR UPDATE`` locks no row that does not exist,
#: so two followers starting a feed (the background task and a catch-up asked for by a
#: request) would both apply its first page. The second insert waits for the first's commit.
CLAIM_POSITION = (
    "INSERT INTO {s}.followed_feeds (source, position, edge) VALUES ($1, 0, '{}')"
    " ON CONFLICT (source) DO NOTHING"
)
WRITE_EVIDENCE = (
    "INSERT INTO {s}.feed_evidence (source, reason, trusted_checkpoint, served_checkpoint,"
    " served_event) VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id"
)


class FeedRefused(VerificationError):
    """A followed feed served something that contradicts what its service signed."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where a follower stands in one feed: the next ``seq``, the Merkle edge of the events
    before it, and the last checkpoint it verified."""

    next_seq: int
    edge: CompactRange
    checkpoint: Checkpoint | None


class FeedFollower:
    """Follows the feed of service ``source`` into ``store``, applying pages with ``apply``."""

    def __init__(
        self,
        *,
        store: EventStore,
        league: LeagueClient,
        source: str,
        origin: str,
        key: PublicKey,
        apply: Apply,
        page: int = DEFAULT_PAGE,
    ) -> None:
        if not SCHEMA_NAME.fullmatch(store.schema):
            raise ValueError(f"not a schema name: {store.schema!r}")
        self.store = store
        self.league = league
        self.source = source
        self.origin = origin
        self.key = key
        self.apply = apply
        self.page = page
        self._verifier = log_verifier(origin, key)
        self._read_position = READ_POSITION.replace("{s}", store.schema)
        self._lock_position = self._read_position + " FOR UPDATE"
        self._claim_position = CLAIM_POSITION.replace("{s}", store.schema)
        self._write_position = WRITE_POSITION.replace("{s}", store.schema)
        self._write_evidence = WRITE_EVIDENCE.replace("{s}", store.schema)

    # -- where it stands ---------------------------------------------------------------------

    async def position(self) -> Position:
        """The stored position (the start of the feed before the first page)."""
        row = await self.store.fetchrow(self._read_position, self.source)
        return self._position(row)

    @staticmethod
    def _position(row: Row | None) -> Position:
        if row is None:
            return Position(0, CompactRange(), None)
        next_seq, edge, note = row
        checkpoint = None if note is None else Checkpoint.from_note(note)
        return Position(next_seq, CompactRange(next_seq, [bytes(h) for h in edge]), checkpoint)

    # -- following ---------------------------------------------------------------------------

    async def catch_up(self) -> int:
        """Apply everything up to the feed's current checkpoint; the number of events applied.

        Raises :class:`FeedRefused` (after keeping the evidence) when the feed contradicts
        itself, and the league client's or the store's errors when either is unavailable.
        """
        checkpoint = await self._checkpoint()
        position = await self.position()
        await self._check_extends(position, checkpoint)
        applied = 0
        while position.next_seq < checkpoint.size:
            events, edge = await self._verified_page(position, checkpoint)
            position = await self._apply(position, events, edge, checkpoint)
            applied += len(events)
        if position.checkpoint is None or position.checkpoint.size < checkpoint.size:
            position = await self._apply(position, [], position.edge, checkpoint)
        return applied

    async def run(self, *, idle: float = DEFAULT_IDLE) -> None:
        """Follow until cancelled: catch up, wait ``idle``, again; back off while the source
        or the store is unavailable. Returns only by :class:`FeedRefused`, re-raised."""
        delay = BACKOFF_START
        while True:
            try:
                await self.catch_up()
                delay = BACKOFF_START
                await asyncio.sleep(idle)
            except FeedRefused:
                raise
            except (LeagueUnreachable, LeagueProblem, StoreUnavailable) as exc:
                log.warning("following %s: %s; retrying in %.1f s", self.source,
                            exc.diagnostics(), delay)
                await asyncio.sleep(delay * (0.5 + random.random()))  # noqa: S311 (jitter)
                delay = min(delay * 2, BACKOFF_CAP)

    # -- verification ------------------------------------------------------------------------

    async def _checkpoint(self) -> Checkpoint:
        text = await self.league.checkpoint(service=self.source)
        try:
            checkpoint = Checkpoint.from_note(text)
            checkpoint.verify([self._verifier])
        except LedgerError as exc:
            raise FeedRefused(f"{self.source}'s checkpoint: {exc.diagnostics()}") from None
        if checkpoint.origin != self.origin:
            raise FeedRefused(f"{self.source}'s checkpoint names the origin {checkpoint.origin!r}")
        return checkpoint

    async def _check_extends(self, position: Position, checkpoint: Checkpoint) -> None:
        """The new checkpoint must extend the last one verified; otherwise keep both."""
        trusted = position.checkpoint
        if trusted is None:
            return
        try:
            if checkpoint.size < trusted.size:
                raise VerificationError(
                    f"the feed went back from size {trusted.size} to {checkpoint.size}"
                )
            await self._prove_prefix(trusted.size, trusted.root, checkpoint)
        except (VerificationError, LeagueProblem) as exc:
            await self._refuse(f"a checkpoint inconsistent with the last one verified: "
                               f"{exc.diagnostics()}", trusted, checkpoint)

    async def _verified_page(
        self, position: Position, checkpoint: Checkpoint
    ) -> tuple[list[Event], CompactRange]:
        """The next page, every event verified, and the Merkle edge after it, itself proven
        a prefix of ``checkpoint``'s tree."""
        wanted = min(self.page, checkpoint.size - position.next_seq)
        feed = await self.league.events(position.next_seq - 1, wanted, service=self.source)
        served = feed.events[:wanted]
        if not served:
            await self._refuse(f"no events after {position.next_seq - 1}, though its checkpoint "
                               f"has {checkpoint.size}", position.checkpoint, checkpoint)
        edge = CompactRange(position.edge.size, list(position.edge.hashes))
        events: list[Event] = []
        for offset, item in enumerate(served):
            expected = position.next_seq + offset
            try:
                if item.seq != expected:
                    raise VerificationError(f"event {item.seq} served where {expected} belongs")
                event = item.verified(self.key)
            except LedgerError as exc:
                await self._refuse(exc.diagnostics(), position.checkpoint, checkpoint, item)
            edge.append(event.leaf_hash)
            events.append(event)
        try:
            await self._prove_prefix(edge.size, edge.root(), checkpoint)
        except (VerificationError, LeagueProblem) as exc:
            await self._refuse(f"events {position.next_seq}..{edge.size - 1} are not the history "
                               f"its checkpoint signs: {exc.diagnostics()}",
                               position.checkpoint, checkpoint)
        return events, edge

    async def _prove_prefix(self, size: int, root: bytes, checkpoint: Checkpoint) -> None:
        """Raise unless the tree of ``size`` leaves with ``root`` is a prefix of the signed
        ``checkpoint``'s tree (a consistency proof from the followed service)."""
        proof: list[bytes] = []
        if 0 < size < checkpoint.size:
            answer = await self.league.consistency_proof(size, checkpoint.size, service=self.source)
            proof = [decode_b64(h, what="proof hash") for h in answer.proof]
        verify_consistency(size, checkpoint.size, root, checkpoint.root, proof)

    async def _refuse(
        self,
        reason: str,
        trusted: Checkpoint | None,
        served: Checkpoint | None,
        event: FeedEvent | None = None,
    ) -> NoReturn:
        """Keep the evidence (in its own transaction: it must outlive the refusal), then
        stop following."""
        await self.store.fetchval(
            self._write_evidence,
            self.source,
            reason,
            None if trusted is None else str(trusted),
            None if served is None else str(served),
            None if event is None else event.model_dump_json(),
        )
        log.error("refused %s's feed: %s", self.source, reason)
        raise FeedRefused(f"{self.source}'s feed refused: {reason}")

    # -- applying ----------------------------------------------------------------------------

    async def _apply(
        self,
        position: Position,
        events: Sequence[Event],
        edge: CompactRange,
        checkpoint: Checkpoint,
    ) -> Position:
        """Apply ``events`` and move the position past them, in one transaction."""
        async with self.store.transaction() as tx:
            await tx.execute(self._claim_position, self.source)
            stored = self._position(await tx.fetchrow(self._lock_position, self.source))
            if stored.next_seq != position.next_seq:
                # Another follower of the same feed (a second process) moved first: its
                # transaction applied these events; start again from where it left off.
                return stored
            if events:
                await self.apply(tx, events)
            await tx.execute(
                self._write_position, self.source, edge.size, edge.hashes, str(checkpoint)
            )
        return Position(edge.size, edge, checkpoint)
