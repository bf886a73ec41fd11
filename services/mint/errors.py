"""What the mint refuses, beyond the protocol's own errors (each a problem type)."""

from __future__ import annotations

from ledger.errors import LedgerError, SchemaError, VerificationError


class WrongLeague(VerificationError):
    """A request made for another league, or under a manifest this mint does not serve."""

    problem_type = "wrong-league"


class StaleRequest(VerificationError):
    """A request signed too long ago (or too far ahead) of the mint's clock."""

    problem_type = "stale-request"


class RequestIdReused(LedgerError):
    """A request id already answered for another request body of the same key."""

    problem_type = "request-id-reused"
    http_status = 409


class AllowanceExhausted(LedgerError):
    """The key has used its published stamping allowance for this UTC day."""

    problem_type = "allowance-exhausted"
    http_status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        #: Seconds until the allowance resets (sent as the Retry-After header).
        self.http_headers = {"Retry-After": str(max(1, retry_after))}


class UnknownTitle(SchemaError):
    """A presented print of a title the league's print runs do not hold."""

    problem_type = "unknown-title"
