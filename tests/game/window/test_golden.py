"""Golden playthroughs: whole seeded tables replayed from their record files, compared exactly.

Each ``tests/data/window/NAME.record.json`` is a table record; ``NAME.expected.json`` is what
``cz table replay`` printed for it when it was recorded (final position, columns, verdict).
Any change to the rules engine that moves one of these tables shows up as a diff here; a change
the book requires is re-recorded deliberately (``CZ_RECORD_GOLDEN=1``), never silently.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from game.window import (
    format_action,
    from_deal,
    new_base_table,
    new_market_table,
    parse_action,
    parse_record,
    reckon,
    replay,
    to_json,
)
from game.window.records import convene
from ledger.catalog import PLAYING

DATA = Path(__file__).parents[2] / "data" / "window"
GOLDEN = ("base-18", "market-32", "portfolio-269")


def outcome(record: dict) -> dict:
    """What ``cz table replay`` prints for ``record``."""
    state = replay(parse_record(record))
    r = reckon(state)
    return {
        "position": to_json(state),
        "columns": [{"substance": s, "form": f, "holdings": h} for s, f, h in r.columns],
        "verdict": [v.value for v in r.verdicts] if state.is_over else None,
    }


def random_record(name: str) -> dict:
    """The record of a seeded random playthrough (how the golden files were made)."""
    kind, seed = name.split("-")
    rng = random.Random(int(seed))
    if kind == "portfolio":
        titles = random.Random(int(seed)).sample([c.name for c in PLAYING], 16)
        deal = {
            "table": "deal",
            "hands": [titles[:5], titles[5:10]],
            "market": titles[10:13],
            "aside": titles[13:],
        }
        state = from_deal(deal["hands"], deal["market"], deal["aside"])
    else:
        deal = {"table": kind, "seed": int(seed)}
        state = (new_base_table if kind == "base" else new_market_table)(int(seed))
    actions = []
    while not state.is_over:
        action = rng.choice(state.legal_actions())
        actions.append(format_action(state, action))
        state.apply(action)
    return {"format": "cz-table-record/1", "deal": deal, "actions": actions}


# docs/architecture.md §6 (a table is a record), I.9, I.10
@pytest.mark.parametrize("name", GOLDEN)
def test_golden_playthrough_replays_to_its_recorded_end(name: str) -> None:
    """A whole recorded table replays to exactly the recorded position, columns and verdict."""
    record_path, expected_path = DATA / f"{name}.record.json", DATA / f"{name}.expected.json"
    if os.environ.get("CZ_RECORD_GOLDEN"):
        record = random_record(name)
        record_path.write_text(json.dumps(record, indent=1) + "\n")
        expected_path.write_text(json.dumps(outcome(record), indent=1) + "\n")
    record = json.loads(record_path.read_text())
    assert outcome(record) == json.loads(expected_path.read_text())
    assert record["actions"][-1]  # a whole table: it ends at the close
    assert outcome(record)["verdict"] is not None


def playthrough(record: dict) -> str:
    """One line per action: the turn, the action, then the Seal, the strokes and both chains."""
    state = convene(parse_record(record).deal)
    lines = []
    for text in record["actions"]:
        who = state.current_player
        state.apply(parse_action(state, text))
        chains = " | ".join(
            " ".join(("" if state.up[c] else "~") + state.title_of(c) for c in chain) or "-"
            for chain in state.chains
        )
        lines.append(
            f"{state.turn:>3} seat {who:>2}  {text:<28} seal {state.seal:>2}  "
            f"plenum {state.plenum:>2} hoards {state.hoards[0]:>2} {state.hoards[1]:>2}  {chains}"
        )
    return "\n".join(lines) + "\n"


# docs/architecture.md §6, I.6, I.7
@pytest.mark.parametrize("name", GOLDEN)
def test_golden_playthrough_line_by_line(name: str) -> None:
    """Every intermediate position of a golden table, diffed line by line (OpenSpiel-style)."""
    path = DATA / f"{name}.playthrough.txt"
    record = json.loads((DATA / f"{name}.record.json").read_text())
    if os.environ.get("CZ_RECORD_GOLDEN"):
        path.write_text(playthrough(record))
    assert playthrough(record).splitlines() == path.read_text().splitlines()


#
@pytest.mark.parametrize("name", GOLDEN)
def test_golden_record_is_the_seeded_playthrough(name: str) -> None:
    """The stored record is what the seeded random policy plays (convening is reproducible)."""
    assert json.loads((DATA / f"{name}.record.json").read_text()) == random_record(name)
