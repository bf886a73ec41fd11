"""``cz play``, ``cz campaign``, ``cz store`` and ``cz bundle open`` as a player runs them:
subprocesses with their own wallet home, and a pseudo-terminal for the tables a person plays
(Book IV: the campaign, the tables, the No-Go drill; V.5: the offline store and bundles)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from clients.wallet import Wallet
from game.window.campaign import ASSESSOR, CLERK_MARKS, clerk, settle
from game.window.economy.prices import BUNDLE_PRICE, BUNDLE_PRINTS, SINGLE_PRICE
from game.window.scoring import Verdict
from ledger.catalog import Rarity
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.clients.conftest import (
    CZ,
    GUARD_SECONDS,
    PASSPHRASE,
    Player,
    one_line_failure,
    wallet_with,
)

ACTION_PROMPT = "your action (number or notation; q leaves): "
DRILL_PROMPT = "the pattern, three rows of 0/1 (e.g. 101/010/001): "
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
LEAVES = (
    ("play",),
    ("campaign",),
    ("store",),
    ("store", "buy"),
    ("store", "upgrade"),
    ("store", "bundle"),
    ("bundle", "open"),
)


def loaded(
    player: Player, tmp_path: Path, wallet: Wallet | None = None, *, marks: int = 0
) -> Player:
    """``player`` holding a wallet loaded from a save code (a fresh one with ``marks``)."""
    code = tmp_path / f"{player.home.name}.czsave"
    if wallet is None:
        wallet_with(code, [], marks=marks)
    else:
        code.write_text(seal_save_code(wallet.to_payload(), PASSPHRASE, MINIMUM_KDF), "ascii")
    player.ok("load", str(code))
    return player


def past_the_clerks() -> Wallet:
    """A wallet whose campaign has settled three clerks' tables and lost the fourth: the market
    seal is broken and the Assessor's market table is next (IV.1 "settle three of the four",
    IV.2)."""
    wallet = Wallet.new()
    for n in (1, 2, 3):
        wallet.campaign, _ = settle(wallet.campaign, clerk(n), Verdict.WIN)
    wallet.campaign, _ = settle(wallet.campaign, clerk(4), Verdict.LOSS)
    return wallet


def at_the_table(
    args: Sequence[str], env: dict[str, str], choose: Callable[[str], str]
) -> tuple[int, str]:
    """Run ``cz`` on a pseudo-terminal; at each prompt, answer ``choose(screen)`` where
    ``screen`` is what the terminal showed since the last answer (ANSI codes removed)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(CZ), *args], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    shown = b""
    seen = 0
    try:
        while True:
            ready, _, _ = select.select([master], [], [], GUARD_SECONDS)
            if not ready:
                raise AssertionError(f"cz on a terminal went quiet; it showed {shown!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk:
                break
            shown += chunk
            screen = ANSI.sub("", shown[seen:].decode("utf-8", "replace"))
            if screen.endswith((ACTION_PROMPT, DRILL_PROMPT)):
                seen = len(shown)
                os.write(master, choose(screen).encode() + b"\n")
        return process.wait(timeout=GUARD_SECONDS), shown.decode("utf-8", "replace")
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()


def listed(screen: str) -> dict[str, int]:
    """The legal actions the screen lists: notation -> number."""
    return {m[2]: int(m[1]) for m in re.finditer(r"^ +(\d+)\. (.+?)\r?$", screen, re.M)}


def test_help_teaches_every_play_command(tmp_path: Path) -> None:
    player = Player(tmp_path / "p")
    top = player.ok("--help")
    for command in ("play", "campaign", "store", "bundle"):
        assert f"    {command}" in top, command
    for leaf in LEAVES:
        assert "--json" in player.ok(*leaf, "--help"), leaf
    play_help = player.ok("play", "--help")
    for taught in ("--chair", "--registrar", "--auto", "--seed", "drill", "notation"):
        assert taught in play_help, taught


def test_auto_play_records_credits_and_advances_the_campaign(tmp_path: Path) -> None:
    """IV.1: the clerks' base tables come first; a finished table is recorded (it replays to
    its verdict) and settled, its marks credited; a settled table moves the campaign on."""
    player = Player(tmp_path / "p")
    player.strike()
    assert player.json("campaign")["next"]["venue"] == "clerk-1"

    first = player.json("play", "--auto", "--seed", "1")
    assert (first["venue"], first["table"], first["seed"]) == ("clerk-1", "base", 1)
    verdict = Verdict(first["verdict"])
    assert first["reward"]["marks"] == CLERK_MARKS[verdict]
    replayed = json.loads(player.ok("table", "replay", "--json", first["record"]))
    assert replayed["verdict"][0] == first["verdict"]
    collection = player.json("collection")
    assert collection["marks"] == CLERK_MARKS[verdict]
    assert collection["campaign"]["clerk-1"] == {
        "wins": int(verdict is Verdict.WIN),
        "losses": int(verdict is Verdict.LOSS),
        "balances": int(verdict is Verdict.BALANCE),
    }

    # Chair XII plays the client's seat; seed 1 settles clerk 1's table (a win), so the
    # campaign's next table is clerk 2's, and the second play is there (IV.1).
    assert verdict is Verdict.WIN
    progress = player.json("campaign")
    assert progress["tables"] == {"won": 1, "lost": 0, "balanced": 0}
    assert progress["next"]["venue"] == "clerk-2"
    second = player.json("play", "--auto", "--seed", "1")
    assert second["venue"] == "clerk-2"
    record = player.json("collection")["campaign"]
    assert sum(record["clerk-2"].values()) == 1
    assert player.json("collection")["marks"] == (
        CLERK_MARKS[verdict] + CLERK_MARKS[Verdict(second["verdict"])]
    )
    assert len(list((player.home / "tables").iterdir())) == 2


def test_the_same_seed_plays_the_same_table(tmp_path: Path) -> None:
    """Seeded tables and AIs (docs/modes.md): two wallets, the same seed, the same actions."""
    records = []
    for name in ("a", "b"):
        player = Player(tmp_path / name)
        player.strike()
        played = player.json("play", "--auto", "--seed", "7")
        records.append(json.loads(Path(played["record"]).read_text("utf-8")))
    assert records[0] == records[1]


def test_a_locked_venue_is_refused_before_anything_is_played(tmp_path: Path) -> None:
    """IV.6 "Beat Chair n to unlock Chair n+1"; the Registrars open after the Assessor (M-06)."""
    player = Player(tmp_path / "p")
    player.strike()
    before = player.wallet_file.read_bytes()
    assert "chair-II is still locked" in one_line_failure(player.run("play", "--chair", "II"))
    assert "locked" in one_line_failure(player.run("play", "--registrar", "lettered"))
    one_line_failure(player.run("play", "--chair", "XIII"))
    assert player.wallet_file.read_bytes() == before
    assert not (player.home / "tables").exists()


def test_a_person_plays_by_number_and_leaves_with_the_wallet_unchanged(tmp_path: Path) -> None:
    """On a terminal: the table drawn in colour, the legal actions numbered; two moves by
    number, a bad notation refused in one line, then q: the table is abandoned, nothing is
    recorded or paid and the wallet is not written (docs/rulings.md L-19)."""
    player = Player(tmp_path / "p")
    player.strike()
    before = player.wallet_file.read_bytes()
    answers = iter(["1", "1", "fly away", "q"])
    status, shown = at_the_table(
        ["play", "--seed", "1"], player.env(), lambda screen: next(answers)
    )
    assert status == 0, shown
    assert next(answers, None) is None, shown  # every answer was asked for
    plain = ANSI.sub("", shown)
    assert "\x1b[" in shown  # colour on a terminal
    for part in (
        "chain:",
        "hand:",
        "market",
        "hostage:",
        "plenum",
        "hoard",
        "Seal [",
        "Substance",
        "clerk-1: ",
    ):
        assert part in plain, part
    assert "unknown action 'fly'" in plain
    assert plain.count("\nyou: ") == 2  # each choice named in notation
    assert "you left the table before its close" in plain
    assert player.wallet_file.read_bytes() == before
    assert not (player.home / "tables").exists()
    assert player.json("campaign")["tables"] == {"won": 0, "lost": 0, "balanced": 0}


def test_a_person_who_plays_to_the_close_is_recorded_and_paid(tmp_path: Path) -> None:
    """Decisions read from stdin (a script, or a person typing ahead): always the first listed
    action, to the Seal's close (I.1); the table is recorded, replays to the verdict shown, and
    its result is settled in the campaign (IV.1)."""
    player = Player(tmp_path / "p")
    player.strike()
    result = player.json("play", "--seed", "4", stdin="1\n" * 200)
    assert result["venue"] == "clerk-1"
    replayed = json.loads(player.ok("table", "replay", "--json", result["record"]))
    assert replayed["verdict"][0] == result["verdict"]
    verdict = Verdict(result["verdict"])
    held = player.json("collection")
    assert held["marks"] == CLERK_MARKS[verdict]
    assert sum(held["campaign"]["clerk-1"].values()) == 1


# I.4, I.6, I.7, Book II: the table teaches (issue: help was "unknown action")
def test_the_table_answers_help_rules_card_and_why(tmp_path: Path) -> None:
    """At the prompt, help lists what can be typed; rules sums up the turn and cites
    docs/rules.md; card NAME prints the catalog's cost and set and the card's text and power from
    docs/rules.md (an unknown name is one line); why names the last move, its rule and what it
    changed. None of them is an action: the table goes on, and q leaves it (L-19)."""
    player = Player(tmp_path / "p")
    player.strike()
    typed = [
        "?",
        "rules",
        "card Tally",
        "card pairing",
        "card No-Go",
        "card Nobody",
        "why",
        "1",
        "why",
        "q",
    ]
    out = player.ok("play", "--seed", "1", stdin="".join(t + "\n" for t in typed))
    assert "unknown action" not in out
    assert "card NAME" in out
    assert "why" in out
    assert "docs/rules.md I.6" in out
    assert "I.9" in out
    assert "Tally: cost 5, base set (common)" in out
    assert "no power" in out
    assert "Pairing: cost 4" in out
    assert "I.7 COLLECT" in out
    assert "N = 1 for the axis" in out  # Collect's text, read from docs/rules.md
    assert "No-Go: cost 1, folded set" in out
    assert "notation 'nogo" in out
    assert "challenge one face-up card" in out
    assert "no certificate is named 'Nobody'" in out
    assert "no move yet" in out
    # seed 1: you build Separation (number 1), clerk-1 answers; why explains clerk-1's move
    assert "you: build Separation" in out
    assert "clerk-1 played 'build Reflection' on turn 2 (docs/rules.md I.7 BUILD)" in out
    assert "clerk-1's chain: -  →  Reflection" in out
    assert "the Seal: 0 → 1" in out
    assert "clerk-1's columns: Substance 0→2, Form 0→1" in out
    assert "you left the table before its close" in out


# I.9, I.10: the verdict shows both sides and its reason
def test_the_close_shows_both_columns_and_the_reason(tmp_path: Path) -> None:
    """At the close the table prints both sides' columns, who takes each column and the rule
    that decided the verdict (docs/rules.md I.9), agreeing with the verdict settled."""
    player = Player(tmp_path / "p")
    player.strike()
    out = player.ok("play", "--seed", "4", stdin="1\n" * 200)
    assert "the columns at the close (docs/rules.md I.9):" in out
    rows = {
        m[1]: (int(m[2]), int(m[3]), int(m[4]))
        for m in re.finditer(r"^  (you|clerk-1) +(\d+) +(\d+) +(\d+)$", out, re.M)
    }
    assert set(rows) == {"you", "clerk-1"}
    # seed 4 played by the first listed action: clerk-1 takes all three columns
    assert rows["you"] == (3, 0, 0)
    assert rows["clerk-1"] == (19, 2, 1)
    assert "Substance to clerk-1 (19 to 3)" in out
    assert "clerk-1 wins the table: three columns of three to none (docs/rules.md I.9" in out
    assert "clerk-1: loss" in out


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    player = Player(tmp_path / "p")
    player.strike()
    piped = player.ok("play", "--auto", "--seed", "2")
    assert "\x1b[" not in piped
    assert "Seal [" in piped
    env = {**player.env(), "NO_COLOR": "1"}
    status, shown = at_the_table(["play", "--seed", "2"], env, lambda screen: "q")
    assert status == 0, shown
    assert "\x1b[" not in shown


@pytest.mark.parametrize("right", [True, False])
def test_the_no_go_drill_is_a_timed_grid(tmp_path: Path, right: bool) -> None:
    """IV.4, R-02: a person's No-Go sets the 3×3 drill: the pattern is shown, then hidden, and
    typed back as three rows of 0/1; the exact pattern in time succeeds, another fails. At
    the Assessor's market table (IV.2) the player builds No-Go and spends it."""
    player = loaded(Player(tmp_path / "p"), tmp_path, past_the_clerks())
    before = player.wallet_file.read_bytes()
    drilled: list[str] = []

    def choose(screen: str) -> str:
        if screen.endswith(DRILL_PROMPT):
            cells = [
                line.split()
                for line in screen.splitlines()
                if line.strip() and set(line.strip()) <= {"■", "□", " "}
            ]
            assert [len(row) for row in cells] == [3, 3, 3], screen
            pattern = "/".join("".join("1" if c == "■" else "0" for c in row) for row in cells)
            drilled.append(pattern)
            return pattern if right else "000/000/000"  # a pattern lights four cells
        if drilled:
            return "q"
        actions = listed(screen)
        spend = [n for text, n in actions.items() if text.startswith("nogo ")]
        return str((spend or [actions.get("build No-Go", 1)])[0])

    status, shown = at_the_table(["play", "--seed", "1"], player.env(), choose)
    plain = ANSI.sub("", shown)
    assert status == 0, plain
    assert "assessor: a market table" in plain
    assert len(drilled) == 1, plain
    assert "(hidden)" in plain
    outcome = "success" if right else "failure"
    assert f"drill {outcome} after" in plain
    assert f"the pattern was {drilled[0]}" in plain
    assert player.wallet_file.read_bytes() == before  # left before the close (L-19)


def test_store_buys_with_enough_marks_and_refuses_too_few(tmp_path: Path) -> None:
    """V.5: unstamped marks buy unstamped prints (singles by rarity), finish upgrades and
    sealed bundles (M-01); too few marks is one line, exit 2, and nothing spent or lost."""
    player = loaded(Player(tmp_path / "p"), tmp_path, marks=200)
    listing = player.json("store")
    assert listing["marks"] == 200
    assert listing["singles"] == {r.value: SINGLE_PRICE[r] for r in Rarity}
    assert listing["bundle"] == BUNDLE_PRICE

    bought = player.json("store", "buy", "tally")  # a title in any case
    assert bought["print"] == {
        "title": "Tally",
        "finish": "standard",
        "stamped": False,
        "serial": None,
    }
    assert bought["marks"] == 200 - SINGLE_PRICE[Rarity.COMMON]
    upgradable = player.json("store")["upgradable"]
    assert [(u["index"], u["title"]) for u in upgradable] == [(1, "Tally")]
    raised = player.json("store", "upgrade", "1", "gilt")
    assert raised["print"]["finish"] == "gilt"
    assert raised["marks"] == 200 - 30 - 80
    bundle = json.loads(player.ok("store", "--json", "bundle"))  # --json before or after
    assert (bundle["marks"], bundle["bundles"]) == (200 - 30 - 80 - 50, 1)

    before = player.wallet_file.read_bytes()
    held = player.json("collection")
    for refused in (
        ("store", "buy", "Zenoseal"),
        ("store", "upgrade", "1", "holofoil"),
        ("store", "bundle"),
        ("store", "buy", "Nothing"),
        ("store", "upgrade", "9", "gilt"),
    ):
        line = one_line_failure(player.run(*refused))
        assert line.startswith("cz: "), line
    assert "costs M240; you hold M40" in one_line_failure(player.run("store", "buy", "Zenoseal"))
    assert player.wallet_file.read_bytes() == before
    assert player.json("collection") == held


def test_bundle_open_credits_three_prints(tmp_path: Path) -> None:
    """V.5: a bundle yields three prints; opened with a seed drawn from the OS, it leaves the
    collection and its prints join it, unstamped (⧗)."""
    player = loaded(Player(tmp_path / "p"), tmp_path, marks=BUNDLE_PRICE)
    player.json("store", "bundle")
    opened = player.json("bundle", "open")
    assert len(opened["prints"]) == BUNDLE_PRINTS
    assert opened["bundles"] == 0
    held = player.json("collection")
    assert (held["marks"], held["bundles"], held["unstamped"]) == (0, 0, BUNDLE_PRINTS)
    assert [p["title"] for p in held["prints"]] == [p["title"] for p in opened["prints"]]
    before = player.wallet_file.read_bytes()
    assert "no sealed bundle" in one_line_failure(player.run("bundle", "open"))
    assert player.wallet_file.read_bytes() == before


def test_a_registrar_table_pays_the_set_on_first_settlement(tmp_path: Path) -> None:
    """IV.5: the Registrars open once the Assessor's table is settled (M-06); the player's
    eight are house copies here (M-11); a first settlement strikes the set's seven prints,
    one holofoil, plus marks (M100 for a win, docs/modes.md)."""
    wallet = past_the_clerks()
    wallet.campaign, _ = settle(wallet.campaign, ASSESSOR, Verdict.WIN)
    player = loaded(Player(tmp_path / "p"), tmp_path, wallet)
    marks = player.json("collection")["marks"]
    played = player.json("play", "--registrar", "lettered", "--auto", "--seed", "3")
    assert (played["venue"], played["table"]) == ("registrar-lettered", "portfolio")
    held = player.json("collection")
    assert played["verdict"] == "win"  # Chair XII takes this seeded table
    assert played["reward"]["marks"] == 100
    assert len(played["reward"]["prints"]) == 7
    assert [p["finish"] for p in played["reward"]["prints"]].count("holofoil") == 1
    assert held["unstamped"] == 7
    assert held["marks"] == marks + 100
    replayed = json.loads(player.ok("table", "replay", "--json", played["record"]))
    assert replayed["verdict"][0] == played["verdict"]
