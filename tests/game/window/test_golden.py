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
    parse_record,
    reckon,
    replay,
    to_json,
)
from game.window.catalog import PLAYING

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


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_record_is_the_seeded_playthrough(name: str) -> None:
    """The stored record is what the seeded random policy plays (convening is reproducible)."""
    assert json.loads((DATA / f"{name}.record.json").read_text()) == random_record(name)
