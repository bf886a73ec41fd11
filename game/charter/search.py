"""The charter AI: flat Monte Carlo search over the engine's own State, budgeted in playouts.

For each legal action the AI plays ``budget // actions`` seeded random continuations of at most
``horizon`` actions and scores where they end: a finished game by its returns, an unfinished one
by :func:`evaluate`. Decks are reshuffled in every continuation (the AI does not know the order
of anyone's deck; it does see the hands — the sample engine keeps no hidden information). The
budget is counted in playouts, never by the clock, so a seed and a position give the same move
on any machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.charter.board import integrity, strength
from game.charter.cards import LOCATION
from game.charter.state import State

WIN = 1000.0


def evaluate(s: State, seat: int) -> float:
    """A position's worth for ``seat``: its board, locations and hand against the others'."""
    if s.is_over:
        return WIN * s.returns()[seat]
    score = [0.0] * s.n
    defs, ctrl = s.defs, s.ctrl
    for c in s.board:
        d = defs[c]
        worth = 1.0 + strength(s, c) + max(0, integrity(s, c) - s.damage[c]) * 0.5
        if d.type == LOCATION:
            worth += 4.0  # a location keeps its controller from being exposed
        score[ctrl[c]] += worth
    for p in range(s.n):
        score[p] += 0.5 * len(s.hands[p]) if s.alive[p] else -WIN / 2
    others = [score[p] for p in range(s.n) if p != seat]
    return score[seat] - max(others)


@dataclass(frozen=True, slots=True)
class Choice:
    action: int
    value: float
    playouts: int


class CharterAI:
    """One AI for one seat of one game: seeded, so the same game and seed replay the same."""

    def __init__(self, seed: int | str, budget: int = 96, horizon: int = 60) -> None:
        if budget < 1 or horizon < 1:
            raise ValueError("a budget and a horizon are at least one")
        self.rng = random.Random(f"charter-ai:{seed}")
        self.budget = budget
        self.horizon = horizon

    def choose(self, state: State) -> Choice:
        """The best action found for ``state.current_player``."""
        seat = state.current_player
        if seat < 0:
            raise ValueError("the AI decides for a seat, not for a finished game")
        legal = state.legal_actions()
        if len(legal) == 1:
            return Choice(legal[0], 0.0, 0)
        per = max(1, self.budget // len(legal))
        best, best_value = legal[0], float("-inf")
        for action in legal:
            total = 0.0
            for _ in range(per):
                child = state.clone()
                child.apply(action)
                total += self._playout(child, seat)
            value = total / per
            if value > best_value:
                best, best_value = action, value
        return Choice(best, best_value, per * len(legal))

    def decide(self, state: State) -> int:
        return self.choose(state).action

    def _playout(self, s: State, seat: int) -> float:
        rng = self.rng
        s.rng = rng.getrandbits(64)
        for deck in s.decks:
            s.shuffle(deck)
        for _ in range(self.horizon):
            if s.is_over:
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        return evaluate(s, seat)
