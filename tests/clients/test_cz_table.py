"""``cz table``: the CLI as a player runs it, in this process (tests.harness.cz); the usage
errors also from the real console script, a process's exit status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from game.window import new_market_table, to_json
from tests.clients.conftest import on_terminal
from tests.harness.cz import run_cz

DATA = Path(__file__).parents[1] / "data" / "window"
#: The console script pyproject declares (``cz = "clients.cz:main"``), beside this Python.
CZ = Path(sys.executable).parent / "cz"


def cz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cz(args, env=dict(os.environ), stdin=stdin)


def process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CZ), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


# cz table (docs/formats.md, records)
def test_help_teaches_the_commands() -> None:
    """cz --help names the table commands; cz table --help names replay and new."""
    top = cz("--help")
    assert top.returncode == 0
    assert "table" in top.stdout
    table = cz("table", "--help")
    assert "replay" in table.stdout
    assert "new" in table.stdout


# I.5, IV.2, Q-09
def test_table_new_prints_the_seeded_deal() -> None:
    """cz table new --kind market --seed N prints the opening position of that deal."""
    out = cz("table", "new", "--kind", "market", "--seed", "11")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == to_json(new_market_table(11))


#
def test_table_new_refuses_a_negative_seed() -> None:
    """cz table new: a seed is a whole number from 0 (argparse's usage error, exit 2)."""
    out = cz("table", "new", "--kind", "base", "--seed", "-3")
    assert out.returncode == 2
    assert "seed" in out.stderr


# I.9, I.10, formats.md Record
def test_table_replay_prints_position_columns_and_verdict() -> None:
    """cz table replay --json RECORD prints the final position, the columns and the verdict
    (golden)."""
    out = cz("table", "replay", "--json", str(DATA / "market-32.record.json"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads((DATA / "market-32.expected.json").read_text())


# I.5, I.9
def test_table_replay_reads_stdin() -> None:
    """cz table replay --json - reads the record from standard input; an open table has no
    verdict."""
    record = {"format": "cz-table-record/1", "deal": {"table": "base", "seed": 1}, "actions": []}
    out = cz("table", "replay", "--json", "-", stdin=json.dumps(record))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verdict"] is None
    assert result["columns"][0] == {"substance": 3, "form": 0, "holdings": 0}


# I.7 COLLECT
def test_illegal_action_exits_2_naming_action_turn_and_rule(tmp_path: Path) -> None:
    """An illegal action: exit 2, one line on stderr naming the action, the turn and the rule."""
    record = {
        "format": "cz-table-record/1",
        "deal": {"table": "deal", "hands": [["Tally", "Pairing"], ["Escrow"]]},
        "actions": ["build Tally", "build Escrow", "collect"],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    out = cz("table", "replay", str(path))
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1
    assert "'collect'" in lines[0]
    assert "turn 3" in lines[0]
    assert "I.7 COLLECT" in lines[0]


# formats.md Record
def test_unreadable_records_exit_2_with_one_line(tmp_path: Path) -> None:
    """Not JSON (or nested past the parser, or a key twice), not a record, a missing file, an
    unknown action: one line each, exit 2, never a traceback."""
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{nope")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    twice = tmp_path / "twice.json"
    twice.write_text('{"format": "cz-table-record/1", "format": "cz-table-record/1"}')
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "cz-table-record/1", "deal": {"table": "base"}}))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(
        json.dumps(
            {
                "format": "cz-table-record/1",
                "deal": {"table": "base", "seed": 0},
                "actions": ["fly"],
            }
        )
    )
    for path, needle in (
        (garbage, "not valid JSON"),
        (deep, "not valid JSON"),
        (twice, "repeats the key"),
        (wrong, "not a table record"),
        (tmp_path / "missing.json", "cannot read"),
        (unknown, "turn 1"),
    ):
        out = cz("table", "replay", str(path))
        assert out.returncode == 2
        assert len(out.stderr.splitlines()) == 1
        assert needle in out.stderr


# I.9, formats.md Record
def test_table_replay_draws_every_move_and_the_verdict() -> None:
    """Without a terminal (or with --all) cz table replay draws the dealt board, then each move
    by name and the board after it, as cz play draws it; at the close both seats' columns, who
    takes each and the rule of the verdict (docs/rules.md I.9)."""
    path = DATA / "base-18.record.json"
    actions = json.loads(path.read_text())["actions"]
    for extra in ((), ("--all",)):
        out = cz("table", "replay", *extra, str(path))
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        moves = [line for line in lines if line.startswith("move ")]
        assert [m.split(": ", 2)[2] for m in moves] == actions
        assert moves[0] == f"move 1: first seat: {actions[0]}"
        assert sum("── base table · turn" in line for line in lines) == len(actions) + 1
        assert sum("chain:" in line for line in lines) == 2 * (len(actions) + 1)
        tail = [" ".join(line.split()) for line in lines[-6:]]
        assert tail[0] == "the columns at the close (docs/rules.md I.9):"
        assert tail[2:4] == ["first seat 21 2 0", "second seat 10 1 1"]
        tail = "\n".join(tail)
        assert "first seat wins the table: two columns of three to one" in tail


# I.9, I.10: the worked table of docs/rules.md ends in a Balance
def test_table_replay_explains_a_balance(tmp_path: Path) -> None:
    """The worked table of docs/rules.md replayed: one column each and Form level, so the
    verdict line names the Balance and why (neither side takes two columns, I.9, I.10)."""
    guide = (Path(__file__).parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    worked = guide[guide.index("## A worked table") :]
    block = worked[worked.index("```json\n") + 8 :]
    path = tmp_path / "worked.json"
    path.write_text(block[: block.index("```")], encoding="utf-8")
    out = cz("table", "replay", "--all", str(path))
    assert out.returncode == 0, out.stderr
    assert (
        "Substance to second seat (25 to 16); Form level (1 to 1); Holdings to first seat (1 to 0)"
    ) in out.stdout
    assert (
        "a Balance: columns taken first seat 1, second seat 1; neither takes two, so the "
        "table is Balanced, its own verdict (docs/rules.md I.9, I.10)"
    ) in out.stdout


# formats.md Record
def test_table_replay_steps_on_a_terminal_and_q_stops(tmp_path: Path) -> None:
    """On a terminal cz table replay waits for Enter before each move and q stops it: two
    Enters show two moves and their boards, then q ends the replay (exit 0)."""
    env = {**os.environ, "CZ_HOME": str(tmp_path), "NO_COLOR": "1"}
    prompt = "Enter for the next move, q to stop: "
    status, shown = on_terminal(
        ["table", "replay", str(DATA / "base-18.record.json")],
        env,
        [(prompt, ""), (prompt, ""), (prompt, "q")],
    )
    assert status == 0, shown
    assert shown.count(prompt) == 3
    assert "move 2: " in shown
    assert "move 3: " not in shown
    assert shown.count("── base table · turn") == 3


# formats.md Record
def test_table_replay_without_a_record_takes_the_latest(tmp_path: Path) -> None:
    """cz table replay with no RECORD replays the latest table kept in CZ_HOME/tables/, and
    with none kept says so in one line, exit 2."""
    env = {**os.environ, "CZ_HOME": str(tmp_path)}
    none = run_cz(("table", "replay"), env=env)
    assert none.returncode == 2
    assert len(none.stderr.splitlines()) == 1
    assert "no RECORD named" in none.stderr
    tables = tmp_path / "tables"
    tables.mkdir()
    record = json.loads((DATA / "base-18.record.json").read_text())
    (tables / "20260101T000000.000000Z-clerk-1-1.json").write_text(
        json.dumps({**record, "actions": record["actions"][:2]})
    )
    (tables / "20260102T000000.000000Z-clerk-1-2.json").write_text(json.dumps(record))
    out = run_cz(("table", "replay", "--json"), env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verdict"] == ["win", "loss"]


def test_usage_errors_are_one_line_with_status_2() -> None:
    """A missing argument, an unknown command or a missing charter option is one line on
    stderr naming where --help is, exit 2, at every level of the command tree. Run as a real
    process: the console script's exit status (a subprocess smoke test)."""
    for args in (("table", "new"), ("bogus",), ("charter", "validate")):
        result = process(*args)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert "--help" in lines[0]
