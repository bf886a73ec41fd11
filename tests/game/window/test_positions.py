"""Positions as JSON (docs/formats.md): exact round trips and refusal of inconsistent input."""

from __future__ import annotations

import copy
import json

import pytest

from game.window import from_json, new_market_table, parse_action, to_json
from ledger.errors import SchemaError
from tests.game.window.tables import play, setup


# formats.md Position, I.7 CUT, Book II TURN, IV.4
def test_pending_decisions_round_trip() -> None:
    """formats.md: a position inside an action (defender, Turn order, drill) round-trips."""
    cut = play(setup(chains=(["Separation"], ["Tally", "Fork", "Pairing", "Escrow"])), "cut 1")
    turn = play(
        setup(chains=(["Turn"], ["Tally", "Pairing", "Escrow"])), "turn theirs", "place Escrow"
    )
    drill = play(setup(chains=(["No-Go"], ["Tally"])), "nogo Tally")
    hold = play(setup(chains=(["Escrow"], ["Refusal", "Tally"])), "hold Tally")
    for state in (cut, turn, drill, hold):
        assert state.pending is not None
        position = json.loads(json.dumps(to_json(state)))
        assert from_json(position) == state
        assert to_json(from_json(position)) == position


# formats.md Position
def test_replayed_position_continues_identically() -> None:
    """A position read back from JSON plays on exactly as the original."""
    a = new_market_table(9)
    play(a, "accelerate")
    b = from_json(to_json(a))
    for text in ("accelerate", "build " + a.title_of(a.hands[0][0])):
        a.apply(parse_action(a, text))
        b.apply(parse_action(b, text))
    assert a == b


def _mutated(change) -> dict:
    position = to_json(setup(chains=(["Escrow"], ["Tally", "Pairing"]), hoards=(3, 0)))
    position = copy.deepcopy(position)
    change(position)
    return position


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(plenum=28), "sum to 30"),
        (lambda p: p.update(seal=13), "Seal"),
        (lambda p: p.update(closed=True), "Seal"),
        (lambda p: p["hands"][0].append("Tally"), "two places"),
        (lambda p: p["cards"].append("Torsor"), "lies nowhere"),
        (lambda p: p["cards"].append("Tally"), "twice"),
        (lambda p: p.update(format="cz-position/2"), "format"),
        (lambda p: p.update(extra=1), "extra"),
        (lambda p: p.update(to_move=1), "parity"),
        (lambda p: p.update(ransoms=[3, 0]), "twice per game"),
        (lambda p: p.update(last_action=["dance", None]), "not an action kind"),
        (lambda p: p.update(hoards=[3]), "hoards"),
        (lambda p: p["chains"][1].append({"card": "Tally", "face": "sideways"}), "face"),
        (lambda p: p.update(hostage={"card": "Exchange", "owner": 0}), "Exchange"),
        (lambda p: p.update(pending={"step": "drill", "actor": 0, "card": "Escrow"}), "pending"),
    ],
)
# formats.md Position, I.2, I.1, I.7
def test_inconsistent_positions_are_refused(change, message: str) -> None:
    """from_json reads untrusted input: every inconsistency is one SchemaError."""
    with pytest.raises(SchemaError, match=message):
        from_json(_mutated(change))


# I.7 HOLD, R-04
def test_hostage_must_sit_under_escrow_opposite_its_owner() -> None:
    """I.7 HOLD: a hostage exists only under an Escrow in force held by the other seat."""
    position = to_json(setup(chains=(["Escrow"], ["Tally"])))
    position["cards"].append("Pairing")
    position["hostage"] = {"card": "Pairing", "owner": 0}
    with pytest.raises(SchemaError, match="hostage"):
        from_json(position)
