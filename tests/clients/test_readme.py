"""README "Play and trade": every command in it, run in order as the player its block names,
against a served league (issue 12 item 5)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from clients.wallet import WalletHome
from game.economy.prints import Print
from tests.clients.conftest import Player
from tests.services.league.test_cli import Served

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^<!-- play-and-trade: ([a-z ]+) -->\n```sh\n(.*?)^```", re.M | re.S)
#: The URL the README names, and the print the test hands the wallet in place of `cz play`.
README_URL = "http://127.0.0.1:8080"
PAID = Print("Model-A")


def blocks() -> list[tuple[str, list[list[str]]]]:
    text = README.read_text(encoding="utf-8")
    return [
        (role, [shlex.split(line) for line in body.splitlines() if line.strip()])
        for role, body in _BLOCK.findall(text)
    ]


def test_the_section_names_every_wallet_and_league_command() -> None:
    run = {" ".join(c[1:3]) if c[1] in ("key", "league") else c[1]
           for _, commands in blocks() for c in commands}
    assert {"key strike", "league set", "stamp", "collection", "card", "send", "save",
            "import", "provenance", "load"} <= run
    assert all(c[0] == "cz" for _, commands in blocks() for c in commands)


def tables_pay(player: Player) -> None:
    """What `cz play` will do: credit a table's reward (a ⧗ print) to the wallet."""
    home = WalletHome(player.home)
    wallet = home.read(player.passphrase)
    wallet.give(prints=[PAID])
    home.write(wallet, player.passphrase)


def test_play_and_trade_runs_as_written(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CZ_KDF", "minimum")  # for the wallet tables_pay reseals here
    roles: dict[str, Player] = {}
    paid = False
    for role, commands in blocks():
        player = roles.setdefault(
            role, Player(tmp_path / role.replace(" ", "-"), workdir=tmp_path)
        )
        if role == "second device":
            player.passphrase = roles["you"].passphrase
        for command in commands:
            if command[1] == "stamp" and not paid:
                tables_pay(player)
                paid = True
            args = [served.url if arg == README_URL else arg for arg in command[1:]]
            result = player.run(*args)
            assert result.returncode == 0, (command, result.stderr)
    friend = roles["friend"].json("collection")
    assert [(p["title"], p["serial"]) for p in friend["prints"]] == [
        ("Model-A", "CZ-MODEL-A-0001")
    ]
    life = roles["friend"].json("provenance", "CZ-MODEL-A-0001")
    assert life["holder"] == friend["address"]
    device = roles["second device"].json("collection")
    assert device["address"] == roles["you"].json("key", "show")["address"]
    assert device["prints"] == []  # the save code was written after the print left
