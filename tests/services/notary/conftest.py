"""The mint and the notary composed in one app on a real port, the notary following the mint
over HTTP on the server's own address (docs/operations.md), over the migrated test database."""

from __future__ import annotations

from tests.harness.founding import make_settings
from tests.harness.mint import checkpoint_covering, league
from tests.harness.trading import server, settings, trade

#: Fixtures: the mint's client over this server.
__all__ = ["checkpoint_covering", "league", "make_settings", "server", "settings", "trade"]
