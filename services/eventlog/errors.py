"""The event store's errors: every asyncpg failure leaves this package as one of these."""

from __future__ import annotations

from ledger.errors import LedgerError, RetryLater, SchemaError, VerificationError

#: Seconds a client is told to wait (``Retry-After``) when the store is unavailable.
STORE_RETRY_AFTER = 5


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


class StoreUnavailable(EventLogError, RetryLater):
    """The database refused or failed an operation (connection lost, SQL error, timeout).

    A refusal that lifts by itself: it answers with ``Retry-After``. Its message says only
    that the service is unavailable; the cause goes to the server's log, never to a client.
    """

    def __init__(
        self,
        message: str = "the service is unavailable; try again shortly",
        retry_after: int = STORE_RETRY_AFTER,
    ) -> None:
        super().__init__(message, retry_after)


class StoreValueRefused(SchemaError, EventLogError):
    """A value the database cannot hold (an integer beyond 64 bits, say): the request's
    fault, never the database's."""


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
