"""What the engine refuses: an illegal action, an unreadable action, an unknown deal.

All are :class:`ledger.errors.LedgerError` subclasses so the CLI turns each into one line and
exit status 2, and the API into problem+json, the same way as every other refusal.
"""

from __future__ import annotations

from ledger.errors import DecodeError, LedgerError


class IllegalActionError(LedgerError):
    """An action the rules forbid in this position, with the rule that forbids it."""

    problem_type = "illegal-action"
    http_status = 422

    def __init__(self, action: str, turn: int, rule: str) -> None:
        super().__init__(f"illegal action {action!r} at turn {turn}: {rule}")
        self.action = action
        self.turn = turn
        self.rule = rule


class NotationError(DecodeError):
    """Text that is not an action of the notation (docs/formats.md, Table records)."""

    problem_type = "bad-action-notation"


class DealError(DecodeError):
    """A deal that cannot convene a table: unknown title, a title twice, wrong counts."""

    problem_type = "bad-deal"
