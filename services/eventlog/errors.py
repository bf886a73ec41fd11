"""The event store's errors: every asyncpg failure leaves this package as one of these."""

from __future__ import annotations

from ledger.errors import LedgerError, VerificationError


class EventLogError(LedgerError):
    """Base of the event store's own errors."""

    problem_type = "event-log"
    http_status = 500


class StreamConflict(EventLogError):
    """An append whose expected stream version is not the stream's current version."""

    problem_type = "stream-conflict"
    http_status = 409

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(
            f"stream {stream!r} is at version {actual}, not the expected version {expected}"
        )
        self.stream = stream
        self.expected = expected
        self.actual = actual


class StoreUnavailable(EventLogError):
    """The database refused or failed an operation (connection lost, SQL error, timeout)."""

    problem_type = "store-unavailable"
    http_status = 503


class StoreIntegrityError(EventLogError):
    """The database refused a write in the transaction (a constraint of a projection, say)."""

    problem_type = "store-integrity"
    http_status = 409


class CheckpointRefused(EventLogError):
    """A checkpoint the log will not sign: it would contradict one it signed before."""

    problem_type = "checkpoint-refused"


class TamperedLog(VerificationError):
    """``verify_all`` found a stored row that its own hashes or signatures contradict."""

    problem_type = "tampered-log"
    http_status = 500

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"event log is corrupt at seq {seq}: {reason}")
        self.seq = seq
        self.reason = reason
