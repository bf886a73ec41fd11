"""Fixtures for the event store: a migrated database, a pool and the mint's log."""

from __future__ import annotations

from tests.harness.eventlog import key, log, migrated_url, pool

__all__ = ["key", "log", "migrated_url", "pool"]  # fixtures
