"""A league's mint, notary and tables composed in one app on a real port (the tables service
asks the notary over HTTP on the server's own address), and a player who stamps prints there,
endorses them through the notary and brings eight of them to a Registrar's table (Book IV.3)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from game.window.registrars import HOUSE_TITLES
from ledger.api.mint import Stamped
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.keys import SigningKey
from ledger.tables import TableJoin, TableOpen
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.tables.app import SERVICE as TABLES
from tests.harness.serving import composed
from tests.harness.tables import Answer, Player

#: Eight distinct titles anyone may stamp: the Assessor's thirteen's first eight.
EIGHT = HOUSE_TITLES[:8]
#: Wallet times: claims only (nothing orders by them).
T0 = 1_800_000_000


@pytest.fixture
async def league_server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    """The mint, the notary and the tables on ``settings.port``."""
    async with composed(settings, [MINT, NOTARY, TABLES]) as server:
        yield server


@dataclass
class Holder(Player):
    """A player with prints: stamped through the mint, endorsed through the notary."""

    async def stamp(self, titles: Sequence[str] = EIGHT) -> list[PrintCertificate]:
        """A standard print of each of ``titles``, stamped to this player."""
        async with LeagueClient(self.url) as league:
            answer = await league.stamp(
                stamp_request(self.key, self.manifest, [(t, "standard") for t in titles])
            )
        certificates = []
        for item in answer.items:
            assert isinstance(item, Stamped), item
            certificates.append(item.certificate)
        return certificates

    async def give(self, certificate: PrintCertificate, to: SigningKey) -> None:
        """``certificate``'s print endorsed to ``to`` and the hop notarized (V.6)."""
        chain = endorse(Chain(certificate=certificate, endorsements=()), self.key, to.public, T0)
        async with LeagueClient(self.url) as league:
            answer = await league.notarize([chain])
        assert answer.recorded == 1

    def open_request(
        self, venue: str, portfolio: Sequence[PrintCertificate] | None, **fields: Any
    ) -> TableOpen:
        if portfolio is not None:
            fields["portfolio"] = [c.to_wire() for c in portfolio]
        request: TableOpen = self.signed(
            TableOpen, request_id=secrets.token_hex(8), venue=venue, **fields
        )
        return request

    async def open_with(self, venue: str, portfolio: Sequence[PrintCertificate] | None) -> Answer:
        """A table-open at ``venue`` bringing ``portfolio``; the table kept when it opens."""
        return await self.send_open(self.open_request(venue, portfolio))

    async def send_open(self, request: TableOpen) -> Answer:
        answer = await self.post("/tables/open", request.to_wire())
        if answer.status == 200:
            self.table, self.commitment = answer.body["table"], answer.body["commitment"]
            self.code = answer.body.get("code") or ""
        return answer

    async def join_with(self, code: str, portfolio: Sequence[PrintCertificate] | None) -> Answer:
        """A duel's second seat taken with ``code``, bringing ``portfolio``."""
        fields = {} if portfolio is None else {"portfolio": [c.to_wire() for c in portfolio]}
        request = self.signed(TableJoin, code=code, **fields)
        answer = await self.post("/tables/join", request.to_wire())
        if answer.status == 200:
            self.table, self.commitment = answer.body["table"], answer.body["commitment"]
        return answer


def holder_at(settings: LeagueSettings, server: TestServer) -> Holder:
    return Holder(SigningKey.generate(), load_manifest(settings), str(server.make_url("")))
