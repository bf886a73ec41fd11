"""``league audit``'s witnessed tables: the tables service's log read over HTTP and checked by
:class:`ledger.audit.tables.TablesChecker`, each closed table replayed by the referee the
caller hands in (the game's, ``game.window.witnessed.referee``: the auditor itself knows the
protocol, not the rules)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from apiclient.league import LeagueClient, LeagueProblem
from ledger.audit.reward_facts import MisprintAwarded, PaidReward
from ledger.audit.tables import Referee, TablesChecker, TablesReport
from ledger.errors import LedgerError, SchemaError
from ledger.keys import PublicKey
from ledger.manifest import Policies
from ledger.rewards import Campaigns

#: Events read per page of the tables' feed.
PAGE = 1000


async def audit_tables(
    url: str,
    root: PublicKey,
    referee: Referee,
    campaigns: Callable[[Policies], Campaigns] | None = None,
    paid: Mapping[str, PaidReward] | None = None,
    paid_upto: int | None = None,
    misprint: MisprintAwarded | None = None,
) -> TablesReport | str:
    """Audit the tables log of the league at ``url`` (its manifest signed by ``root``, pinned
    by the audit of the other logs), each closed table's reward replayed by the witnessed
    campaigns ``campaigns`` makes (the game's) and paired with the treasury's payments
    ``paid`` (the audit of its first ``paid_upto`` events found them), and the mint's award of
    the Misprint ``misprint`` checked to be the log's first settling Balance at Chair VI or
    above (L-41); why not, when its
    manifest names no tables key or ``url`` serves no tables log (404: a league served without
    it, as another log not served is left out of the audit)."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest(root)
        if manifest.tables is None:
            return "the manifest names no tables key"
        checker = TablesChecker(
            manifest,
            referee,
            None if campaigns is None else campaigns(manifest.policies),
            paid,
            paid_upto,
            misprint,
        )
        try:
            checkpoint = await client.signed_checkpoint(service="tables")
        except LedgerError as exc:
            if _not_found(exc):
                return f"{url} serves no tables log"
            raise
        checker.checkpoint(checkpoint)
        after = -1
        while True:
            page = await client.events(after, PAGE, service="tables")
            if not page.events:
                break
            checker.add(page.events)
            after = page.events[-1].seq
        return checker.report()


def _not_found(exc: LedgerError) -> bool:
    """Whether ``exc`` is a 404 (a problem document's, or a gateway's page without one)."""
    if isinstance(exc, LeagueProblem):
        return exc.status == 404
    return isinstance(exc, SchemaError) and "answered 404 " in str(exc)
