"""Books I, II, III and VI read again, clause by clause, as scenarios: a second pair of eyes.

Each test builds a position through the engine's public API only (a deal with ``from_deal``
or a hand-written cz-position/1 read by ``from_json``), plays actions in the notation of
docs/formats.md, and compares the position, the columns, the verdict, the set of legal
actions or the refusal with the book's own words, worked out by hand from the text (never
read back from the engine). The scenarios and their expected results are worked out apart
from the other window tests, so the two readings do not share a mistake; the mechanical
helpers (write a position document, play notation) hold no reading and are shared with them
(tests/game/window/tables.py, tests/game/window/crosscheck.py). Where the engine and the
book part ways, the reading chosen is in docs/rulings.md.

This module holds what the scenarios (test_book_crosscheck*.py) share: positions written by
hand, the closed table, hands and spoils read back, a refusal that moves nothing, the
verdicts, and I.8's every-certificate-somewhere. Mechanical only: no reading of the book
lives here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from game.window import (
    IllegalActionError,
    State,
    Verdict,
    parse_action,
    to_json,
)
from tests.game.window.tables import setup

BASE_SIX = ("Tally", "Pairing", "Separation", "Escrow", "Reflection", "Exchange")
WIN, LOSS, BALANCE = Verdict.WIN, Verdict.LOSS, Verdict.BALANCE


def position(
    mine: Sequence[str] = (),
    theirs: Sequence[str] = (),
    *,
    last: tuple[str | None, str | None] = (None, None),
    **kw: Any,
) -> State:
    """A hand-written cz-position/1: ``mine`` is seat 0's chain, ``theirs`` seat 1's.

    Chains run from the axis outward; ``~`` marks a folded card. Seal 12 writes a closed table.
    """
    return setup((mine, theirs), last_action=last, **kw)


def closed(mine: Sequence[str] = (), theirs: Sequence[str] = (), **kw: Any) -> State:
    """A table the Seal has closed (twelve), ready to be reckoned."""
    return position(mine, theirs, seal=12, **kw)


def hand(state: State, seat: int) -> list[str]:
    return to_json(state)["hands"][seat]


def spoils(state: State, seat: int) -> list[str]:
    return to_json(state)["spoils"][seat]


def refused(state: State, text: str, match: str | None = None) -> None:
    """``text`` is refused with :class:`IllegalActionError` and nothing moves."""
    before = to_json(state)
    with pytest.raises(IllegalActionError, match=match):
        state.apply(parse_action(state, text))
    assert to_json(state) == before


def verdicts(state: State) -> tuple[Verdict, Verdict]:
    return state.verdict(0), state.verdict(1)


def everything_somewhere(state: State) -> None:
    """I.8: every certificate is in exactly one place; thirty strokes in the world."""
    j = to_json(state)
    places = [
        *(t for h in j["hands"] for t in h),
        *(c["card"] for ch in j["chains"] for c in ch),
        *(t for sp in j["spoils"] for t in sp),
        *j["market"],
        *j["aside"],
        *([j["hostage"]["card"]] if j["hostage"] else []),
    ]
    assert sorted(places) == sorted(j["cards"])
    assert sum(j["hoards"]) + j["plenum"] == 30
