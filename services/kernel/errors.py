"""What the operator's side refuses: one sentence each, printed on one line, exit status 2.

These are :class:`~ledger.errors.LedgerError` subclasses like every other refusal, so there
is one hierarchy and one way to print (``diagnostics()``) and to answer over HTTP.
"""

from __future__ import annotations

from ledger.errors import LedgerError


class LeagueError(LedgerError):
    """An operator-side failure: no league yet, a league already there, a key file unreadable."""


class NoLeagueError(LeagueError):
    """The data directory holds no league (no manifest, no keys)."""


class LeagueExistsError(LeagueError):
    """``league init`` found a league already there: it never overwrites one."""
