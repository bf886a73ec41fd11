"""What the auditor refuses before it can judge: a state file or saved directory it cannot
read, a service not served where it must be, a URL it cannot use. One sentence each, like every
other refusal (a :class:`~ledger.errors.LedgerError`: ``diagnostics()`` prints it); a league that
fails the audit raises :class:`ledger.audit.AuditFailure` instead."""

from __future__ import annotations

from ledger.errors import LedgerError


class AuditorError(LedgerError):
    """The auditor cannot audit what it was given (not a verdict on the league)."""


__all__ = ["AuditorError"]
