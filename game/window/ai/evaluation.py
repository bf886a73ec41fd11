"""The search's judgement of an unfinished table, from one seat's side.

A closed table is worth exactly its verdict (:data:`WIN_VALUE`, 0 for a Balance, ``-WIN_VALUE``).
An open one is scored by the verdict it would have if it closed now (the engine reckons any
position, I.9), weighted up as the Seal nears twelve, plus each column's margin squashed so that
no margin outweighs a column. The columns are compared one against one, never added (I.9): the
margins only break ties between positions whose projected verdicts agree.
"""

from __future__ import annotations

from game.window.scoring import Verdict, reckon
from game.window.state import SEAL_CLOSE, State

WIN_VALUE = 10_000
_VERDICT_SIGN = {Verdict.WIN: 1, Verdict.LOSS: -1, Verdict.BALANCE: 0}
_PROJECTED = 1_500
_PROJECTED_PER_STEP = 250
_COLUMN = 600
_SUBSTANCE_SCALE = 6.0
_HAND_WEIGHT = 0.5


def terminal_value(state: State, seat: int) -> int:
    """The exact worth of a closed table for ``seat``."""
    return _VERDICT_SIGN[state.verdict(seat)] * WIN_VALUE


def evaluate(state: State, seat: int) -> int:
    """The heuristic worth of an open table for ``seat``, strictly inside ±WIN_VALUE."""
    reckoning = reckon(state)
    mine, theirs = reckoning.columns[seat], reckoning.columns[1 - seat]
    projected = _VERDICT_SIGN[reckoning.verdicts[seat]]
    costs = state.costs
    hand_mine = sum(costs[c] for c in state.hands[seat])
    hand_theirs = sum(costs[c] for c in state.hands[1 - seat])
    substance = (mine[0] - theirs[0]) + _HAND_WEIGHT * (hand_mine - hand_theirs)
    margins = (
        _squash(substance / _SUBSTANCE_SCALE)
        + _squash(mine[1] - theirs[1])
        + _squash(mine[2] - theirs[2])
    )
    weight = _PROJECTED + _PROJECTED_PER_STEP * min(state.seal, SEAL_CLOSE)
    return int(projected * weight + _COLUMN * margins)


def _squash(x: float) -> float:
    """A margin mapped into (-1, 1): every extra point matters, less and less."""
    return x / (1.0 + abs(x))
