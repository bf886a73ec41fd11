"""The Misprint for a witnessed Balance at Chair VI or above (Book IV.6): the tables service
asks the mint, which awards it exactly once (``services.mint.misprint``, docs/rulings.md L-24,
L-41).

Only a table that *settles* can win it (L-41): one at a venue its player's witnessed campaign
had opened, opened with its proof of work (``services.tables.rewards.Rewards.settles``, the
judgement that pays its reward, L-25, L-28). When a table closes with a settling Balance at
Chair VI or above (and whenever such a table is read), the tables key signs a
``misprint-award`` for the *first* settling such close in the tables log and sends it to the
mint: the Misprint goes to the first settling Balance even when a mint that did not answer
left that first award pending while later tables closed. The mint's answer (the certificate,
or 409 ``misprint-gone``) is final and kept; every other settling table is told it is gone,
and a Balance that settles nothing is told nothing of it. A mint that does not answer leaves
the award ``pending``, asked again at the next such close or read (the same table's award is
answered the same certificate however often it is asked).

Balances found not to settle are passed over once per process: whether a close settles is
fixed by the log before it, so the search goes on from the last one looked at.
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
from services.tables.rewards import Rewards

log = logging.getLogger(__name__)

#: How long one award request to the mint may take (seconds).
AWARD_TIMEOUT = 10.0
#: Balances looked at per query while searching for the first settling one.
BALANCES_PAGE = 100
#: The table-closed events of Balances at one of ``$1``'s venues after seq ``$2``, in log
#: order: seq, table, player, venue.
BALANCES = """
SELECT e.seq, t.table_id, t.player, t.venue FROM tables.events e
JOIN tables.tables t ON t.table_id = e.body->>'table'
WHERE e.type = 'table-closed' AND e.body->>'verdict' = 'balance' AND t.venue = ANY($1::text[])
    AND e.seq > $2
ORDER BY e.seq LIMIT $3
"""


class Misprints:
    """The tables service's awards of the Misprint, and what the mint answered them."""

    def __init__(
        self,
        manifest: LeagueManifest,
        key: SigningKey,
        store: EventStore,
        mint_url: str | None,
        rewards: Rewards,
    ) -> None:
        self.manifest = manifest
        self.key = key
        self.store = store
        self.mint_url = mint_url
        #: Which closes settle (the witnessed campaigns that pay the rewards).
        self.rewards = rewards
        #: The mint's final answer about the first settling Balance, once it gave one.
        self.settled: tuple[str, MisprintOutcome] | None = None
        #: The first settling Balance, once found; until then, the seq of the last Balance
        #: found not to settle (those before it settle nothing, for good).
        self._first: tuple[str, str, str] | None = None
        self._passed = -1

    async def outcome(self, view: TableView) -> MisprintOutcome | None:
        """The Misprint's outcome for ``view``'s table: None unless it closed with a settling
        Balance at Chair VI or above (L-41). The mint is asked for the *first* such Balance of
        the log (this table's, or an earlier one whose award a silent mint left pending): the
        Misprint goes to the first settling Balance, whatever order the awards reach the
        mint in."""
        closing = view.closing
        if closing is None or not wins_misprint(view.venue, closing.verdict):
            return None
        if not await self.rewards.settles(view.table):
            return None  # played, and settles nothing: no Misprint either (L-25, L-28, L-41)
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
            detail=f"{MISPRINT_SERIAL} exists exactly once: it went to the first settling "
            f"Balance at Chair VI or above, table {winner} (Book IV.6, V.8, L-41)",
        )

    async def _first_balance(self) -> tuple[str, str, str] | None:
        """(table, player, venue) of the log's first close with a settling Balance that wins
        it (the Balances that settle nothing passed over: L-41)."""
        while self._first is None:
            rows = await self.store.fetch(
                BALANCES, list(MISPRINT_CHAIRS), self._passed, BALANCES_PAGE
            )
            if not rows:
                return None
            for seq, table, player, venue in rows:
                if await self.rewards.settles(table):
                    self._first = (table, player, venue)
                    break
                self._passed = max(self._passed, seq)
        return self._first

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
