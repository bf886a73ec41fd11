"""Vault → Present for stamping finishes a stamp cut short, as ``cz stamp`` does: with a
request kept in the wallet (signed and sent, its answer lost), the confirmation names that
kept request (not "your 0 unstamped prints ()"), and the click sends it again; the mint
answers the same certificate (nothing stamped twice) and nothing is left pending
(Book V.4, L-04). Over real HTTP, a league served on the test PostgreSQL."""

from __future__ import annotations

import aiohttp

from clients.wallet import Wallet
from clients.web.calls import run
from clients.web.launch import Web
from game.window.economy.prints import Print
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.web.conftest import base, same_origin
from tests.harness.cz import sent_and_lost
from tests.harness.league import InProcessLeague

PASSPHRASE = "correct horse battery staple"


async def test_a_stamp_cut_short_is_finished_from_the_vault(
    launch: Web, http: aiohttp.ClientSession, served: InProcessLeague
) -> None:
    wallet = Wallet.new()
    wallet.give(prints=[Print("Model-A")])
    serial = await sent_and_lost(served.url, wallet)
    code = seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF)
    url, headers = base(launch.guard), same_origin(launch.guard)
    async with http.post(
        url + "/topbar/load", data={"code": code, "passphrase": PASSPHRASE}, headers=headers
    ) as response:
        assert response.status == 200
    before = (await run(["collection", "--json"])).json()
    assert before["pending_stamp"] is True

    async with http.post(url + "/vault/stamp", headers=headers) as response:
        assert response.status == 200, await response.text()
        page = await response.text()
    assert "the stamping request kept in your wallet" in page
    (ident,) = launch.confirms
    async with http.post(
        url + f"/confirm/{ident}", headers=headers, allow_redirects=False
    ) as response:
        assert response.status == 303
        job = response.headers["Location"].rsplit("/", 1)[1]
    answer = await launch.jobs[job].task
    assert answer.ok, answer.err
    after = (await run(["collection", "--json"])).json()
    assert after["pending_stamp"] is False
    assert [(p["serial"], p["stamped"]) for p in after["prints"]] == [(serial, True)]
