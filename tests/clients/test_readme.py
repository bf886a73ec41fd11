"""README "Play and trade": every command in it, run in order as the player its block names,
against a served league, exactly as written: each player types in a shell
of its own in the clone (here a directory holding the clone's ``.venv``), with ``cz`` not on
its PATH until the README's ``. .venv/bin/activate``, and the wallet where the README puts it
(the platform's data directory for you, ``export CZ_HOME=…`` for the friend and the second
device). Nothing is handed to a wallet: the prints stamped are those a Registrar's table paid,
the print traded the single bought with notes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import shlex
import subprocess
from pathlib import Path

from apiclient.league import LeagueClient
from ledger.api.rewards import RewardOutcome
from ledger.catalog import ARCHIVE_SETS, CardSet
from tests.clients.conftest import CZ, GUARD_SECONDS, PASSPHRASE, Player
from tests.harness.league import InProcessLeague, clean_env

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_BLOCK = re.compile(r"^<!-- play-and-trade: ([a-z ]+) -->\n```sh\n(.*?)^```", re.M | re.S)
#: The URL the README names.
README_URL = "http://127.0.0.1:8080"
#: What the README types before ``cz``: the venv's activation and a wallet directory.
ACTIVATE = ". .venv/bin/activate"
#: Reads one line at a time from fd 3 and runs it in this shell (as typed at a prompt: an
#: activation or an export holds for the lines after it), its status written to fd 4.
_DRIVER = 'while IFS= read -r line <&3; do eval "$line" </dev/null; echo "$?" >&4; done'


class Terminal:
    """One player's shell, in the clone's directory, fed the README's lines one by one."""

    def __init__(self, name: str, cwd: Path, env: dict[str, str]) -> None:
        self.log = cwd / f"{name}.terminal"
        self._commands_r, self._commands = os.pipe()
        self._statuses, self._statuses_w = os.pipe()
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                ["bash", "-c", f"exec 3<&{self._commands_r} 4>&{self._statuses_w}; {_DRIVER}"],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=(self._commands_r, self._statuses_w),
            )
        os.close(self._commands_r)
        os.close(self._statuses_w)

    def type(self, line: str) -> int:
        """Run ``line``; its exit status."""
        os.write(self._commands, line.encode() + b"\n")
        ready, _, _ = select.select([self._statuses], [], [], GUARD_SECONDS)
        assert ready, f"{line!r} hung"
        return int(os.read(self._statuses, 64).decode().strip())

    def close(self) -> None:
        os.close(self._commands)
        self.process.wait(timeout=GUARD_SECONDS)
        os.close(self._statuses)


async def reward_of(url: str, table: str) -> RewardOutcome:
    """The reward the league paid for ``table``, as the table's view shows it."""
    async with LeagueClient(url) as client:
        view = await client.table(table)
    assert view.closing is not None
    assert view.closing.reward is not None
    return view.closing.reward


def typed() -> list[tuple[str, list[str]]]:
    """Each block's player and its lines, as written."""
    text = README.read_text(encoding="utf-8")
    return [
        (role, [line for line in body.splitlines() if line.strip()])
        for role, body in _BLOCK.findall(text)
    ]


def blocks() -> list[tuple[str, list[list[str]]]]:
    return [(role, [shlex.split(line) for line in lines]) for role, lines in typed()]


def cz_commands() -> list[list[str]]:
    return [c for _, commands in blocks() for c in commands if c[0] not in (".", "export")]


def test_the_section_names_every_wallet_and_league_command() -> None:
    run = {" ".join(c[1:3]) if c[1] in ("key", "league", "notes") else c[1] for c in cz_commands()}
    assert {
        "key strike",
        "league set",
        "play",
        "campaign",
        "stamp",
        "collection",
        "notes claim",
        "notes",
        "buy",
        "card",
        "send",
        "save",
        "import",
        "provenance",
        "load",
        "sync",
    } <= run
    assert all(c[0] == "cz" for c in cz_commands())


def test_each_player_activates_the_venv_and_a_second_one_sets_cz_home() -> None:
    """The README's first command installs ``cz`` in ``.venv`` without activating it: each
    player's first block activates it, and a second player or device on the machine names
    its own wallet with ``CZ_HOME``, the one variable that takes."""
    first: dict[str, list[str]] = {}
    for role, commands in blocks():
        first.setdefault(role, [" ".join(c) for c in commands])
    assert set(first) == {"you", "friend", "second device"}
    assert all(lines[0] == ACTIVATE for lines in first.values())
    assert first["friend"][1] == "export CZ_HOME=$PWD/friend"
    assert first["second device"][1] == "export CZ_HOME=$PWD/second-device"


def test_play_and_trade_runs_as_written(served: InProcessLeague, tmp_path: Path) -> None:
    """Every line of the section, typed as written (the activation, the exports, each ``cz``
    a real process of the console script: the subprocess smoke test of the whole client) in
    the shell of its block's player, in the clone; the league served in this process. Only
    the league's URL is the one it serves on."""
    (tmp_path / ".venv").symlink_to(CZ.parent.parent)
    venv_bin = str(CZ.parent)
    path = os.pathsep.join(
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and Path(d).resolve() != Path(venv_bin).resolve()
    )
    env = {k: v for k, v in clean_env(os.environ).items() if k not in ("VIRTUAL_ENV",)}
    env |= {
        "PATH": path,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "CZ_KDF": "minimum",
        "CZ_PASSPHRASE": PASSPHRASE,
    }
    terminals: dict[str, Terminal] = {}
    try:
        for role, lines in typed():
            if role not in terminals:
                terminals[role] = Terminal(role.replace(" ", "-"), tmp_path, env)
            terminal = terminals[role]
            for line in lines:
                status = terminal.type(line.replace(README_URL, served.url))
                assert status == 0, (role, line, terminal.log.read_text(errors="replace"))
    finally:
        for terminal in terminals.values():
            terminal.close()
    # each wallet where the README put it
    roles = {
        "you": Player(tmp_path / "data" / "cz"),
        "friend": Player(tmp_path / "friend"),
        "second device": Player(tmp_path / "second-device"),
    }
    assert all(p.wallet_file.is_file() for p in roles.values())
    you = roles["you"].json("collection")
    # the five tables reached the Lettered Registrar, whose seven prints were stamped
    assert you["campaign"]["registrar-lettered"] == {"wins": 1, "losses": 0, "balances": 0}
    assert sorted(p["title"] for p in you["prints"] if p["stamped"]) == sorted(
        c.name for c in ARCHIVE_SETS[CardSet.LETTERED]
    )
    assert (you["unstamped"], you["marks"]) == (0, 3 * 10 + 25 + 100 - 50)
    # the witnessed table at clerk-1: played to its close, its reveal checked (L-35), and its
    # reward (a win's M10 in notes, a Balance's, a loss nothing: the deal is the league's and
    # yours)
    (witnessed,) = (roles["you"].home / "league-tables").glob("*.json")
    kept = json.loads(witnessed.read_text(encoding="utf-8"))
    assert (kept["venue"], kept["closed"], kept["checked"], kept["rewarded"]) == (
        "clerk-1",
        True,
        "fair",
        True,
    )
    assert kept["answered"] == len(kept["moves"]) > 0
    reward = asyncio.run(reward_of(served.url, kept["table"]))
    rewarded = sum(n.denomination for n in reward.notes)
    assert reward.status in ("paid", "nothing")
    assert rewarded == (reward.due.marks if reward.due is not None else 0)
    # the change of the purchase (M20), and the reward's notes
    assert sum(n["denomination"] for n in you["note_list"]) == 20 + rewarded
    friend = roles["friend"].json("collection")
    assert [(p["title"], p["serial"]) for p in friend["prints"]] == [("Tally", "CZ-TALLY-0001")]
    life = roles["friend"].json("provenance", "CZ-TALLY-0001")
    assert (life["stamped_to"], life["holder"]) == (you["address"], friend["address"])
    device = roles["second device"].json("collection")
    assert device["address"] == you["address"]
    assert "CZ-TALLY-0001" not in {p["serial"] for p in device["prints"]}  # saved after it left
    assert len(device["prints"]) == 7
