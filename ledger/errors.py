"""One error hierarchy for everything the protocol refuses.

Every parse of untrusted input and every failed verification raises a subclass of
:class:`LedgerError`. ``diagnostics()`` is the sentence a person reads: the CLI prints it on
one line and exits 2, the API puts it in the ``detail`` of a problem+json answer. The class
name (``problem_type``) is the stable machine-readable part.
"""

from __future__ import annotations

from typing import Any


class LedgerError(Exception):
    """Base of every error the protocol raises on bad input or failed verification."""

    problem_type = "ledger-error"
    http_status = 400

    def diagnostics(self) -> str:
        """The user-facing message: one line, no traceback, never a secret."""
        return str(self) or self.__class__.__name__


class DecodeError(LedgerError):
    """Bytes or text that are not a well-formed encoding (base64, armor, JSON, address...)."""

    problem_type = "malformed"


class ArmorError(DecodeError):
    """Text that is not a strict RFC 7468 block of the expected label."""

    problem_type = "malformed-armor"


class SizeLimitError(DecodeError):
    """Input larger (or a list longer) than the published limit."""

    problem_type = "too-large"
    http_status = 413


class SchemaError(DecodeError):
    """Well-formed JSON whose shape or values are not the expected object."""

    problem_type = "invalid-object"
    http_status = 422


class UnknownKindError(DecodeError):
    """An object, armor label or domain tag of a kind this protocol does not know."""

    problem_type = "unknown-kind"


class KeyFormatError(DecodeError):
    """A public or private key that is not a valid Ed25519 key encoding."""

    problem_type = "bad-key"


class AddressError(DecodeError):
    """A CZ address with bad symbols, wrong length or a failing check."""

    problem_type = "bad-address"


class SerialError(DecodeError):
    """A serial that is not a print or note serial of the league's runs and note set."""

    problem_type = "bad-serial"


class VerificationError(LedgerError):
    """A signature, hash link or proof that does not verify."""

    problem_type = "verification-failed"
    http_status = 422


class BadSignatureError(VerificationError):
    """An Ed25519 signature that does not verify over the object's canonical bytes."""

    problem_type = "bad-signature"


class ChainError(VerificationError):
    """An endorsement chain that is broken: wrong holder, wrong hop, broken prev link."""

    problem_type = "broken-chain"


class StaleIssueError(ChainError):
    """A chain of an older issue of its serial: history, never spendable again."""

    problem_type = "stale-issue"
    http_status = 409


class ProofError(VerificationError):
    """A Merkle inclusion or consistency proof that does not verify."""

    problem_type = "bad-proof"


class FraudDetected(VerificationError):
    """Two valid, different endorsements of one serial at one hop by one key.

    ``proofs`` holds the :class:`ledger.fraud.FraudProof` objects that convict the signer, for
    the caller to keep (a wallet stores them; the notary answers 409 with the prior record).
    """

    problem_type = "fraud"
    http_status = 409

    def __init__(self, message: str, proofs: tuple[Any, ...] = ()) -> None:
        super().__init__(message)
        self.proofs = proofs


class InvalidFraudProofError(VerificationError):
    """A claimed fraud proof that does not show two valid conflicting endorsements."""

    problem_type = "invalid-fraud-proof"


class RunExhaustedError(LedgerError):
    """A print run (title and finish) with no serial left: runs are never extended."""

    problem_type = "run-exhausted"
    http_status = 409


class WrongPassphraseError(LedgerError):
    """A save code whose AEAD does not open under the given passphrase."""

    problem_type = "wrong-passphrase"
    http_status = 401
