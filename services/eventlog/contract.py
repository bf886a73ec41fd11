"""What a service may do with its event log: the store as a contract.

A service holds an :class:`EventStore` and nothing else of the database: appends and its
projection statements run in one :class:`StoreTransaction` (the store's own session, every
driver failure already turned into :class:`~services.eventlog.errors.EventLogError`), reads go
through the store too. The PostgreSQL implementation is
:class:`services.eventlog.store.PostgresEventStore`; ``tests/services/eventlog/contract.py``
is the suite every implementation passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ledger.checkpoint import Checkpoint
from ledger.keys import PublicKey
from ledger.leaf import Event, NewEvent

#: A row a projection statement returns: indexable by position and by column name.
Row = Any


@dataclass(frozen=True, slots=True)
class LogHead:
    """The log's current size and Merkle root."""

    size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class VerifySummary:
    """What :meth:`EventStore.verify_all` covered, when every check passed."""

    events: int
    subtrees: int
    checkpoints: int
    root: bytes
    #: Processes that shared the leaf pass (1 when this process did it alone).
    workers: int = 1
    #: CPU seconds spent by every process of the audit (for benchmarks).
    cpu_seconds: float = 0.0


class StoreTransaction(Protocol):
    """One transaction on a log: appends, and the service's projection statements."""

    async def lock(self) -> int:
        """Take the log's lock now; return the ``seq`` the next append will get."""
        ...

    @property
    def now(self) -> datetime:
        """The transaction's time (after :meth:`lock`): every event it appends records it."""
        ...

    async def append(
        self, stream: str, expected_version: int, type: str, body: dict[str, Any]
    ) -> Event: ...

    async def append_batch(self, items: Sequence[NewEvent]) -> list[Event]: ...

    async def execute(self, statement: str, *args: object) -> str: ...

    async def fetch(self, statement: str, *args: object) -> list[Row]: ...

    async def fetchrow(self, statement: str, *args: object) -> Row | None: ...

    async def fetchval(self, statement: str, *args: object) -> Any: ...


class EventStore(Protocol):
    """The signed, gap-free, Merkle-hashed event log of one service."""

    @property
    def schema(self) -> str: ...

    @property
    def origin(self) -> str:
        """The checkpoint origin line: ``<league>/<service>``."""
        ...

    @property
    def public_key(self) -> PublicKey: ...

    def transaction(self) -> AbstractAsyncContextManager[StoreTransaction]: ...

    def turn(self) -> AbstractAsyncContextManager[None]:
        """This process's turn to form a group of appends, among the processes appending to
        the log (services/eventlog/turns.py); at once when this process is the only one."""
        ...

    def reader(self, pool: Any) -> EventStore:
        """This log read over another connection pool (a streaming replica's): reads,
        proofs and checkpoints as that server holds them; it appends and signs nothing."""
        ...

    def on_commit(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(n)`` after each commit that appended ``n`` > 0 events."""
        ...

    async def append(
        self, stream: str, expected_version: int, type: str, body: dict[str, Any]
    ) -> Event: ...

    async def append_batch(self, items: Sequence[NewEvent]) -> list[Event]: ...

    async def now(self) -> datetime:
        """The store's clock (the database's, unless a test set one)."""
        ...

    async def head(self) -> LogHead: ...

    async def read(self, after: int = -1, limit: int = 1000) -> list[Event]: ...

    async def read_stream(self, stream: str, after_version: int = 0) -> list[Event]: ...

    async def stream_version(self, stream: str) -> int: ...

    async def event(self, seq: int) -> Event | None: ...

    async def events(self, seqs: Sequence[int]) -> list[Event]:
        """The events at ``seqs`` (at most ``MAX_READ``), in ``seq`` order, in one read; a
        ``seq`` past the end is left out."""
        ...

    async def inclusion_proof(self, index: int, size: int) -> list[bytes]: ...

    async def inclusion_proofs(self, indices: Sequence[int], size: int) -> list[list[bytes]]:
        """The audit path of each leaf of ``indices`` (at most ``MAX_READ``) in the tree of
        ``size`` leaves, in the order given, from one read of the stored subtrees."""
        ...

    async def consistency_proof(self, size1: int, size2: int) -> list[bytes]: ...

    async def root(self, size: int) -> bytes: ...

    async def sign_checkpoint(
        self, before_publishing: Callable[[Checkpoint], None] | None = None
    ) -> Checkpoint:
        """Sign the current head (unless the latest checkpoint already covers it); a new
        checkpoint goes to ``before_publishing`` before any reader can be served it; each
        new one rings :data:`services.eventlog.signals.CHECKPOINTS` for this log here, and
        its commit notifies the log's channel to the database's other sessions."""
        ...

    def relaying(self, channel: str) -> AbstractAsyncContextManager[None]:
        """While the block runs, what another process of this store's database notifies on
        ``channel`` (:mod:`services.eventlog.signals`) rings
        :data:`services.eventlog.signals.CHECKPOINTS` in this one."""
        ...

    async def want_checkpoint(self, schema: str) -> None:
        """Ask the log in ``schema`` (in this process and the database's others) to sign a
        checkpoint now rather than at its next beat."""
        ...

    async def latest_checkpoint(self) -> Checkpoint | None: ...

    async def served_checkpoint(self) -> Checkpoint:
        """The latest checkpoint, for readers: never signs or writes."""
        ...

    async def checkpoints(self) -> list[Checkpoint]: ...

    async def fetch(self, statement: str, *args: object) -> list[Row]:
        """A projection read outside any transaction."""
        ...

    async def fetchrow(self, statement: str, *args: object) -> Row | None: ...

    async def fetchval(self, statement: str, *args: object) -> Any: ...

    async def verify_all(
        self, *, database_url: str | None = None, workers: int | None = None
    ) -> VerifySummary: ...
