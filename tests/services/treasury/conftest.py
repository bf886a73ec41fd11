"""A league on disk, its database migrated, and the treasury served over real HTTP; after
every test the supply invariant is checked over HTTP and against the log."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.kernel.settings import LeagueSettings
from tests.harness.founding import make_settings
from tests.harness.treasury import faucet, server

__all__ = ["faucet", "make_settings", "server"]


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    return make_settings()
