"""Smoke: whole random tables play to the close with the strokes conserved."""

from __future__ import annotations

import random

import pytest

from game.window import new_base_table, new_market_table


# I.2, I.6, E-01
@pytest.mark.parametrize("convene", [new_base_table, new_market_table])
def test_random_tables_close_with_thirty_strokes(convene) -> None:
    """I.2, I.6: random play closes every table at Seal 12 and never makes or destroys a stroke."""
    rng = random.Random(0)
    for seed in range(50):
        state = convene(seed)
        while not state.is_over:
            state.apply(rng.choice(state.legal_actions()))
            assert state.plenum + sum(state.hoards) == 30
        assert state.seal == 12
