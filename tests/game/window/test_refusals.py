"""Refusals: any action not legal is refused with a rule, the position untouched."""

from __future__ import annotations

import random

import pytest

from game.window import IllegalActionError, from_deal
from game.window.actions import encode
from ledger.catalog import PLAYING


# I.6, I.7
def test_arbitrary_integers_are_refused_cleanly() -> None:
    """I.6, I.7: every integer that is not a legal action raises IllegalActionError, citing a
    section, and leaves the position exactly as it was."""
    rng = random.Random(7)
    for seed in range(30):
        titles = random.Random(seed).sample([c.name for c in PLAYING], 16)
        state = from_deal([titles[:5], titles[5:10]], titles[10:13], titles[13:])
        while not state.is_over:
            legal = state.legal_actions()
            for _ in range(15):
                n = len(state.titles)
                action = encode(rng.randrange(24), rng.randrange(n + 2), rng.randrange(n + 2))
                if action in legal:
                    continue
                before = state.clone()
                with pytest.raises(IllegalActionError) as refusal:
                    state.apply(action)
                assert "(" in refusal.value.rule  # every refusal names its section or ruling
                assert refusal.value.turn == state.turn + 1
                assert state == before
            state.apply(rng.choice(legal))
