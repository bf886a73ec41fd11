"""The feed follower: applies another service's verified feed to this service, exactly once.

A follower reads a service's feed over HTTP and trusts nothing it reads. What it verifies,
and where:

- **the checkpoint** (:meth:`FeedFollower._checkpoint`, :meth:`~FeedFollower._check_extends`):
  signed by that service's key (from the league manifest), of that service's origin, and a
  consistent extension of the last checkpoint this follower verified (a consistency proof
  from the service, checked here; or, when the follower stands exactly at that checkpoint,
  the first page's own proof below, whose tree is built on it);
- **each event** (:meth:`FeedFollower._verified_page`): at the next ``seq`` (no gap, no
  repeat), its leaf recomputed from its content (the canonical leaf bytes,
  :mod:`ledger.leaf`) equal to the leaf hash served beside it, so the leaf hash binds the
  content;
- **the page**: its leaf hashes, appended to the Merkle edge of everything applied so far,
  give a tree that the signed checkpoint extends (a consistency proof to it), so a page is
  known to be history the service signed before a single event of it is applied.

Each of these is the one feed verifier's (:mod:`ledger.feed`), which the auditor uses too;
this module adds where it reads from, what it keeps and how it recovers.

An event's own signature is not checked here: the service's signature over the checkpoint,
the Merkle proofs and the recomputed leaf already say that the service logged exactly that
content at that ``seq``. Every event's signature stays checkable by anyone who holds one
event alone, and ``league audit`` checks each of them (:mod:`ledger.audit`); so does the
service's own ``verify_all`` (docs/security.md, "A dishonest service").

A verified page is applied by the caller's ``apply`` in one transaction of the follower's own
store, and the new position (with the Merkle edge, and the checkpoint once the page reaches
it) is written in that same transaction: a crash before the commit applies nothing, a crash
after it applies everything, and a restart resumes from the stored position. A follower that
keeps the tree (``prove``) also writes the page's leaf hashes and the subtrees they complete
in ``followed_nodes``, so :meth:`FeedFollower.proofs` proves a followed event's inclusion in
the stored checkpoint with no call to the service. A feed that contradicts what it signed (a
rewritten or forked history, a forged event) is refused: what it served is kept in
``feed_evidence`` and the follower stops with :class:`FeedRefused` until an operator looks.
A service that is down or busy is retried with capped exponential backoff.

**Waking, not polling.** :meth:`FeedFollower.run` catches up each time the followed log
signs a checkpoint: in this process, the store that signs it rings
:data:`~services.eventlog.signals.CHECKPOINTS`; from another process of the same database,
its ``NOTIFY`` is relayed there by a connection of the follower's store that listens
(``LISTEN``, :mod:`services.eventlog.signals`). A timer (``idle``) stays beside the bell, so
a lost ring (a dropped connection, a service in another database) only delays. Catch-ups
asked for at the same time share one (:meth:`FeedFollower.caught_up`): the background task
and every request waiting for the same event.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.api.logs import FeedEvent
from ledger.checkpoint import Checkpoint
from ledger.encoding import decode_b64
from ledger.errors import LedgerError, VerificationError
from ledger.feed import BoundPage, LogTree, Node, bind_page, prefix_of, signed_checkpoint
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.merkle import CompactRange, inclusion_proof, required_subtrees
from services.eventlog import EventStore, Row, StoreTransaction, StoreUnavailable
from services.eventlog.signals import CHECKPOINTS, checkpoint_channel
from services.eventlog.sql import SCHEMA_NAME

log = logging.getLogger(__name__)

#: Applies a verified page of the followed feed inside the follower's transaction.
Apply = Callable[[StoreTransaction, Sequence[Event]], Awaitable[None]]
#: Events read and applied per page (and per transaction).
DEFAULT_PAGE = 500
#: Seconds between looks once the follower has caught up, when no checkpoint rings first.
DEFAULT_IDLE = 0.5
#: Pages of more events than this are verified in a worker thread (the loop keeps answering).
THREAD_PAGE = 64
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
#: The tree of a followed feed, kept by a follower that proves (migration 0012).
WRITE_NODES = (
    "INSERT INTO {s}.followed_nodes (source, level, idx, hash)"
    " SELECT $1, w.l, w.i, w.h FROM unnest($2::smallint[], $3::bigint[], $4::bytea[])"
    " AS w(l, i, h) ON CONFLICT DO NOTHING"
)
READ_NODES = (
    "SELECT n.level, n.idx, n.hash FROM {s}.followed_nodes n"
    " JOIN unnest($2::smallint[], $3::bigint[]) AS w(l, i) ON n.level = w.l AND n.idx = w.i"
    " WHERE n.source = $1"
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
    before it, and the last checkpoint it verified and applied through (its size is at most
    ``next_seq``: a catch-up cut into pages writes it with the page that reaches it)."""

    next_seq: int
    edge: CompactRange
    checkpoint: Checkpoint | None


class FeedFollower:
    """Follows the feed of service ``source`` into ``store``, applying pages with ``apply``;
    with ``prove``, keeps the feed's Merkle tree for :meth:`proofs`."""

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
        prove: bool = False,
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
        self.prove = prove
        #: The bell of the followed log's checkpoints (its service's schema is its name).
        self.channel = checkpoint_channel(source)
        self._read_position = READ_POSITION.replace("{s}", store.schema)
        self._lock_position = self._read_position + " FOR UPDATE"
        self._claim_position = CLAIM_POSITION.replace("{s}", store.schema)
        self._write_position = WRITE_POSITION.replace("{s}", store.schema)
        self._write_nodes = WRITE_NODES.replace("{s}", store.schema)
        self._read_nodes = READ_NODES.replace("{s}", store.schema)
        self._write_evidence = WRITE_EVIDENCE.replace("{s}", store.schema)
        #: Whether this follower has written its starting edge's subtrees (see :meth:`_apply`).
        self._edge_kept = False
        # Shared catch-ups (:meth:`caught_up`): how many began, and the last one that ended.
        self._flight = asyncio.Lock()
        self._begun = 0
        self._ended = 0
        self._failure: Exception | None = None
        self._latest: Position | None = None

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

    async def proofs(
        self, seqs: Sequence[int], reads: EventStore | None = None
    ) -> tuple[Checkpoint, list[list[bytes]]] | None:
        """The last checkpoint this follower verified and applied through, and the inclusion
        proof in it of each followed event of ``seqs``, built from the tree kept while
        following (read from ``reads``, a replica's view, else the store); None when the
        kept tree cannot prove one of them (not covered by that checkpoint yet, followed
        before the tree was kept, or a follower that does not keep it). The caller checks
        each proof against the leaf hash it holds before serving it."""
        if not self.prove:
            return None
        view = self.store if reads is None else reads
        row = await view.fetchrow(self._read_position, self.source)
        checkpoint = self._position(row).checkpoint
        if checkpoint is None or any(not 0 <= seq < checkpoint.size for seq in seqs):
            return None
        size = checkpoint.size

        def build(get: Callable[[int, int], bytes]) -> list[list[bytes]]:
            return [inclusion_proof(seq, size, get) for seq in seqs]

        needed = required_subtrees(build)
        rows = await view.fetch(
            self._read_nodes,
            self.source,
            [level for level, _ in needed],
            [index for _, index in needed],
        )
        found = {(row[0], row[1]): bytes(row[2]) for row in rows}
        if len(found) < len(needed):
            return None
        return checkpoint, build(lambda level, index: found[(level, index)])

    # -- following ---------------------------------------------------------------------------

    async def catch_up(self) -> int:
        """Apply everything up to the feed's current checkpoint; the number of events applied.

        Raises :class:`FeedRefused` (after keeping the evidence) when the feed contradicts
        itself, and the league client's or the store's errors when either is unavailable.
        """
        checkpoint = await self._checkpoint()
        position = await self.position()
        # Standing exactly at the last checkpoint verified, the first page proves the new one
        # extends it (the page's tree is built on that very edge): no proof asked for that.
        deferred = _at_checkpoint(position) and position.next_seq < checkpoint.size
        if not deferred:
            await self._check_extends(position, checkpoint)
        applied = 0
        while position.next_seq < checkpoint.size:
            events, edge, nodes = await self._verified_page(position, checkpoint, deferred)
            position = await self._apply(position, events, edge, nodes, checkpoint)
            applied += len(events)
            deferred = False
        if position.checkpoint is None or position.checkpoint.size < checkpoint.size:
            position = await self._apply(position, [], position.edge, [], checkpoint)
        self._latest = position
        return applied

    async def caught_up(self) -> Position:
        """Catch up in a catch-up that begins after this call, shared: every caller that
        asks while one runs waits for it, then shares the next one (a single catch-up
        serves them all); its position, or the error it ended with."""
        ticket = self._begun
        async with self._flight:
            if self._ended <= ticket:  # none began (and ended) since this call: run one
                self._begun += 1
                flight = self._begun
                try:
                    await self.catch_up()
                except Exception as exc:
                    self._ended, self._failure = flight, exc
                    raise
                self._ended, self._failure = flight, None
            elif self._failure is not None:
                raise self._failure
            return self._latest if self._latest is not None else await self.position()

    async def run(self, *, idle: float = DEFAULT_IDLE) -> None:
        """Follow until cancelled: catch up, wait for the followed log's next checkpoint (at
        most ``idle`` seconds), again; back off while the source or the store is
        unavailable. Returns only by :class:`FeedRefused`, re-raised."""
        delay = BACKOFF_START
        async with self.store.relaying(self.channel):
            while True:
                mark = CHECKPOINTS.mark(self.channel)
                try:
                    await self.caught_up()
                except FeedRefused:
                    raise
                except (LeagueUnreachable, LeagueProblem, StoreUnavailable) as exc:
                    log.warning(
                        "following %s: %s; retrying in %.1f s",
                        self.source,
                        exc.diagnostics(),
                        delay,
                    )
                    await asyncio.sleep(delay * (0.5 + random.random()))  # noqa: S311 (jitter)
                    delay = min(delay * 2, BACKOFF_CAP)
                    continue
                delay = BACKOFF_START
                await CHECKPOINTS.wait(self.channel, mark, idle)

    # -- verification ------------------------------------------------------------------------

    async def _checkpoint(self) -> Checkpoint:
        text = await self.league.checkpoint(service=self.source)
        try:
            return signed_checkpoint(text, self.origin, self.key)
        except LedgerError as exc:
            raise FeedRefused(f"{self.source}'s checkpoint: {exc.diagnostics()}") from None

    async def _check_extends(self, position: Position, checkpoint: Checkpoint) -> None:
        """A checkpoint as large as the last one verified must extend it; otherwise keep
        both. A smaller one is older, not a contradiction: read before another follower of
        the feed (another worker, or this one's background task) stored a newer one, or
        served by a replica that lags; there is nothing to apply from it."""
        trusted = position.checkpoint
        if trusted is None or checkpoint.size < trusted.size:
            return
        try:
            await self._prove_prefix(trusted.size, trusted.root, checkpoint)
        except (VerificationError, LeagueProblem) as exc:
            await self._refuse(
                f"a checkpoint inconsistent with the last one verified: {exc.diagnostics()}",
                trusted,
                checkpoint,
            )

    async def _verified_page(
        self, position: Position, checkpoint: Checkpoint, deferred: bool = False
    ) -> tuple[list[Event], CompactRange, list[Node]]:
        """The next page, every event bound to its leaf hash, the Merkle edge after it,
        itself proven a prefix of ``checkpoint``'s tree, and (when proving) the page's
        leaves and the subtrees they complete. ``deferred``: the page starts at the last
        checkpoint verified, whose extension to ``checkpoint`` was not proven apart (the
        page's proof proves it); a page that fails is then checked against it first, so
        an inconsistent checkpoint is named as such."""
        wanted = min(self.page, checkpoint.size - position.next_seq)
        feed = await self.league.events(position.next_seq - 1, wanted, service=self.source)
        served = feed.events[:wanted]
        if not served:
            await self._refuse(
                f"no events after {position.next_seq - 1}, though its checkpoint "
                f"has {checkpoint.size}",
                position.checkpoint,
                checkpoint,
            )
        edge = LogTree.of(position.edge)
        bound: BoundPage
        if len(served) > THREAD_PAGE:  # canonical leaves and hashes: CPU, off the loop
            bound = await asyncio.to_thread(bind_page, edge, served, nodes=self.prove)
        else:
            bound = bind_page(edge, served, nodes=self.prove)
        if bound.failure is not None:
            offset, error = bound.failure
            await self._refuse(error.diagnostics(), position.checkpoint, checkpoint, served[offset])
        try:
            await self._prove_prefix(edge.size, edge.root(), checkpoint)
        except (VerificationError, LeagueProblem) as exc:
            if deferred:
                await self._check_extends(position, checkpoint)
            await self._refuse(
                f"events {position.next_seq}..{edge.size - 1} are not the history "
                f"its checkpoint signs: {exc.diagnostics()}",
                position.checkpoint,
                checkpoint,
            )
        return bound.events, edge, bound.nodes

    async def _prove_prefix(self, size: int, root: bytes, checkpoint: Checkpoint) -> None:
        """Raise unless the tree of ``size`` leaves with ``root`` is a prefix of the signed
        ``checkpoint``'s tree (a consistency proof from the followed service)."""
        proof: list[bytes] = []
        if 0 < size < checkpoint.size:
            answer = await self.league.consistency_proof(size, checkpoint.size, service=self.source)
            proof = [decode_b64(h, what="proof hash") for h in answer.proof]
        prefix_of(size, root, checkpoint, proof)

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
        nodes: Sequence[Node],
        checkpoint: Checkpoint,
    ) -> Position:
        """Apply ``events`` and move the position past them, in one transaction; the
        checkpoint is stored once the position reaches it."""
        async with self.store.transaction() as tx:
            await tx.execute(self._claim_position, self.source)
            stored = self._position(await tx.fetchrow(self._lock_position, self.source))
            if stored.next_seq != position.next_seq:
                # Another follower of the same feed (a second process) moved first: its
                # transaction applied these events; start again from where it left off.
                return stored
            if events:
                await self.apply(tx, events)
            if self.prove:
                # The first page this follower writes carries the subtrees of the edge it
                # starts from: a proof of any later event needs no older node (a feed
                # followed before the tree was kept has none).
                kept = list(nodes) if self._edge_kept else [*edge_subtrees(stored.edge), *nodes]
                if kept:
                    await tx.execute(
                        self._write_nodes,
                        self.source,
                        [n[0] for n in kept],
                        [n[1] for n in kept],
                        [n[2] for n in kept],
                    )
            reached = checkpoint if edge.size == checkpoint.size else stored.checkpoint
            await tx.execute(
                self._write_position,
                self.source,
                edge.size,
                edge.hashes,
                None if reached is None else str(reached),
            )
        self._edge_kept = self.prove
        return Position(edge.size, edge, reached)


def _at_checkpoint(position: Position) -> bool:
    """Whether ``position`` stands exactly at its checkpoint: the edge of as many events as
    the checkpoint signs, folding to its root."""
    trusted = position.checkpoint
    return trusted is not None and LogTree.of(position.edge).matches(trusted)


def edge_subtrees(edge: CompactRange) -> list[Node]:
    """The complete subtrees an edge holds, as nodes: the largest first, as it keeps them."""
    found: list[Node] = []
    start = 0
    hashes = iter(edge.hashes)
    for level in reversed(range(edge.size.bit_length())):
        if edge.size >> level & 1:
            found.append((level, start >> level, next(hashes)))
            start += 1 << level
    return found
