"""Vault → the offline store (V.5) by its buttons, over real HTTP: a save code loaded through
Topbar → Load, then unstamped marks buy a single (M30), raise a print to holofoil (M200),
buy a sealed bundle (M50) and open it (three prints); the Vault shows each print ⧗ with its
finish (the holofoil one animated by its class), the marks left, and too few marks is cz's
refusal with nothing spent."""

from __future__ import annotations

import re

import aiohttp

from clients.wallet import Wallet
from clients.web.launch import Web
from game.window.economy.prints import Print
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.web.conftest import base, same_origin

PASSPHRASE = "correct horse battery staple"


async def test_the_offline_store_by_its_buttons(launch: Web, http: aiohttp.ClientSession) -> None:
    wallet = Wallet.new()
    wallet.give(marks=330, prints=[Print("Tally")])
    code = seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF)
    url, headers = base(launch.guard), same_origin(launch.guard)

    async def post(path: str, form: dict[str, str]) -> tuple[int, str]:
        async with http.post(url + path, data=form, headers=headers) as response:
            return response.status, await response.text()

    assert (await post("/topbar/load", {"code": code, "passphrase": PASSPHRASE}))[0] == 200
    assert launch.passphrase == PASSPHRASE
    for form in (
        {"what": "single", "title": "Pairing"},
        {"what": "upgrade", "index": "1", "finish": "holofoil"},
        {"what": "bundle"},
        {"what": "open"},
    ):
        status, page = await post("/vault/store", form)
        assert status == 200, page
        assert 'id="outcome"' in page
    status, page = await post("/vault/store", {"what": "bundle"})  # M50 left: one more
    assert status == 200
    status, page = await post("/vault/store", {"what": "bundle"})  # M0 left
    assert status == 409
    assert 'id="refusal"' in page
    async with http.get(url + "/vault", headers=headers) as response:
        vault = await response.text()
    prints = re.findall(r'<li class="print unstamped"', vault)
    assert len(prints) == 1 + 1 + 3
    assert '<span class="card finish-holofoil">Tally</span>' in vault
    assert "M0 unstamped marks, 1 sealed bundles" in vault


async def test_a_reload_never_buys_again(launch: Web, http: aiohttp.ClientSession) -> None:
    """Vault → Buy a single (the offline store) answers 303 to its outcome: reloading that
    page (a GET) shows it again and spends nothing more; only one print is bought."""
    wallet = Wallet.new()
    wallet.give(marks=90)
    code = seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF)
    url, headers = base(launch.guard), same_origin(launch.guard)
    async with http.post(
        url + "/topbar/load", data={"code": code, "passphrase": PASSPHRASE}, headers=headers
    ) as response:
        assert response.status == 200
    async with http.post(
        url + "/vault/store",
        data={"what": "single", "title": "Pairing"},
        headers=headers,
        allow_redirects=False,
    ) as response:
        assert response.status == 303
        outcome = response.headers["Location"]
    assert outcome.startswith(launch.guard.root + "/done/")
    origin = url.removesuffix(launch.guard.root)
    for _ in range(3):  # the player reloads the outcome
        async with http.get(origin + outcome, headers=headers) as response:
            assert response.status == 200
            assert 'id="outcome"' in await response.text()
    async with http.get(url + "/vault", headers=headers) as response:
        vault = await response.text()
    assert "M60 unstamped marks" in vault
    assert len(re.findall(r'<li class="print unstamped"', vault)) == 1
