"""What the charter engine refuses: bad card data, a deck off its charter, an illegal or
unreadable action.

All are :class:`ledger.errors.LedgerError` subclasses, so ``cz charter`` prints each as one line
and exits 2, the same way as every other refusal in the project.
"""

from __future__ import annotations

from ledger.errors import DecodeError, LedgerError, SchemaError


class CardDataError(SchemaError):
    """A card set, charter or deck whose JSON is not a valid document of its schema."""

    problem_type = "bad-charter-data"


class CharterViolation(LedgerError):
    """A deck that does not satisfy its charter; ``failures`` holds one sentence per fault."""

    problem_type = "deck-off-charter"
    http_status = 422

    def __init__(self, deck: str, charter: str, failures: tuple[str, ...]) -> None:
        super().__init__(
            f"deck {deck!r} does not satisfy charter {charter!r}: " + "; ".join(failures)
        )
        self.failures = failures


class IllegalActionError(LedgerError):
    """An action the rules forbid in this position, and the reason."""

    problem_type = "illegal-action"
    http_status = 422

    def __init__(self, action: str, step: int, reason: str) -> None:
        super().__init__(f"illegal action {action!r} at step {step}: {reason}")
        self.action = action
        self.step = step
        self.reason = reason


class NotationError(DecodeError):
    """Text that is not an action of the charter notation (docs/charter.md, Notation)."""

    problem_type = "bad-charter-notation"
