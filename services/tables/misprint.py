"""The Misprint for a witnessed Balance at Chair VI or above (Book IV.6): the tables service
asks the mint, which awards it exactly once (``services.mint.misprint``, docs/rulings.md L-24).

When a table closes with such a Balance (and whenever such a table is read), the tables key
signs a ``misprint-award`` for the *first* such close in the tables log and sends it to the
mint: the Misprint goes to the first witnessed Balance even when a mint that did not answer
left that first award pending while later tables closed. The mint's answer (the certificate, or
409 ``misprint-gone``) is final and kept; every other table is told it is gone. A mint that
does not answer leaves the award ``pending``, asked again at the next such close or read (the
same table's award is answered the same certificate however often it is asked).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import aiohttp

from ledger.api.tables import MisprintOutcome, TableView
from ledger.certificates import PrintCertificate
from ledger.errors import LedgerError
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.tables import MISPRINT_CHAIRS, MisprintAward, wins_misprint
from services.eventlog import EventStore

log = logging.getLogger(__name__)

#: How long one award request to the mint may take (seconds).
AWARD_TIMEOUT = 10.0
#: The first table-closed event of a Balance at one of ``$1``'s venues, in log order.
FIRST_BALANCE = """
SELECT t.table_id, t.player, t.venue FROM tables.events e
JOIN tables.tables t ON t.table_id = e.body->>'table'
WHERE e.type = 'table-closed' AND e.body->>'verdict' = 'balance' AND t.venue = ANY($1::text[])
ORDER BY e.seq LIMIT 1
"""


class Misprints:
    """The tables service's awards of the Misprint, and what the mint answered them."""

    def __init__(
        self, manifest: LeagueManifest, key: SigningKey, store: EventStore, mint_url: str | None
    ) -> None:
        self.manifest = manifest
        self.key = key
        self.store = store
        self.mint_url = mint_url
        #: The mint's final answer about the first witnessed Balance, once it gave one.
        self.settled: tuple[str, MisprintOutcome] | None = None

    async def outcome(self, view: TableView) -> MisprintOutcome | None:
        """The Misprint's outcome for ``view``'s table: None unless it closed with a Balance
        at Chair VI or above. The mint is asked for the *first* such Balance of the log (this
        table's, or an earlier one whose award a silent mint left pending): the Misprint goes
        to the first witnessed Balance, whatever order the awards reach the mint in."""
        closing = view.closing
        if closing is None or not wins_misprint(view.venue, closing.verdict):
            return None
        if self.settled is None:
            first = await self._first_balance()
            if first is None:  # not recorded yet (it is, by the time anyone is answered)
                return MisprintOutcome(status="pending", detail="the close is not recorded yet")
            table, player, venue = first
            award = MisprintAward.sign(
                self.key,
                league=self.manifest.league,
                manifest=self.manifest.hash_text(),
                table=table,
                player=player,
                venue=venue,
            )
            found = await self._ask(award)
            if found.status == "pending":
                return found
            self.settled = (table, found)
        winner, found = self.settled
        if winner == view.table or found.status != "awarded":
            return found
        return MisprintOutcome(
            status="gone",
            detail=f"{MISPRINT_SERIAL} exists exactly once: it went to the first witnessed "
            f"Balance at Chair VI or above, table {winner} (Book IV.6, V.8)",
        )

    async def _first_balance(self) -> tuple[str, str, str] | None:
        """(table, player, venue) of the log's first close with a Balance that wins it."""
        row = await self.store.fetchrow(FIRST_BALANCE, list(MISPRINT_CHAIRS))
        return None if row is None else (row[0], row[1], row[2])

    async def _ask(self, award: MisprintAward) -> MisprintOutcome:
        if self.mint_url is None:
            return MisprintOutcome(status="pending", detail="the mint's address is not known")
        timeout = aiohttp.ClientTimeout(total=AWARD_TIMEOUT)
        started = time.monotonic()
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(f"{self.mint_url}/mint/misprint", json=award.to_wire()) as answer,
            ):
                text = await answer.text()
                status = answer.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning(
                "the Misprint for table %s is pending: the mint did not answer (%s, %.1f s)",
                award.table,
                type(exc).__name__,
                time.monotonic() - started,
            )
            return MisprintOutcome(status="pending", detail="the mint did not answer")
        try:
            data: Any = json.loads(text) if status in (200, 409) else None
            if status == 200 and isinstance(data, dict):
                certificate = PrintCertificate.from_wire(data["certificate"])
                return MisprintOutcome(status="awarded", certificate=certificate)
        except (ValueError, KeyError, LedgerError) as exc:
            log.warning("the mint's Misprint answer for %s is unreadable: %s", award.table, exc)
            return MisprintOutcome(status="pending", detail="the mint's answer is unreadable")
        if status == 409 and isinstance(data, dict):
            return MisprintOutcome(status="gone", detail=str(data.get("detail", "")))
        log.warning("the Misprint for %s is pending: the mint answered %d", award.table, status)
        return MisprintOutcome(status="pending", detail=f"the mint answered {status}")
