"""A table being played in the browser and the drills shown: the position, the venue's AI, the
moves so far, and the time each drill's pattern was first served (clients/web/tables.py plays
them; the launch's state keeps them)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from clients.cz_table import Move
from game.window import actions as A
from game.window import format_action
from game.window.ai.player import AIPlayer
from game.window.campaign import Venue
from game.window.drill import DrillOutcome, Pattern, generate_pattern
from game.window.state import CHANCE, State
from game.window.tables import Table

#: The player sits first at every venue (M-12), as at ``cz play``.
YOU = 0


@dataclass(slots=True)
class Drill:
    """A drill shown: its pattern and when its page was first served (monotonic seconds)."""

    pattern: Pattern
    shown_at: float | None = None

    def clock(self) -> float:
        if self.shown_at is None:
            self.shown_at = time.monotonic()
        return self.shown_at


@dataclass(slots=True)
class Sitting:
    """A table being played here: the venue, the deal, the position, the moves so far."""

    venue: Venue
    seed: int
    table: Table
    state: State
    opponent: AIPlayer
    actions: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    #: How many moves the player had seen at their last click (the replies since are new).
    seen: int = 0
    last: Move | None = None
    drill: Drill | None = None
    drills: int = 0
    #: At the close: what was recorded and paid, or why it could not be.
    closed: dict[str, Any] | None = None

    @property
    def seats(self) -> tuple[str, str]:
        return ("you", self.venue.name) if YOU == 0 else (self.venue.name, "you")

    def take(self, action: int, actor: str) -> None:
        text = format_action(self.state, action)
        before = self.state.clone()
        self.state.apply(action)
        self.actions.append(text)
        self.moves.append((actor, text))
        self.last = Move(before, action, actor)

    def advance(self) -> None:
        """The opponent's moves (and its drills) until the player must decide, a drill of the
        player's is set, or the table closes."""
        while not self.state.is_over:
            player = self.state.current_player
            if player == CHANCE:
                assert self.state.pending is not None  # a chance node is a pending drill
                if self.state.pending[1] == YOU:
                    if self.drill is None:
                        self.drills += 1
                        pattern = generate_pattern(f"play:{self.seed}:drill:{self.drills}")
                        self.drill = Drill(pattern)
                    return
                success = self.opponent.answer_drill() is DrillOutcome.SUCCESS
                self.take(A.encode(A.DRILL, 1 if success else 0), "the drill")
            elif player == YOU:
                return
            else:
                self.take(self.opponent.decide(self.state), self.venue.name)
