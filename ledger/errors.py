"""One error hierarchy for everything the protocol refuses.

Every parse of untrusted input, every failed verification and every refusal of a service
raises a subclass of :class:`LedgerError`. ``diagnostics()`` is the sentence a person reads:
the CLI prints it on one line and exits 2, the API puts it in the ``detail`` of a problem+json
answer. The class is the stable machine-readable part: the HTTP layer maps classes to statuses
and problem slugs in one table (``services.http.problems``); nothing here knows of HTTP.
"""

from __future__ import annotations

from typing import Any


class LedgerError(Exception):
    """Base of every error the protocol raises on bad input or failed verification."""

    def diagnostics(self) -> str:
        """The user-facing message: one line, no traceback, never a secret."""
        return str(self) or self.__class__.__name__


class DecodeError(LedgerError):
    """Bytes or text that are not a well-formed encoding (base64, armor, JSON, address...)."""


class ArmorError(DecodeError):
    """Text that is not a strict RFC 7468 block of the expected label."""


class SizeLimitError(DecodeError):
    """Input larger (or a list longer) than the published limit."""


class SchemaError(DecodeError):
    """Well-formed JSON whose shape or values are not the expected object."""


class UnknownKindError(DecodeError):
    """An object, armor label or domain tag of a kind this protocol does not know."""


class KeyFormatError(DecodeError):
    """A public or private key that is not a valid Ed25519 key encoding."""


class AddressError(DecodeError):
    """A CZ address with bad symbols, wrong length or a failing check."""


class SerialError(DecodeError):
    """A serial that is not a print or note serial of the league's runs and note set."""


class VerificationError(LedgerError):
    """A signature, hash link or proof that does not verify."""


class BadSignatureError(VerificationError):
    """An Ed25519 signature that does not verify over the object's canonical bytes."""


class ChainError(VerificationError):
    """An endorsement chain that is broken: wrong holder, wrong hop, broken prev link."""


class StaleIssueError(ChainError):
    """A chain of an older issue of its serial: history, never spendable again."""


class ProofError(VerificationError):
    """A Merkle inclusion or consistency proof that does not verify."""


class FraudDetected(VerificationError):
    """Two valid, different endorsements of one serial at one hop by one key.

    ``proofs`` holds the :class:`ledger.fraud.FraudProof` objects that convict the signer, for
    the caller to keep (a wallet stores them; the notary answers 409 with the prior record).
    """

    def __init__(self, message: str, proofs: tuple[Any, ...] = ()) -> None:
        super().__init__(message)
        self.proofs = proofs


class InvalidFraudProofError(VerificationError):
    """A claimed fraud proof that does not show two valid conflicting endorsements."""


class RunExhaustedError(LedgerError):
    """A print run (title and finish) with no serial left: runs are never extended."""


class WrongPassphraseError(LedgerError):
    """A save code whose AEAD does not open under the given passphrase."""


class RetryLater(LedgerError):
    """A refusal that lifts by itself: ``retry_after`` says in how many seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, retry_after)


class RateLimited(RetryLater):
    """A published limit on how much one key (or one source) may do in a time window."""


class AllowanceExhausted(RateLimited):
    """The key has used its published stamping allowance for this UTC day."""


class Overloaded(RetryLater):
    """The service is busy with as much work as it queues; the same request later will do."""


class WrongLeague(VerificationError):
    """A request made for another league, or under a manifest this service does not serve."""


class StaleRequest(VerificationError):
    """A request signed too long ago (or too far ahead) of the service's clock."""


class RequestIdReused(LedgerError):
    """A request id already answered for another request body of the same key."""


class UnknownTitle(SchemaError):
    """A presented print of a title the league's print runs do not hold."""


class UnsupportedMediaType(DecodeError):
    """A request body that is not declared as JSON (Content-Type application/json)."""


class InsufficientWork(LedgerError):
    """A presented print whose proof-of-work nonce does not meet what its run costs now."""


class NotStamped(VerificationError):
    """A certificate the issuer's log (as the notary follows it) never issued."""


class UnknownSerial(LedgerError):
    """A serial nobody has issued: outside the league's runs, or not stamped yet."""


class UnknownLog(LedgerError):
    """A checkpoint of a log this witness does not witness: its origin is none of the
    league's other services."""


class UntrustedCheckpoint(VerificationError):
    """A checkpoint without a valid signature by the key the league manifest names for its
    log."""


class UnknownTable(LedgerError):
    """A table the tables service never opened."""


class OutOfTurn(LedgerError):
    """A request the table is not waiting for: a move at another ply than its next, a seed
    once it is dealt, anything once it has closed."""


class MoveReplayed(OutOfTurn):
    """A move at a ply the table has already played: each ply is played once."""


class TimedOut(OutOfTurn):
    """A request after the table's move clock ran out (docs/formats.md "The move clock"): the
    table is abandoned and settles nothing (L-19, L-31)."""


class IllegalMove(VerificationError):
    """A move the rules forbid in the table's position, or text that is no move."""


class MisprintGone(LedgerError):
    """The Misprint CZ-TALLY-000 exists exactly once, by award (Book IV.6, V.8): it has been
    awarded already, to another table."""


class BadPortfolio(LedgerError):
    """A portfolio a Registrar's table cannot take (Book IV.3): not eight certificates, a
    title twice, or a portfolio brought to a table that deals from its own certificates."""


class NotHolder(LedgerError):
    """A print the player does not hold as the notary records it: a portfolio is eight
    certificates the player owns (Book IV.3, docs/rulings.md L-38)."""
