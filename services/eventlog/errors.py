"""The event store's errors: every asyncpg failure leaves this package as one of these."""

from __future__ import annotations

from ledger.errors import LedgerError, VerificationError


class EventLogError(LedgerError):
    """Base of the event store's own errors."""


class StreamConflict(EventLogError):
    """An append whose expected stream version is not the stream's current version."""

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(
            f"stream {stream!r} is at version {actual}, not the expected version {expected}"
        )
        self.stream = stream
        self.expected = expected
        self.actual = actual


class StoreUnavailable(EventLogError):
    """The database refused or failed an operation (connection lost, SQL error, timeout)."""


class StoreIntegrityError(EventLogError):
    """The database refused a write in the transaction (a constraint of a projection, say)."""


class CheckpointRefused(EventLogError):
    """A checkpoint the log will not sign: it would contradict one it signed before."""


class TamperedLog(VerificationError):
    """``verify_all`` found a stored row that its own hashes or signatures contradict."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"event log is corrupt at seq {seq}: {reason}")
        self.seq = seq
        self.reason = reason
