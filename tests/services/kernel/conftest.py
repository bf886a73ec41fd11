"""The mint's fixtures (a league on disk over a migrated database, the mint served over real
HTTP, a client of it) serve the kernel's tests too."""

from tests.harness.founding import make_settings, settings
from tests.harness.mint import league, server

__all__ = ["league", "make_settings", "server", "settings"]
