"""An AI at the table: the one search, an error rate, and a listed No-Go drill competence.

Every decision first rolls the AI's own seeded die: with probability ``error_rate`` it takes a
legal action drawn uniformly (a slip), otherwise the search's choice within ``node_budget``
nodes. Both come from the same legal actions every player has: no rule exception, no clock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.window.ai.search import Search, SearchResult
from game.window.drill import DrillOutcome, competence_draw
from game.window.state import State

#: What an AI assumes about a human's drill when it searches (a human answers for real).
HUMAN_DRILL_MODEL = 0.75


@dataclass(frozen=True, slots=True)
class Strength:
    """Everything that makes one AI stronger than another (IV.6)."""

    node_budget: int
    error_rate: float
    drill_competence: float

    def __post_init__(self) -> None:
        if self.node_budget < 1:
            raise ValueError("a node budget is at least one node")
        if not (0.0 <= self.error_rate <= 1.0 and 0.0 <= self.drill_competence <= 1.0):
            raise ValueError("error rate and drill competence are probabilities")


class AIPlayer:
    """One AI for one table: seeded, so the same table and seed replay the same decisions.

    ``opponent_competence`` is the drill success rate it assumes for the other seat: the other
    AI's listed competence, or :data:`HUMAN_DRILL_MODEL` against a person.
    """

    def __init__(
        self, strength: Strength, seed: int | str, opponent_competence: float = HUMAN_DRILL_MODEL
    ) -> None:
        self.strength = strength
        self.opponent_competence = opponent_competence
        self.rng = random.Random(f"ai-decisions:{seed}")
        self.drill_seed = f"ai-drill:{seed}"
        self.drills = 0
        self.search = Search(strength.node_budget, (0.0, 0.0))
        self.last: SearchResult | None = None

    def decide(self, state: State) -> int:
        """The action this AI takes for ``state.current_player`` (which must be a seat)."""
        seat = state.current_player
        legal = state.legal_actions()
        slip = self.rng.random() < self.strength.error_rate
        if slip:
            self.last = None
            return self.slip(state, legal)
        own, other = self.strength.drill_competence, self.opponent_competence
        self.search.competence = (own, other) if seat == 0 else (other, own)
        self.last = self.search.choose(state)
        return self.last.action

    def slip(self, state: State, legal: tuple[int, ...]) -> int:
        """The action taken on a slip: uniform over the legal actions."""
        return self.rng.choice(legal)

    def answer_drill(self) -> DrillOutcome:
        """This AI's answer to a No-Go drill at its listed competence (IV.4, R-02)."""
        self.drills += 1
        return competence_draw(self.strength.drill_competence, f"{self.drill_seed}:{self.drills}")
