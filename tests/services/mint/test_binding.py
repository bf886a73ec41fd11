"""A mint database belongs to one league: another league's mint refuses to serve it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.kernel.errors import LeagueError
from services.kernel.settings import LeagueSettings
from tests.harness.mint import serve


async def test_database_of_another_league_is_refused(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """The first league to start binds the database; a second league (its own keys and
    manifest) on the same database fails at start-up, naming the league that owns it."""
    first = await serve(make_settings(name="First League"))
    await first.close()
    with pytest.raises(LeagueError, match="first-league"):
        await serve(make_settings(name="Second League"))
