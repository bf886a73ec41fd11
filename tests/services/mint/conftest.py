"""A league on disk, its database migrated, and the mint served over real HTTP."""

from __future__ import annotations

from tests.harness.founding import make_settings, settings
from tests.harness.mint import league, server

__all__ = ["league", "make_settings", "server", "settings"]  # fixtures
