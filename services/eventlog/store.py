"""The signed, append-only event log of one service, on PostgreSQL (asyncpg).

The implementation of :class:`services.eventlog.contract.EventStore`. Every append takes the
row lock on the log's head row first and holds it until commit, so appends to one log are
serialized: ``seq`` is dense (0, 1, 2, ... = the Merkle leaf index) and commit order is
``seq`` order, which is what lets a feed reader poll ``seq > N`` without ever skipping an
event. Projections join the same transaction, through the store's own wrapped statements::

    async with store.transaction() as tx:
        event = await tx.append("print/CZ-MODEL-A-0042", 0, "stamped", {...})
        await tx.execute("INSERT INTO mint.prints ...", ...)

Canonicalizing and signing a batch runs in a worker thread, so the event loop keeps answering
while a large group is signed under the lock. The time of a transaction is the database's
(read with the lock), unless a test gives the store a clock of its own. Each append stores the
complete Merkle subtrees it closes, so proofs are served from O(log n) stored hashes however
long the log grows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from datetime import datetime
from typing import Any, TypeVar

import asyncpg
import orjson

from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.errors import LedgerError, Overloaded, ProofError
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import Event, NewEvent, event_leaf
from ledger.merkle import (
    CompactRange,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    required_subtrees,
    root_from,
    verify_consistency,
)
from services.eventlog.contract import LogHead, Row, VerifySummary
from services.eventlog.errors import (
    CheckpointRefused,
    EventLogError,
    StoreIntegrityError,
    StoreUnavailable,
    StoreValueRefused,
    StreamConflict,
)
from services.eventlog.integrity import LogRows, verify_all
from services.eventlog.signals import (
    CHECKPOINTS,
    checkpoint_channel,
    notice,
    relaying,
    wanted_channel,
)
from services.eventlog.sql import Statements
from services.eventlog.turns import Turnstile

T = TypeVar("T")

#: A clock a test gives the store in place of the database's.
Clock = Callable[[], datetime]

log = logging.getLogger(__name__)

MAX_BATCH = 50_000
MAX_READ = 10_000


def _event(row: asyncpg.Record) -> Event:
    return Event(
        seq=row[0],
        stream=row[1],
        stream_version=row[2],
        type=row[3],
        body=orjson.loads(row[4]),
        recorded_at=row[5],
        leaf_hash=row[6],
        signature=row[7],
    )


def _check_read(count: int) -> None:
    if count > MAX_READ:
        raise EventLogError(f"one read covers at most {MAX_READ} events, not {count}")


#: What asyncpg raises for a value that cannot be sent as its column's type (an integer
#: beyond 64 bits): the client-side ``DataError``, not SQLSTATE class 22's of the same name.
_ClientDataError: type[Exception] = asyncpg.exceptions._base.DataError
#: What the driver raises when the database cannot be reached or used: an error of the server,
#: a lost connection, an unreachable server, a driver in a broken state (the store is
#: unavailable: 503 with Retry-After).
DATABASE_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)


@asynccontextmanager
async def _wrapped() -> AsyncIterator[None]:
    """Turn driver failures into store errors; our own errors pass through.

    A value the database cannot hold (asyncpg's client-side ``DataError``, or SQLSTATE class
    22) is :class:`StoreValueRefused` (the request's fault, a 422); a lost connection, an
    unreachable server or a driver in a broken state (``InternalClientError``) is
    :class:`StoreUnavailable` (503 with Retry-After). Their messages name no internals: the
    cause is logged here, for the operator.
    """
    try:
        yield
    except LedgerError:
        raise
    except asyncpg.IntegrityConstraintViolationError as exc:
        log.warning("the database refused a write: %s: %s", type(exc).__name__, exc)
        raise StoreIntegrityError("the database refused the write") from exc
    except (_ClientDataError, asyncpg.DataError) as exc:
        log.info("the database refused a value: %s: %s", type(exc).__name__, exc)
        raise StoreValueRefused("a value of the request is out of the range the log holds") from exc
    except DATABASE_ERRORS as exc:
        log.warning("event store unavailable: %s: %s", type(exc).__name__, exc)
        raise StoreUnavailable() from exc


class PostgresTransaction:
    """One database transaction on the log: appends plus the caller's projection SQL."""

    def __init__(self, log: PostgresEventStore, conn: asyncpg.Connection) -> None:
        self._log = log
        self._conn = conn
        self._edge: CompactRange | None = None
        self._now: datetime | None = None
        self._versions: dict[str, int] = {}
        #: Events appended so far in this transaction.
        self.appended = 0

    @property
    def now(self) -> datetime:
        if self._now is None:
            raise EventLogError("the transaction has no time before it takes the log's lock")
        return self._now

    async def execute(self, statement: str, *args: object) -> str:
        async with _wrapped():
            result: str = await self._conn.execute(statement, *args)
            return result

    async def fetch(self, statement: str, *args: object) -> list[Row]:
        async with _wrapped():
            return list(await self._conn.fetch(statement, *args))

    async def fetchrow(self, statement: str, *args: object) -> Row | None:
        async with _wrapped():
            return await self._conn.fetchrow(statement, *args)

    async def fetchval(self, statement: str, *args: object) -> Any:
        async with _wrapped():
            return await self._conn.fetchval(statement, *args)

    async def lock(self) -> int:
        """Take the log's lock now; return the ``seq`` the next append will get.

        Appends take it anyway; take it first when a decision (a run's remaining count, a
        prior endorsement) must not change between reading it and appending, or when a body
        must name its own event index before it is appended.
        """
        async with _wrapped():
            return (await self._lock()).size

    async def _lock(self) -> CompactRange:
        """Take the log's head lock (once per transaction) and load its right edge."""
        if self._edge is None:
            row = await self._conn.fetchrow(self._log._sql.lock_head)
            if row is None:
                raise EventLogError(f"log {self._log.schema} has no head row: run migrations")
            self._edge = CompactRange(row[0], list(row[1]))
            self._now = self._log._clock() if self._log._clock is not None else row[2]
        return self._edge

    async def _current_versions(self, streams: Iterable[str]) -> dict[str, int]:
        wanted = sorted({s for s in streams if s not in self._versions})
        if wanted:
            rows = await self._conn.fetch(self._log._sql.stream_versions, wanted)
            for stream, version in rows:
                self._versions[stream] = version or 0
        return self._versions

    async def append(
        self, stream: str, expected_version: int, type: str, body: dict[str, Any]
    ) -> Event:
        """Append one event; ``expected_version`` is the stream's current version (0 if new)."""
        (event,) = await self.append_batch([NewEvent(stream, expected_version, type, body)])
        return event

    async def append_batch(self, items: Sequence[NewEvent]) -> list[Event]:
        """Append many events in order, all or none; each names the version it expects."""
        if not items:
            return []
        if len(items) > MAX_BATCH:
            raise EventLogError(f"a batch holds at most {MAX_BATCH} events, not {len(items)}")
        async with _wrapped():
            edge = await self._lock()
            versions = await self._current_versions(item.stream for item in items)
            # CPU-bound (JCS and Ed25519 per event): off the event loop, though under the lock.
            events, leaves = await asyncio.to_thread(
                self._log._sign, edge.size, versions, items, self.now
            )
            nodes: list[tuple[int, int, bytes]] = []
            for event in events:
                nodes.extend(edge.append(event.leaf_hash))
            await self._insert(events, leaves, nodes, edge)
        self.appended += len(events)
        return events

    async def _insert(
        self,
        events: list[Event],
        leaves: list[bytes],
        nodes: list[tuple[int, int, bytes]],
        edge: CompactRange,
    ) -> None:
        try:
            await self._conn.execute(
                self._log._sql.append,
                [e.seq for e in events],
                [e.stream for e in events],
                [e.stream_version for e in events],
                [e.type for e in events],
                [orjson.dumps(e.body).decode() for e in events],
                events[0].recorded_at,
                leaves,
                [e.leaf_hash for e in events],
                [e.signature for e in events],
                [n[0] for n in nodes],
                [n[1] for n in nodes],
                [n[2] for n in nodes],
                edge.size,
                edge.hashes,
            )
        except asyncpg.UniqueViolationError as exc:
            # Only a writer bypassing the head lock can get here: never a caller's conflict.
            raise EventLogError(f"concurrent write outside the log's lock: {exc}") from exc


class PostgresEventStore:
    """The event log of one service, in its own schema, signed by the service's key."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        schema: str,
        origin: str,
        key: SigningKey,
        clock: Clock | None = None,
        turnstile: Turnstile | None = None,
    ) -> None:
        self._sql = Statements.for_schema(schema)
        #: The log's turns among several appending processes (None: this one appends alone).
        self._turnstile = turnstile
        self._pool = pool
        self._schema = schema
        self._origin = origin
        self._key = key
        self._clock = clock
        self._listeners: list[Callable[[int], None]] = []
        #: True for a view from :meth:`reader`: it reads, it never appends or signs.
        self._read_only = False
        self._reader: PostgresEventStore | None = None
        self._channel = checkpoint_channel(schema)

    def reader(self, pool: asyncpg.Pool) -> PostgresEventStore:
        """This log read over ``pool``: a streaming replica's (``DATABASE_READ_URL``) for
        the read endpoints, or this store itself when ``pool`` is its own.

        The view reads the feed, events, proofs, checkpoints and projections as the replica
        has replayed them: a prefix of the primary's log, never a ``seq`` the primary has not
        committed. A checkpoint the view serves is one whose tree it holds: the signer holds
        the head lock every append holds until commit, so the checkpoint's commit follows
        every event it covers in the WAL, which a standby replays in order. It appends and
        signs nothing (:meth:`transaction` refuses).
        """
        if pool is self._pool:
            return self
        if self._reader is None or self._reader._pool is not pool:
            view = PostgresEventStore(
                pool, schema=self._schema, origin=self._origin, key=self._key, clock=self._clock
            )
            view._read_only = True
            self._reader = view
        return self._reader

    def on_commit(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(n)`` after each commit that appended ``n`` > 0 events."""
        self._listeners.append(listener)

    @property
    def schema(self) -> str:
        return self._schema

    @property
    def origin(self) -> str:
        return self._origin

    @property
    def public_key(self) -> PublicKey:
        return self._key.public

    async def now(self) -> datetime:
        if self._clock is not None:
            return self._clock()
        async with _wrapped():
            moment: datetime = await self._pool.fetchval("SELECT clock_timestamp()")
        return moment

    # -- appending -------------------------------------------------------------------------

    def turn(self) -> AbstractAsyncContextManager[None]:
        """This process's turn to form a group of appends (services/eventlog/turns.py): the
        turnstile's when several processes append to this log, else at once."""
        if self._turnstile is None:
            return nullcontext()
        return self._turnstile.turn()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PostgresTransaction]:
        """A transaction for appends and projections; it commits when the block exits."""
        if self._read_only:
            raise EventLogError(f"the {self._schema} log's read view appends nothing")
        async with _wrapped(), self._pool.acquire() as conn:
            async with conn.transaction():
                tx = PostgresTransaction(self, conn)
                yield tx
            if tx.appended:
                for listener in self._listeners:
                    listener(tx.appended)

    async def append(
        self, stream: str, expected_version: int, type: str, body: dict[str, Any]
    ) -> Event:
        """Append one event in a transaction of its own."""
        async with self.transaction() as tx:
            return await tx.append(stream, expected_version, type, body)

    async def append_batch(self, items: Sequence[NewEvent]) -> list[Event]:
        """Append many events in one transaction of their own."""
        async with self.transaction() as tx:
            return await tx.append_batch(items)

    def _sign(
        self,
        size: int,
        versions: dict[str, int],
        items: Sequence[NewEvent],
        now: datetime,
    ) -> tuple[list[Event], list[bytes]]:
        """Number, version-check, canonicalize, hash and sign ``items`` (nothing written);
        the events, and the leaf bytes signed for each (stored beside it for the audit)."""
        events: list[Event] = []
        leaves: list[bytes] = []
        pending = dict(versions)
        for offset, item in enumerate(items):
            actual = pending[item.stream]
            if item.expected_version != actual:
                raise StreamConflict(item.stream, item.expected_version, actual)
            pending[item.stream] = actual + 1
            seq = size + offset
            leaf = event_leaf(
                seq=seq,
                stream=item.stream,
                stream_version=actual + 1,
                type=item.type,
                body=item.body,
                recorded_at=now,
            )
            body = dict(item.body)
            leaves.append(leaf)
            events.append(
                Event(
                    seq=seq,
                    stream=item.stream,
                    stream_version=actual + 1,
                    type=item.type,
                    body=body,
                    recorded_at=now,
                    leaf_hash=leaf_hash(leaf),
                    signature=self._key.sign_raw(leaf),
                )
            )
        versions.update(pending)
        return events, leaves

    # -- reading ---------------------------------------------------------------------------

    async def fetch(self, statement: str, *args: object) -> list[Row]:
        async with _wrapped():
            return list(await self._pool.fetch(statement, *args))

    async def fetchrow(self, statement: str, *args: object) -> Row | None:
        async with _wrapped():
            return await self._pool.fetchrow(statement, *args)

    async def fetchval(self, statement: str, *args: object) -> Any:
        async with _wrapped():
            return await self._pool.fetchval(statement, *args)

    async def head(self) -> LogHead:
        """Size and root of the log as of the last commit."""
        async with _wrapped():
            row = await self._pool.fetchrow(self._sql.read_head)
        if row is None:
            raise EventLogError(f"log {self.schema} has no head row: run migrations")
        edge = CompactRange(row[0], list(row[1]))
        return LogHead(edge.size, edge.root())

    async def read(self, after: int = -1, limit: int = 1000) -> list[Event]:
        """The feed: events with ``seq > after`` in ``seq`` order, at most ``limit`` of them."""
        limit = max(1, min(limit, MAX_READ))
        async with _wrapped():
            rows = await self._pool.fetch(self._sql.read_feed, after, limit)
        return [_event(r) for r in rows]

    async def read_stream(self, stream: str, after_version: int = 0) -> list[Event]:
        """The events of one stream with a version above ``after_version``, in order."""
        async with _wrapped():
            rows = await self._pool.fetch(
                self._sql.read_stream,
                stream,
                after_version,
                MAX_READ,
            )
        return [_event(r) for r in rows]

    async def stream_version(self, stream: str) -> int:
        """The stream's current version: how many events it holds (0 for a new stream)."""
        async with _wrapped():
            version = await self._pool.fetchval(self._sql.stream_versions, [stream], column=1)
        return version or 0

    async def event(self, seq: int) -> Event | None:
        """The event at ``seq``, or None past the end."""
        async with _wrapped():
            row = await self._pool.fetchrow(self._sql.read_event, seq)
        return None if row is None else _event(row)

    async def events(self, seqs: Sequence[int]) -> list[Event]:
        """The events at ``seqs``, in ``seq`` order, in one read (a ``seq`` past the end is
        left out)."""
        _check_read(len(seqs))
        async with _wrapped():
            rows = await self._pool.fetch(self._sql.read_events, list(seqs))
        return [_event(r) for r in rows]

    # -- proofs ----------------------------------------------------------------------------

    async def _serve(
        self, conn: asyncpg.Connection, build: Callable[[Callable[[int, int], bytes]], T]
    ) -> T:
        """Run a proof builder over the stored subtree hashes it needs, fetched in one query."""
        needed = required_subtrees(build)
        rows = await conn.fetch(
            self._sql.read_subtrees,
            [i for level, i in needed if level == 0],
            [level for level, _ in needed if level > 0],
            [i for level, i in needed if level > 0],
        )
        found = {(r[0], r[1]): bytes(r[2]) for r in rows}

        def get(level: int, index: int) -> bytes:
            try:
                return found[(level, index)]
            except KeyError:
                raise EventLogError(f"stored subtree ({level}, {index}) is missing") from None

        return build(get)

    async def _checked_size(self, conn: asyncpg.Connection, size: int) -> None:
        current = await conn.fetchval(self._sql.head_size)
        if size > current:
            raise ProofError(f"tree size {size} is beyond the log's size {current}")

    async def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        """Audit path of leaf ``index`` in the tree of ``size`` leaves."""
        async with _wrapped(), self._pool.acquire() as conn:
            await self._checked_size(conn, size)
            return await self._serve(conn, lambda get: inclusion_proof(index, size, get))

    async def inclusion_proofs(self, indices: Sequence[int], size: int) -> list[list[bytes]]:
        """The audit path of each leaf of ``indices`` in the tree of ``size`` leaves, in the
        order given: every subtree they need is fetched in one query (a receipt per hop of a
        group costs one read, not one per hop)."""
        _check_read(len(indices))
        async with _wrapped(), self._pool.acquire() as conn:
            await self._checked_size(conn, size)
            return await self._serve(
                conn, lambda get: [inclusion_proof(index, size, get) for index in indices]
            )

    async def consistency_proof(self, size1: int, size2: int) -> list[bytes]:
        """Proof that the tree of ``size1`` leaves is a prefix of the tree of ``size2``."""
        async with _wrapped(), self._pool.acquire() as conn:
            await self._checked_size(conn, size2)
            return await self._serve(conn, lambda get: consistency_proof(size1, size2, get))

    async def root(self, size: int) -> bytes:
        """The Merkle root of the first ``size`` events, from stored subtrees."""
        async with _wrapped(), self._pool.acquire() as conn:
            await self._checked_size(conn, size)
            return await self._serve(conn, lambda get: root_from(size, get))

    # -- checkpoints -----------------------------------------------------------------------

    async def sign_checkpoint(
        self, before_publishing: Callable[[Checkpoint], None] | None = None
    ) -> Checkpoint:
        """Sign a checkpoint of the current head, consistent with the last one signed.

        For the service's background checkpointer alone (readers call
        :meth:`served_checkpoint`). Holds the head lock, so the size cannot move underneath;
        an unchanged head returns the stored checkpoint without taking the lock.
        ``before_publishing`` gets a new checkpoint before it is committed (and so before any
        reader can be served it): the checkpointer keeps a copy outside the database there.
        """
        latest = await self.latest_checkpoint()
        if latest is not None and await self.head() == LogHead(latest.size, latest.root):
            return latest
        async with self.transaction() as tx:
            edge = await tx._lock()
            conn = tx._conn
            size, root = edge.size, edge.root()
            previous = await conn.fetchrow(self._sql.latest_checkpoint)
            if previous is not None:
                old_size, old_root = previous[0], bytes(previous[1])
                if old_size == size and old_root == root:
                    return Checkpoint.from_note(previous[2])
                try:
                    stored_old = await self._serve(conn, lambda get: root_from(old_size, get))
                    proof = await self._serve(
                        conn, lambda get: consistency_proof(old_size, size, get)
                    )
                    if stored_old != old_root:
                        raise ProofError("stored subtrees disagree with the signed root")
                    verify_consistency(old_size, size, old_root, root, proof)
                except (ProofError, EventLogError) as exc:
                    raise CheckpointRefused(
                        f"refusing to sign size {size}: not consistent with the checkpoint "
                        f"of size {old_size} ({exc.diagnostics()})"
                    ) from exc
            checkpoint = sign_checkpoint(self.origin, size, root, self._key)
            await conn.execute(self._sql.insert_checkpoint, size, root, str(checkpoint))
            # Followers in other processes wake at the commit (docs/eventlog.md, "Waking
            # followers"); those of this process once it is done.
            await conn.execute(self._sql.notify, self._channel, notice(size))
            if before_publishing is not None:
                before_publishing(checkpoint)
        CHECKPOINTS.ring(self._channel)
        return checkpoint

    def relaying(self, channel: str) -> AbstractAsyncContextManager[None]:
        """While the block runs, what other processes of this database notify on
        ``channel`` (a log's checkpoints, or the checkpoints wanted of it) rings
        :data:`~services.eventlog.signals.CHECKPOINTS` here (over one connection of this
        store's pool, whatever the number of channels)."""
        return relaying(self._pool, channel)

    async def want_checkpoint(self, schema: str) -> None:
        """Ask the log in ``schema`` for a checkpoint now, in this process and (a
        notification on its wanted channel) in the other processes of this database: a
        follower waits for an event that log appended and has not checkpointed yet."""
        channel = wanted_channel(schema)
        CHECKPOINTS.ring(channel)
        async with _wrapped():
            await self._pool.execute(self._sql.notify, channel, notice(0))

    async def latest_checkpoint(self) -> Checkpoint | None:
        """The most recent signed checkpoint, or None before the first."""
        async with _wrapped():
            row = await self._pool.fetchrow(self._sql.latest_checkpoint)
        return None if row is None else Checkpoint.from_note(row[2])

    async def served_checkpoint(self) -> Checkpoint:
        """The latest checkpoint, for readers; before the first is signed, a refusal that
        says to come back (the checkpointer signs one as the service starts)."""
        latest = await self.latest_checkpoint()
        if latest is None:
            raise Overloaded(f"the {self._schema} log has signed no checkpoint yet", 1)
        return latest

    async def verify_all(
        self, *, database_url: str | None = None, workers: int | None = None
    ) -> VerifySummary:
        """Re-derive every leaf, signature, subtree and checkpoint; raise
        :class:`~services.eventlog.errors.TamperedLog` naming the first bad ``seq``.

        ``workers`` > 1 spreads the leaf pass over processes that connect to ``database_url``
        (callers must be importable without side effects: workers start by forkserver).
        """
        async with _wrapped():
            rows = LogRows(self._pool, self._sql, self._schema, self._origin, self._key.public)
            return await verify_all(rows, database_url=database_url, workers=workers)

    async def checkpoints(self) -> list[Checkpoint]:
        """Every signed checkpoint, oldest first."""
        async with _wrapped():
            rows = await self._pool.fetch(self._sql.all_checkpoints)
        return [Checkpoint.from_note(r[2]) for r in rows]
