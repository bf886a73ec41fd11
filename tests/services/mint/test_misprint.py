"""The Misprint exactly once (Book IV.6, V.8: "it exists exactly once, by award, and its
serial is 000"): the tables key's awards for two tables racing at the mint give exactly one
certificate of CZ-TALLY-000, mint-signed and outside the census and every run; the other is
told it is gone, the winner's award again answers the same certificate, a forged award is
refused, and the mint's log passes the auditor's mint checker, which reports the award (its
event, table and player) for the tables' audit to check (L-41)."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.audit import Auditor
from ledger.audit.reward_facts import MisprintAwarded
from ledger.certificates import PrintCertificate
from ledger.events import print_stream
from ledger.keys import PublicKey, SigningKey
from ledger.print_runs import MISPRINT, MISPRINT_SERIAL
from ledger.tables import MisprintAward
from services.kernel.founding import load_manifest
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT
from services.mint.audit import audit_census


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> tuple[int, Any]:
    async with session.post(url, json=body) as response:
        return response.status, await response.json(content_type=None)


async def test_two_racing_balances_get_exactly_one_misprint(
    settings: LeagueSettings, server: TestServer, league: LeagueClient
) -> None:
    """Two awards at once: one certificate, one misprint-gone; the log holds one event."""
    manifest = load_manifest(settings)
    tables = read_key(settings.keys_dir, "tables")
    players = [SigningKey.generate() for _ in range(2)]
    awards = [
        MisprintAward.sign(
            tables,
            league=manifest.league,
            manifest=manifest.hash_text(),
            table=secrets.token_hex(16),
            player=player.public.to_text(),
            venue="chair-VI",
        )
        for player in players
    ]
    url = str(server.make_url("/mint/misprint"))
    async with aiohttp.ClientSession() as session:
        answers = await asyncio.gather(*(post(session, url, a.to_wire()) for a in awards))
        assert sorted(status for status, _ in answers) == [200, 409]
        (won,) = [body for status, body in answers if status == 200]
        (gone,) = [body for status, body in answers if status == 409]
        assert gone["type"] == "/problems/misprint-gone"
        certificate = PrintCertificate.from_wire(won["certificate"])
        certificate.verify(PublicKey.from_text(manifest.mint))
        manifest.check_certificate(certificate)
        assert (certificate.serial, certificate.finish) == (MISPRINT_SERIAL, MISPRINT)
        winner = next(a for a in awards if a.table == won["table"])
        assert certificate.issued_to == winner.player
        again = await post(session, url, winner.to_wire())
        assert again == (200, won)
        fields = {k: v for k, v in awards[0].body().items() if k != "kind"}
        forged = MisprintAward.sign(players[0], **fields)  # not the tables key
        refused = await post(session, url, forged.to_wire())
        assert refused[0] == 422
    mint = server.app[MINT]
    assert await mint.store.stream_version(print_stream(MISPRINT_SERIAL)) == 1
    census = await league.census()
    assert all(stamped == 0 for _, stamped in census.runs().values())  # outside every run
    audited = await audit_census(mint)
    assert audited.prints == 1
    auditor = Auditor(manifest)
    auditor.add("mint", (await league.events(-1, 100, service="mint")).events)
    seq = won["event"]
    assert auditor.report().misprint == MisprintAwarded(seq, winner.table, winner.player)
