"""README "Play and trade": every command in it, run in order as the player its block names,
against a served league (issue 12 item 5). Nothing is handed to a wallet: the prints stamped
are those a Registrar's table paid, the print traded the single bought with notes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ledger.catalog import ARCHIVE_SETS, CardSet
from tests.clients.conftest import Player
from tests.harness.league import InProcessLeague

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^<!-- play-and-trade: ([a-z ]+) -->\n```sh\n(.*?)^```", re.M | re.S)
#: The URL the README names.
README_URL = "http://127.0.0.1:8080"


def blocks() -> list[tuple[str, list[list[str]]]]:
    text = README.read_text(encoding="utf-8")
    return [
        (role, [shlex.split(line) for line in body.splitlines() if line.strip()])
        for role, body in _BLOCK.findall(text)
    ]


def test_the_section_names_every_wallet_and_league_command() -> None:
    run = {" ".join(c[1:3]) if c[1] in ("key", "league", "notes") else c[1]
           for _, commands in blocks() for c in commands}
    assert {"key strike", "league set", "play", "campaign", "stamp", "collection",
            "notes claim", "notes", "buy", "card", "send", "save", "import", "provenance",
            "load"} <= run
    assert all(c[0] == "cz" for _, commands in blocks() for c in commands)


def test_play_and_trade_runs_as_written(served: InProcessLeague, tmp_path: Path) -> None:
    """Every command of the section, run as written by the console script a player runs (a
    real process each: the subprocess smoke test of the whole client), as its block's player;
    the league served in this process."""
    roles: dict[str, Player] = {}
    for role, commands in blocks():
        player = roles.setdefault(
            role, Player(tmp_path / role.replace(" ", "-"), workdir=tmp_path)
        )
        if role == "second device":
            player.passphrase = roles["you"].passphrase
        for command in commands:
            args = [served.url if arg == README_URL else arg for arg in command[1:]]
            result = player.process(*args)
            assert result.returncode == 0, (command, result.stderr)
    you = roles["you"].json("collection")
    # the five tables reached the Lettered Registrar, whose seven prints were stamped
    assert you["campaign"]["registrar-lettered"] == {"wins": 1, "losses": 0, "balances": 0}
    assert sorted(p["title"] for p in you["prints"] if p["stamped"]) == sorted(
        c.name for c in ARCHIVE_SETS[CardSet.LETTERED])
    assert (you["unstamped"], you["marks"]) == (0, 3 * 10 + 25 + 100 - 50)
    assert sorted(n["denomination"] for n in you["note_list"]) == [5, 5, 5, 5]  # the change
    friend = roles["friend"].json("collection")
    assert [(p["title"], p["serial"]) for p in friend["prints"]] == [
        ("Tally", "CZ-TALLY-0001")
    ]
    life = roles["friend"].json("provenance", "CZ-TALLY-0001")
    assert (life["stamped_to"], life["holder"]) == (you["address"], friend["address"])
    device = roles["second device"].json("collection")
    assert device["address"] == you["address"]
    assert "CZ-TALLY-0001" not in {p["serial"] for p in device["prints"]}  # saved after it left
    assert len(device["prints"]) == 7
