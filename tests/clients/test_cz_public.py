"""The commands that only read need no passphrase; the key is asked only to sign, and asked
again after a typo on a terminal (Book V.2: the key signs; V.6 "Copy my ledger card" is
public).

``cz card``, ``cz key show`` and ``cz collection`` read the wallet's public summary
(``public.json`` beside it, see clients/cz_public.py), written whenever the wallet is opened
or saved and tied to the sealed wallet it summarises."""

from __future__ import annotations

import json
from pathlib import Path

from clients.cz_public import PUBLIC_FILE
from clients.wallet import WalletHome
from game.window.economy.prints import Print
from ledger.cards import LedgerCard
from tests.clients.conftest import PASSPHRASE, Player, on_terminal, one_line_failure, wallet_with

#: ``CZ_PASSPHRASE`` set but empty: no passphrase can be had (and none is asked).
NONE = ""


def test_read_only_commands_need_no_passphrase(tmp_path: Path) -> None:
    """``cz card``, ``cz key show`` and ``cz collection`` answer with no passphrase at all,
    exactly what the opened wallet shows, and say in one line where the answer comes from;
    the summary holds nothing secret and is private to its owner like the wallet; a command
    that signs still needs the passphrase, and a summary of another wallet file than the one
    in the home is never shown."""
    player = Player(tmp_path / "p")
    player.ok("load", str(wallet_with(tmp_path / "w.code", [Print("Model-A")], marks=7)))
    address = player.json("key", "show")["address"]
    summary = player.home / PUBLIC_FILE
    summary.unlink(missing_ok=True)  # so the wallet is opened whole, then summarised again
    opened = player.json("collection")
    assert opened["address"] == address
    assert opened["marks"] == 7

    card = player.run("card", passphrase=NONE)
    assert card.returncode == 0, card.stderr
    assert LedgerCard.from_armor(card.stdout).address == address
    assert card.stderr.count("\n") == 1
    assert "no passphrase needed" in card.stderr
    shown = player.run("key", "show", "--json", passphrase=NONE)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["address"] == address
    listed = player.run("collection", "--json", passphrase=NONE)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == opened
    text = player.run("collection", passphrase=NONE)
    assert "Model-A" in text.stdout
    assert "M7 unstamped marks" in text.stdout
    for command in ("campaign", "store"):  # and the campaign's record, the store's list
        shown = player.run(command, "--json", passphrase=NONE)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout) == player.json(command)
    assert json.loads(player.run("store", "--json", passphrase=NONE).stdout)["marks"] == 7
    notes = player.run("notes", "--json", passphrase=NONE)  # cz notes too
    assert notes.returncode == 0, notes.stderr
    assert (
        json.loads(notes.stdout) == player.json("notes") == {"notes": [], "marks": 0, "bound": []}
    )

    secret = WalletHome(player.home).read(PASSPHRASE).to_payload()["key"]
    assert secret not in summary.read_text(encoding="utf-8")
    assert summary.stat().st_mode & 0o777 == 0o600

    # the key only to sign: a command that uses it (cz save) still refuses without it
    assert "CZ_PASSPHRASE" in one_line_failure(player.run("save", passphrase=NONE))
    # the wallet file replaced behind cz's back (another save code copied in): the summary
    # is of the old one, so it is not shown and collection opens the wallet, passphrase asked
    player.wallet_file.write_text(
        wallet_with(tmp_path / "other.code", []).read_text(encoding="ascii"), encoding="ascii"
    )
    assert "CZ_PASSPHRASE" in one_line_failure(player.run("collection", passphrase=NONE))


def test_a_wrong_passphrase_says_so(tmp_path: Path) -> None:
    """With ``CZ_PASSPHRASE`` wrong: one line, exit 2, a wrong passphrase, not a save code."""
    player = Player(tmp_path / "p")
    player.strike()
    line = one_line_failure(player.run("save", passphrase="wrong horse"))
    assert line.startswith("cz: wrong passphrase"), line
    assert "SAVE CODE" not in line


def test_a_typo_on_a_terminal_is_asked_again(tmp_path: Path) -> None:
    """On a terminal a wrong passphrase is asked again: a typo then the right one succeeds;
    three wrong ones give up with exit 2 and nothing written."""
    player = Player(tmp_path / "p")
    player.strike()
    env = {k: v for k, v in player.env().items() if k != "CZ_PASSPHRASE"}
    status, shown = on_terminal(
        ["save"], env, [("passphrase: ", "corect horse"), ("passphrase: ", PASSPHRASE)]
    )
    assert status == 0, shown
    assert "wrong passphrase, try again" in shown
    assert "-----BEGIN CZ SAVE CODE-----" in shown

    before = player.wallet_file.read_bytes()
    status, shown = on_terminal(
        ["save"], env, [("passphrase: ", "one"), ("passphrase: ", "two"), ("passphrase: ", "three")]
    )
    assert status == 2, shown
    assert "wrong passphrase: the wallet in" in shown
    assert "(3 tries)" in shown
    assert "SAVE CODE" not in shown
    assert player.wallet_file.read_bytes() == before
