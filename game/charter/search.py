"""The charter AI: flat Monte Carlo search over the engine's own State, budgeted in playouts.

For each legal action the AI plays ``budget // actions`` seeded random continuations of at most
``horizon`` actions and scores where they end: a finished game by its returns, an unfinished one
by :func:`evaluate`. The AI plays fair: every continuation starts from a determinization of what
its seat cannot see — each other player's hand and deck dealt again at random from the cards
they hold between them (sizes kept), its own deck's order shuffled, the game's generator
reseeded — drawn from the cards' ids in order, so the real hidden cards and their order never
reach the decision (:func:`determinize`). ``fair=False`` keeps the old AI that searched the real
hands (for comparison: ``bench/charter.py``). The budget is counted in playouts, never by the
clock, so a seed and a position give the same move on any machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.charter.board import integrity, strength
from game.charter.cards import LOCATION
from game.charter.state import DECK, HAND, State

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


def determinize(s: State, seat: int, rng: random.Random) -> State:
    """A copy of ``s`` as ``seat`` might believe it: what ``seat`` cannot see — the other
    players' hands and every deck's order — dealt again from ``rng``. Each other player's hand
    and deck are one pool of their cards, sorted by id and shuffled, the hand taking as many as
    it holds; ``seat``'s own deck is sorted and shuffled. The result depends on the hidden cards
    only through the set each player holds out of sight, never on which are where."""
    d = s.clone()
    place = d.place
    for p in range(d.n):
        deck = d.decks[p]
        if p == seat:
            deck.sort()
            rng.shuffle(deck)
            continue
        hand = d.hands[p]
        unseen = sorted(hand + deck)
        rng.shuffle(unseen)
        k = len(hand)
        hand[:] = unseen[:k]
        deck[:] = unseen[k:]
        for c in hand:
            place[c] = HAND
        for c in deck:
            place[c] = DECK
    d.rng = rng.getrandbits(64)
    d._legal = None
    return d


@dataclass(frozen=True, slots=True)
class Choice:
    action: int
    value: float
    playouts: int


class CharterAI:
    """One AI for one seat of one game: seeded, so the same game and seed replay the same."""

    def __init__(
        self, seed: int | str, budget: int = 96, horizon: int = 60, *, fair: bool = True
    ) -> None:
        if budget < 1 or horizon < 1:
            raise ValueError("a budget and a horizon are at least one")
        self.rng = random.Random(f"charter-ai:{seed}")
        self.budget = budget
        self.horizon = horizon
        self.fair = fair

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
                # Fair: a determinization of what the seat cannot see; else the real hands.
                child = determinize(state, seat, self.rng) if self.fair else state.clone()
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
        if not self.fair:
            s.rng = rng.getrandbits(64)
            for deck in s.decks:
                s.shuffle(deck)
        for _ in range(self.horizon):
            if s.is_over:
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        return evaluate(s, seat)
