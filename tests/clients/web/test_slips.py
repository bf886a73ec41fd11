"""Exchange → Endorse & write the slip writes the slip to a file before the wallet is saved
without the items (``cz send --out``, as the terminal's: synced, then the wallet, then the
name), in the wallet's home (slips/, the file 0600), so a server killed after the click never
loses both the items and the slip: the file is there when the command answers, and after a
restart the Exchange page lists it, until the player dismisses it (kept in slips/dismissed/).
A stamped print sent over real HTTP to a key of a league served on the test PostgreSQL."""

from __future__ import annotations

import html
import stat

import aiohttp
from aiohttp.test_utils import TestServer

from clients.wallet import Wallet, WalletHome
from clients.web.app import make_app
from clients.web.calls import run
from clients.web.launch import Web
from game.window.economy.prints import Print
from ledger.cards import LedgerCard
from ledger.keys import SigningKey
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.web.conftest import base, same_origin
from tests.harness.league import InProcessLeague

PASSPHRASE = "correct horse battery staple"


async def test_the_slip_is_a_file_before_the_answer_and_listed_after_a_restart(
    launch: Web, http: aiohttp.ClientSession, served: InProcessLeague
) -> None:
    wallet = Wallet.new()
    wallet.give(prints=[Print("Tally")])
    code = seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF)
    url, headers = base(launch.guard), same_origin(launch.guard)
    async with http.post(
        url + "/topbar/load", data={"code": code, "passphrase": PASSPHRASE}, headers=headers
    ) as response:
        assert response.status == 200
    assert (await run(["league", "set", served.url], passphrase=PASSPHRASE)).ok
    stamped = await run(["stamp", "--json"], passphrase=PASSPHRASE)
    assert stamped.ok, stamped.err
    (serial,) = [p["serial"] for p in stamped.json()["stamped"]]
    card = LedgerCard.for_key(SigningKey.generate().public).to_armor()

    async with http.post(
        url + "/exchange/send",
        data=[("card", card), ("item", serial)],
        headers=headers,
        allow_redirects=False,
    ) as response:
        assert response.status == 303
        confirm = response.headers["Location"]
    origin = url.removesuffix(launch.guard.root)
    async with http.post(origin + confirm, headers=headers, allow_redirects=False) as response:
        assert response.status == 303
        job = response.headers["Location"].rsplit("/", 1)[1]
    answer = await launch.jobs[job].task  # the command has answered; no page read yet
    assert answer.ok, answer.err
    slips = WalletHome.default().directory / "slips"
    (written,) = slips.glob("slip-*.slip")
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    slip = written.read_text()
    assert slip.startswith("-----BEGIN CZ SLIP-----")
    collection = (await run(["collection", "--json"])).json()
    assert serial not in [p["serial"] for p in collection["prints"]]  # it has left
    async with http.get(url + f"/jobs/{job}", headers=headers) as response:
        assert slip.strip() in html.unescape(await response.text())

    # The server restarted (a new launch, a new secret): the Exchange page lists the slip.
    again = Web()
    server = TestServer(make_app(again), host="127.0.0.1")
    await server.start_server()
    again.guard.port = server.port or 0
    try:
        url, headers = base(again.guard), same_origin(again.guard)
        async with http.get(url + "/exchange", headers=headers) as response:
            page = html.unescape(await response.text())
        assert 'id="kept-slips"' in page
        assert slip.strip() in page
        async with http.post(
            url + "/exchange/slips/dismiss", data={"name": written.name}, headers=headers
        ) as response:
            assert response.status == 200
            assert 'id="kept-slips"' not in await response.text()
        assert (slips / "dismissed" / written.name).read_text() == slip
        async with http.post(
            url + "/exchange/slips/dismiss", data={"name": "../wallet.czsave"}, headers=headers
        ) as response:
            assert response.status == 400
    finally:
        await server.close()
