"""The tables service alone on a real port over the migrated test database."""

from __future__ import annotations

from tests.harness.founding import make_settings
from tests.harness.portfolios import league_server
from tests.harness.tables import server, settings

__all__ = ["league_server", "make_settings", "server", "settings"]
