"""The shared event store: signed, append-only, Merkle-tree event logs on PostgreSQL.

Services program against :class:`EventStore` (``contract``); :class:`PostgresEventStore` is
its implementation. See docs/eventlog.md for the API, the proof policy and the audit; the
exact leaf bytes are protocol, in :mod:`ledger.leaf`.
"""

from ledger.leaf import Event, NewEvent
from services.eventlog.contract import (
    EventStore,
    LogHead,
    Row,
    StoreTransaction,
    VerifySummary,
)
from services.eventlog.errors import (
    CheckpointRefused,
    EventLogError,
    StoreIntegrityError,
    StoreUnavailable,
    StreamConflict,
    TamperedLog,
)
from services.eventlog.store import PostgresEventStore

__all__ = [
    "CheckpointRefused",
    "Event",
    "EventLogError",
    "EventStore",
    "LogHead",
    "NewEvent",
    "PostgresEventStore",
    "Row",
    "StoreIntegrityError",
    "StoreTransaction",
    "StoreUnavailable",
    "StreamConflict",
    "TamperedLog",
    "VerifySummary",
]
