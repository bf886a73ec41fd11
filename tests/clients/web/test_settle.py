"""A closed table is settled once in ``cz web`` (Book IV.5, IV.6: one table, one record, one
reward): copies of Settle sent at once, as a script or an impatient double click sends them,
record the table and settle the campaign a single time."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aiohttp

from clients.wallet import Wallet
from clients.web.launch import Web
from clients.web.sitting import Sitting
from game.window.ai.roster import opponent_for
from game.window.campaign import Venue, convene
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.web.conftest import base, same_origin

PASSPHRASE = "correct horse battery staple"


def played_out(seed: int) -> Sitting:
    """The first clerk's table of ``seed``, the player's side played by its first legal
    action each time, to its close."""
    venue = Venue("clerk", 1)
    table = convene(venue, seed)
    sitting = Sitting(venue, seed, table, table.new_state(), opponent_for(venue, seed))
    sitting.advance()
    while not sitting.state.is_over:
        assert sitting.drill is None  # a clerk's table: the player meets no drill here
        sitting.take(sitting.state.legal_actions()[0], "you")
        sitting.advance()
    return sitting


async def test_copies_of_settle_record_and_settle_once(
    launch: Web, http: aiohttp.ClientSession
) -> None:
    code = seal_save_code(Wallet.new().to_payload(), PASSPHRASE, MINIMUM_KDF)
    url, headers = base(launch.guard), same_origin(launch.guard)
    async with http.post(
        url + "/topbar/load", data={"code": code, "passphrase": PASSPHRASE}, headers=headers
    ) as response:
        assert response.status == 200
    sitting = played_out(7)
    launch.sitting = sitting

    async def settle() -> int:
        async with http.post(url + "/table/settle", headers=headers) as response:
            return response.status

    assert await asyncio.gather(*(settle() for _ in range(4))) == [200] * 4
    records = sorted((Path(os.environ["CZ_HOME"]) / "tables").glob("*.json"))
    assert len(records) == 1, records
    assert sitting.closed is not None
    assert sitting.closed["ok"], sitting.closed
