"""``league audit``'s witnessed tables: the tables service's log read over HTTP and checked by
:class:`ledger.audit.tables.TablesChecker`, each closed table replayed by the referee the
caller hands in (the game's, ``game.window.witnessed.referee``: the auditor itself knows the
protocol, not the rules)."""

from __future__ import annotations

from apiclient.league import LeagueClient
from ledger.audit.tables import Referee, TablesChecker, TablesReport
from ledger.keys import PublicKey

#: Events read per page of the tables' feed.
PAGE = 1000


async def audit_tables(url: str, root: PublicKey, referee: Referee) -> TablesReport | None:
    """Audit the tables log of the league at ``url`` (its manifest signed by ``root``, pinned
    by the audit of the other logs); None when its manifest names no tables key."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest(root)
        if manifest.tables is None:
            return None
        checker = TablesChecker(manifest, referee)
        checker.checkpoint(await client.signed_checkpoint(service="tables"))
        after = -1
        while True:
            page = await client.events(after, PAGE, service="tables")
            if not page.events:
                break
            checker.add(page.events)
            after = page.events[-1].seq
        return checker.report()
