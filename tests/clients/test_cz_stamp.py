"""``cz stamp`` against a served league: a request whose answer was lost is replayed, not paid
twice; what the mint refuses stays unstamped, with its reason (Book V.4, L-04)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from apiclient.league import LeagueClient
from clients.wallet import Wallet
from game.window.economy.prints import Print
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.conftest import PASSPHRASE, Player, init_league, one_line_failure, serving
from tests.harness.cz import sent_and_lost


def test_a_lost_answer_is_replayed_and_refusals_are_shown(
    tmp_path: Path, database_url: str
) -> None:
    """The kept request is sent again first and the mint answers its certificates again
    (nothing stamped twice); of the two prints left, the daily allowance of 2 lets one
    through and the other is refused with its reason, staying ⧗ in the collection; once the
    allowance is used up, the mint refuses the whole request: one line, nothing lost."""
    env = init_league(tmp_path / "league", database_url, "stamp_allowance_per_day=2")
    player = Player(tmp_path / "a")
    with serving(env) as served:
        wallet = Wallet.new()
        wallet.give(prints=[Print("Model-A"), Print("Faithful"), Print("Wellformed")])
        serial = asyncio.run(sent_and_lost(served.url, wallet))
        code = tmp_path / "a.code"
        code.write_text(
            seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), encoding="ascii"
        )
        player.ok("load", str(code))
        assert player.json("collection")["pending_stamp"] is True
        run = player.json("stamp")
        assert run["stamped"][0]["serial"] == serial
        assert [s["title"] for s in run["stamped"]] == ["Model-A", "Faithful"]
        (refused,) = run["refused"]
        assert refused["title"] == "Wellformed"
        assert "allowance" in refused["reason"]

        async def census() -> dict[tuple[str, str], tuple[int, int]]:
            async with LeagueClient(served.url) as client:
                return (await client.census()).runs()

        runs = asyncio.run(census())
        assert runs[("Model-A", "standard")][1] == 1  # stamped once, not twice
        held = player.json("collection")
        assert held["pending_stamp"] is False
        assert sorted((p["title"], p["stamped"]) for p in held["prints"]) == [
            ("Faithful", True),
            ("Model-A", True),
            ("Wellformed", False),
        ]
        assert "allowance" in one_line_failure(player.run("stamp")).lower()
        assert player.json("collection") == held  # nothing lost, nothing left pending
