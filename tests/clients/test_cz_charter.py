"""``cz charter``: validate, play and replay, run as a player would run them (in this
process: tests.harness.cz)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from game.charter import library
from tests.harness.cz import run_cz


def cz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cz(args, env=dict(os.environ), stdin=stdin)


# The Charter
def test_validate_accepts_a_deck_that_satisfies_its_charter() -> None:
    """A packaged deck under its own charter: one line on stdout, exit 0."""
    out = cz("charter", "validate", "tide", "--charter", "skirmish")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "deck 'tide' satisfies charter 'skirmish'\n"


# The Charter, Manifest
def test_validate_explains_every_failure_one_line_each(tmp_path: Path) -> None:
    """A deck off its charter: every failure one line on stderr, exit 2."""
    deck = dict(library.deck("ember").source)
    deck["cards"] = {**deck["cards"], "Knight": 9}
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(deck))
    out = cz("charter", "validate", str(path), "--charter", "siege")
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert all(line.startswith("cz: deck 'ember' against 'siege': ") for line in lines)
    assert any("designed under 'skirmish'" in line for line in lines)
    assert any("holds 28 cards; the charter sets exactly 24" in line for line in lines)
    assert any("'Militia' is placed by manifest" in line for line in lines)
    assert not any("complexity sums to" in line for line in lines)  # 55 fits within 60


def test_validate_refuses_an_unreadable_file_in_one_line(tmp_path: Path) -> None:
    """A deck file that is not JSON: one line, exit 2, no traceback."""
    path = tmp_path / "deck.json"
    path.write_text("{not json")
    out = cz("charter", "validate", str(path), "--charter", "skirmish")
    assert out.returncode == 2
    assert len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("cz: ")


# Game setup, Resolution
def test_play_is_reproducible_and_its_record_replays(tmp_path: Path) -> None:
    """Two AI-versus-AI games with one seed give the same record, which replays to the end."""
    first = cz("charter", "play", "ember", "tide", "--seed", "4", "--budget", "4")
    second = cz("charter", "play", "ember", "tide", "--seed", "4", "--budget", "4")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    record = tmp_path / "game.json"
    record.write_text(first.stdout)
    out = cz("charter", "replay", str(record))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["over"] is True
    assert result["position"]["steps"] == len(json.loads(first.stdout)["actions"])


def test_replay_refuses_an_illegal_action_in_one_line(tmp_path: Path) -> None:
    """A record whose action is illegal: one line naming it, exit 2."""
    record = {
        "format": "charter-record/1",
        "card_set": "sample",
        "charter": "skirmish",
        "decks": [library.deck("ember").card_list(), library.deck("tide").card_list()],
        "seed": 1,
        "actions": ["attacks done"],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    out = cz("charter", "replay", str(path))
    assert out.returncode == 2
    assert out.stderr.startswith("cz: illegal action 'attacks done' at step 1")
    assert len(out.stderr.splitlines()) == 1


def test_a_human_seat_reads_actions_from_stdin() -> None:
    """--human 0: the seat's actions come from stdin; an unreadable line is asked again, and
    input ending early is one line, exit 2."""
    out = cz("charter", "play", "ember", "tide", "--human", "0", "--budget", "2", stdin="hello\n")
    assert out.returncode == 2
    assert "is not an action of the charter notation" in out.stderr
    assert out.stderr.splitlines()[-1] == "cz: the input ended before the game did"


# Defense and defeat, C-19
def test_play_states_who_won_and_why(tmp_path: Path) -> None:
    """The record of a finished game carries its result, winner and reason; a result line on
    stderr says the same; replay prints the reason."""
    out = cz("charter", "play", "ember", "tide", "--seed", "2", "--budget", "2", "--max-turns", "1")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["result"] == {
        "winner": None,
        "reason": "no winner: the table's limit of 1 turn was reached with no player "
        "defeated (C-19)",
    }
    assert out.stderr.splitlines()[-1] == f"result: no winner — {record['result']['reason']}"
    path = tmp_path / "game.json"
    path.write_text(out.stdout)
    replayed = cz("charter", "replay", str(path))
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["reason"] == record["result"]["reason"]


# Resolution, Anchoring, Combat
def test_a_human_seat_reads_the_table_and_asks_for_help_and_cards() -> None:
    """At a human seat: help lists the commands, card NAME gives the card's sheet (type,
    attributes, price, production, text), an unknown card is said so, and the table shows
    every seat's board with hand and deck sizes before the legal actions."""
    out = cz(
        "charter", "play", "ember", "tide", "--human", "0", "--budget", "2",
        stdin="help\ncard Keep\ncard Nothing\ntable\n",
    )  # fmt: skip
    assert out.returncode == 2
    err = out.stderr
    assert "card NAME     a card's type, attributes, price" in err
    assert "Keep — location, complexity 2; strength 1, resilience 1, integrity 5, extent 3" in err
    assert "  price: nothing\n  produces: stone\n  text: Territory. Commit: add a stone." in err
    assert "no card called 'Nothing' in 'sample'" in err
    assert err.count("  seat 1: board") >= 2  # the table, and again on request
    assert "; hand 7; deck 13" in err


# Resolution, Anchoring, Combat
def test_replay_steps_through_a_record_with_the_table(tmp_path: Path) -> None:
    """replay --steps: every action with its seat, the table after it (targets on the stack,
    who attacks what), and the result line at the end."""
    played = cz("charter", "play", "ember", "tide", "--seed", "4", "--budget", "2")
    assert played.returncode == 0, played.stderr
    path = tmp_path / "game.json"
    path.write_text(played.stdout)
    record = json.loads(played.stdout)
    out = cz("charter", "replay", str(path), "--steps")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    steps = [line for line in lines if line.startswith("step ")]
    assert len(steps) == len(record["actions"])
    assert steps[0].startswith(f"step 1: seat 0: {record['actions'][0]} — turn")
    assert lines[-1] == played.stderr.splitlines()[-1]  # the same result line
    if any(a.startswith("attack ") for a in record["actions"]):
        assert any(line.startswith("  combat: ") and " attacks " in line for line in lines)
