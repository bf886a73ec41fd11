"""The Misprint for a witnessed Balance at Chair VI or above (Book IV.6): the tables service
asks the mint, which awards it exactly once (``services.mint.misprint``).

A table that closes with such a Balance sends the mint a ``misprint-award`` signed by the
tables key; the mint's answer (the certificate, or 409 ``misprint-gone``) is what the move's
answer shows, and either is final, so it is kept. A mint that does not answer leaves the
award ``pending``: reading the table asks again (the same table's award is answered the same
certificate however often it is asked).
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
from ledger.tables import MisprintAward, wins_misprint

log = logging.getLogger(__name__)

#: How long one award request to the mint may take (seconds).
AWARD_TIMEOUT = 10.0


class Misprints:
    """The tables service's awards of the Misprint, and what the mint answered them."""

    def __init__(self, manifest: LeagueManifest, key: SigningKey, mint_url: str | None) -> None:
        self.manifest = manifest
        self.key = key
        self.mint_url = mint_url
        self.settled: dict[str, MisprintOutcome] = {}

    async def outcome(self, view: TableView) -> MisprintOutcome | None:
        """The Misprint's outcome for ``view``'s table: None unless it closed with a Balance
        at Chair VI or above."""
        closing = view.closing
        if closing is None or not wins_misprint(view.venue, closing.verdict):
            return None
        known = self.settled.get(view.table)
        if known is not None:
            return known
        award = MisprintAward.sign(
            self.key,
            league=self.manifest.league,
            manifest=self.manifest.hash_text(),
            table=view.table,
            player=view.player,
            venue=view.venue,
        )
        found = await self._ask(award)
        if found.status != "pending":
            self.settled[view.table] = found
        return found

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
