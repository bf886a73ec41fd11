"""A human at a table in the terminal: the seat ``cz play`` (offline) and ``cz play --league``
/ ``cz duel`` (witnessed) give the player — decisions read by number or notation, the teaching
words (``help``, ``rules``, ``card``, ``why``), the No-Go drill's grid (IV.4) — and the few
constants those commands share."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from clients.cz_board import Screen, draw
from clients.cz_table import HELP, RULES, Move, card_lines, why_lines
from game.window import format_action, parse_action, to_json
from game.window.campaign import ROMAN
from game.window.drill import (
    SHOW_SECONDS,
    TIME_LIMIT_SECONDS,
    DrillOutcome,
    Pattern,
    generate_pattern,
    judge,
    parse_pattern,
)
from game.window.errors import IllegalActionError, NotationError
from game.window.state import State
from game.window.tables import Table
from ledger.errors import SchemaError

#: The Chair that plays the player's seat under ``--auto`` unless another is named.
AUTO_CHAIR = 12
#: The longest line read from the player at the table.
MAX_LINE = 256
#: Where finished tables' records are kept, inside the wallet's home.
TABLES_DIR = "tables"
QUIT = ("q", "quit", "leave")


def chair_number(text: str) -> int:
    """``VI``, ``vi`` or ``6`` → 6."""
    upper = text.strip().upper()
    if upper in ROMAN[1:]:
        return ROMAN.index(upper)
    if upper.isdigit() and 1 <= int(upper) <= len(ROMAN) - 1:
        return int(upper)
    raise argparse.ArgumentTypeError(f"{text!r} is no Chair: I to XII (or 1 to 12)")


class Left(Exception):
    """The player left the table before its close."""


def read_line(screen: Screen, prompt: str) -> str:
    screen.out.write(prompt)
    screen.out.flush()
    line = sys.stdin.readline(MAX_LINE)
    if not sys.stdin.isatty():
        screen.say(line.rstrip("\n"))  # what a terminal would have echoed
    if not line:
        raise Left
    text = line.strip()
    if text.lower() in QUIT:
        raise Left
    return text


@dataclass(slots=True)
class Person:
    """The player at the terminal: decisions by number or notation, the drill for real."""

    screen: Screen
    table: Table
    you: int
    them: str
    drill_seed: str
    drills: int = 0
    #: The last move taken at the table (by either seat, or the drill), for ``why``.
    last: Move | None = None

    def teach(self, text: str) -> bool:
        """``help``/``?``, ``rules``, ``card NAME``, ``why``: answered, and True; else False."""
        word, _, rest = text.partition(" ")
        word = word.lower()
        if word in ("help", "?"):
            lines: Sequence[str] = HELP
        elif word == "rules":
            lines = RULES
        elif word == "card":
            lines = card_lines(rest) if rest.strip() else ["card NAME, e.g. card Tally"]
        elif word == "why":
            seats = ("you", self.them) if self.you == 0 else (self.them, "you")
            lines = why_lines(self.last, seats)
        else:
            return False
        for line in lines:
            self.screen.say(line)
        return True

    def decide(self, state: State) -> int:
        draw(self.screen, state, self.table, self.you, self.them)
        legal = state.legal_actions()
        pending = to_json(state)["pending"]
        if pending is not None:
            self.screen.say(f"a {pending['step']} waits on your decision:")
        for number, action in enumerate(legal, 1):
            self.screen.say(f"  {number:>3}. {format_action(state, action)}")
        while True:
            text = read_line(self.screen, "your action (number or notation; q leaves): ")
            if self.teach(text):
                continue
            if text.isdigit():
                if not 1 <= int(text) <= len(legal):
                    self.screen.say(f"choose a number from 1 to {len(legal)}")
                    continue
                action = legal[int(text) - 1]
            else:
                try:
                    action = parse_action(state, text)
                    state.clone().apply(action)
                except (NotationError, IllegalActionError) as exc:
                    self.screen.say(exc.diagnostics())
                    continue
            self.screen.say(f"you: {format_action(state, action)}")
            return action

    def answer_drill(self) -> DrillOutcome:
        """IV.4: the pattern shown for SHOW_SECONDS then hidden; the answer typed in time."""
        self.drills += 1
        pattern = generate_pattern(f"{self.drill_seed}:{self.drills}")
        screen = self.screen
        screen.say(f"No-Go drill: remember the lit cells; {TIME_LIMIT_SECONDS:g} s from now")
        rows = grid(screen, pattern)
        started = time.monotonic()
        for row in rows:
            screen.say(f"    {row}")
        time.sleep(SHOW_SECONDS)
        if screen.terminal:
            screen.out.write(f"\x1b[{len(rows)}F\x1b[J")  # up over the grid, erase it
        screen.say("    (hidden)")
        text = read_line(screen, "the pattern, three rows of 0/1 (e.g. 101/010/001): ")
        elapsed = time.monotonic() - started
        try:
            answer = parse_pattern(text)
        except SchemaError as exc:
            screen.say(f"not a pattern ({exc.diagnostics()}): the drill fails")
            return DrillOutcome.FAILURE
        outcome = judge(pattern, answer, elapsed)
        screen.say(
            f"drill {outcome.value} after {elapsed:.1f} s (the pattern was {pattern.notation()})"
        )
        return outcome


def grid(screen: Screen, pattern: Pattern) -> list[str]:
    lit, dark = screen.paint("■", "33;1"), "□"
    return [" ".join(lit if mark == "1" else dark for mark in row) for row in pattern.rows()]
