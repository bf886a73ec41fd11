"""What the operator's commands refuse: one sentence each, printed on one line, exit status 2."""

from __future__ import annotations


class LeagueError(Exception):
    """An operator-side failure: no league yet, a league already there, a key file unreadable."""

    def diagnostics(self) -> str:
        """The one line the CLI prints."""
        return str(self) or self.__class__.__name__


class NoLeagueError(LeagueError):
    """The data directory holds no league (no manifest, no keys)."""


class LeagueExistsError(LeagueError):
    """``league init`` found a league already there: it never overwrites one."""
