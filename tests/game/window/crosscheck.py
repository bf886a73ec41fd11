"""What the book's scenarios (test_book_crosscheck_*.py) share: positions written by hand,
the closed table, hands and spoils read back, a refusal that moves nothing, the verdicts, and
I.8's every-certificate-somewhere. Mechanical only: no reading of the book lives here."""

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
