"""The mint's fixtures (a league on disk over a migrated database) serve these tests too."""

from tests.harness.founding import make_settings

__all__ = ["make_settings"]
