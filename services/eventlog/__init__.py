"""The shared event store: signed, append-only, Merkle-tree event logs on PostgreSQL.

See docs/eventlog.md for the API, the exact leaf bytes and the proof policy.
"""

from services.eventlog.audit import VerifySummary
from services.eventlog.errors import (
    CheckpointRefused,
    EventLogError,
    StoreIntegrityError,
    StoreUnavailable,
    StreamConflict,
    TamperedLog,
)
from services.eventlog.leaf import Event, NewEvent, event_leaf
from services.eventlog.store import SCHEMAS, EventLog, LogHead, Transaction

__all__ = [
    "SCHEMAS",
    "CheckpointRefused",
    "Event",
    "EventLog",
    "EventLogError",
    "LogHead",
    "NewEvent",
    "StoreIntegrityError",
    "StoreUnavailable",
    "StreamConflict",
    "TamperedLog",
    "Transaction",
    "VerifySummary",
    "event_leaf",
]
