"""The one search (IV.6): legal moves only, within its node budget, seeded, chance nodes for the
No-Go drill, and perfect play wherever it solves the table (base tables)."""

from __future__ import annotations

import random

from game.window import Verdict, new_base_table, new_market_table
from game.window import actions as A
from game.window.ai.evaluation import WIN_VALUE
from game.window.ai.roster import CHAIR_STRENGTH
from game.window.ai.search import Search
from game.window.state import CHANCE, State

_SIGN = {Verdict.WIN: 1, Verdict.LOSS: -1, Verdict.BALANCE: 0}
CHAIR_XII_BUDGET = CHAIR_STRENGTH[12].node_budget


def _minimax(state: State, memo: dict) -> int:
    """Plain minimax without pruning or heuristics (seat 0's side): the exact game value."""
    if state.is_over:
        return _SIGN[state.verdict(0)]
    key = state.key()
    if key not in memo:
        values = []
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            values.append(_minimax(child, memo))
        memo[key] = max(values) if state.current_player == 0 else min(values)
    return memo[key]


def _midgame_base(seed: int, seal: int) -> State:
    """A base table walked at random (Accelerate avoided) until the Seal shows ``seal``."""
    state = new_base_table(seed)
    rng = random.Random(seed)
    while state.seal < seal and not state.is_over:
        legal = state.legal_actions()
        state.apply(rng.choice([a for a in legal if a != A.ACCELERATE] or list(legal)))
    return state


def test_solved_base_positions_are_played_perfectly() -> None:
    """IV.6: where the table can be solved within the budget (base tables), the
    search's move keeps the exact game value that unpruned minimax computes, and says it is
    exact; its value is the verdict's worth."""
    checked = 0
    for seed in range(40):
        state = _midgame_base(seed, seal=4)
        if state.is_over or state.current_player == CHANCE:
            continue
        memo: dict = {}
        seat = state.current_player
        truth = _minimax(state, memo) * (1 if seat == 0 else -1)
        result = Search(CHAIR_XII_BUDGET, (0.5, 0.5)).choose(state)
        if len(state.legal_actions()) == 1:
            continue
        assert result.exact
        assert result.value == truth * WIN_VALUE
        child = state.clone()
        child.apply(result.action)
        assert _minimax(child, memo) * (1 if seat == 0 else -1) == truth
        checked += 1
    assert checked >= 20


def test_base_opening_is_solved_within_chair_twelve_budget() -> None:
    """Chair XII's budget solves base tables outright at the first decision for these deals."""
    for seed in (0, 2, 3, 4):
        result = Search(CHAIR_XII_BUDGET, (0.5, 0.5)).choose(new_base_table(seed))
        assert result.exact
        assert abs(result.value) in (0, WIN_VALUE)


def test_never_more_nodes_than_the_budget() -> None:
    """Strength is set by a node budget, never by the clock: the count never passes it."""
    for budget in (1, 7, 50, 400):
        search = Search(budget, (0.5, 0.5))
        search.choose(new_market_table(budget))
        assert search.nodes <= budget


def test_same_position_same_budget_same_move() -> None:
    """No clock, no hidden randomness: the same position and budget give the same choice."""
    for seed in range(5):
        a = Search(2_000, (0.6, 0.4)).choose(new_market_table(seed))
        b = Search(2_000, (0.6, 0.4)).choose(new_market_table(seed))
        assert a == b


def _drill_position() -> State:
    """A market deal where the first seat builds No-Go and the second a card worth challenging."""
    from game.window import from_deal

    state = from_deal(
        [["No-Go", "Tally", "Reflection"], ["Exchange", "Keeping", "Balance"]], ["Turn"]
    )
    for text_title in ("No-Go", "Exchange"):
        state.apply(A.encode(A.BUILD, state.card_of(text_title)))
    return state


def test_drill_is_a_chance_node_weighted_by_competence() -> None:
    """IV.4, R-02: the search treats the drill as chance at the challenger's competence; a sure
    drill (1.0) makes challenging the Exchange at least as good as a hopeless one (0.0)."""
    state = _drill_position()
    nogo = A.encode(A.NOGO, state.card_of("Exchange"), state.card_of("No-Go"))
    assert nogo in state.legal_actions()
    after = state.clone()
    after.apply(nogo)
    assert after.current_player == CHANCE
    values = []
    for competence in (0.0, 1.0):
        search = Search(20_000, (competence, 0.5))
        search.seat = 0
        search.limit = 20_000
        value, _ = search._value(after.clone(), 3, -(1 << 30), 1 << 30)
        values.append(value)
    assert values[1] > values[0]
