"""The No-Go drill (IV.4, R-02).

When a human's No-Go challenge (or a copied one) resolves, the table sets a timed 3×3 pattern
drill: the pattern is shown, then hidden, and the challenger must reproduce it before the timer
closes. Success flips the challenged card; failure spends No-Go for nothing. Registrars and
Chairs answer at their listed competence instead: a seeded draw that succeeds with that
probability.

Everything here is pure. The client measures the elapsed time and hands it in; judging is a
function of (shown pattern, answer, elapsed seconds) alone, so a recorded drill re-judges the same.

Published parameters (docs/modes.md): a pattern lights ``LIT_CELLS`` of the nine cells, it is
shown for ``SHOW_SECONDS``, and the answer must be in by ``TIME_LIMIT_SECONDS`` counted from the
moment the pattern is first shown. The answer must match exactly: every lit cell lit, every dark
cell dark.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum

from ledger.errors import SchemaError

GRID_SIDE = 3
CELLS = GRID_SIDE * GRID_SIDE
LIT_CELLS = 4
SHOW_SECONDS = 2.0
TIME_LIMIT_SECONDS = 8.0
#: The longest answer text accepted before parsing (rows of 0/1 and separators).
MAX_ANSWER_CHARS = 32


class DrillOutcome(StrEnum):
    """How a drill resolves: success flips the challenged card, failure spends No-Go only."""

    SUCCESS = "success"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class Pattern:
    """A 3×3 pattern as the set of lit cells, numbered 0–8 row by row from the top left."""

    lit: frozenset[int]

    def __post_init__(self) -> None:
        if any(not 0 <= cell < CELLS for cell in self.lit):
            raise ValueError(f"cells are numbered 0 to {CELLS - 1}")

    def rows(self) -> tuple[str, str, str]:
        """The pattern as three rows of ``1`` (lit) and ``0`` (dark), top row first."""
        marks = ["1" if cell in self.lit else "0" for cell in range(CELLS)]
        top, middle, bottom = (
            "".join(marks[row * GRID_SIDE : (row + 1) * GRID_SIDE]) for row in range(GRID_SIDE)
        )
        return top, middle, bottom

    def notation(self) -> str:
        """The text form ``110/010/001`` that :func:`parse_pattern` reads back."""
        return "/".join(self.rows())


def generate_pattern(seed: int | str) -> Pattern:
    """The pattern a drill shows for ``seed``: ``LIT_CELLS`` distinct cells, uniformly drawn."""
    rng = random.Random(f"no-go-drill:{seed}")
    return Pattern(frozenset(rng.sample(range(CELLS), LIT_CELLS)))


def parse_pattern(text: str) -> Pattern:
    """Read a player's answer: three rows of three ``0``/``1`` separated by ``/``.

    Untrusted input (typed by a person or sent by a client): anything else is refused with a
    :class:`~ledger.errors.SchemaError`, never half-read.
    """
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        raise SchemaError(f"a drill answer is at most {MAX_ANSWER_CHARS} characters of text")
    rows = text.strip().split("/")
    if len(rows) != GRID_SIDE or any(
        len(row) != GRID_SIDE or set(row) - {"0", "1"} for row in rows
    ):
        raise SchemaError(
            "a drill answer is three rows of three 0 or 1 separated by '/', e.g. 101/010/001"
        )
    cells = "".join(rows)
    return Pattern(frozenset(i for i, mark in enumerate(cells) if mark == "1"))


def judge(shown: Pattern, answer: Pattern, elapsed_seconds: float) -> DrillOutcome:
    """Judge a human's drill: success iff the answer is the shown pattern and came in time.

    ``elapsed_seconds`` runs from the moment the pattern was first shown to the moment the
    answer was submitted. An answer at exactly the limit is in time; a negative or non-finite
    elapsed time is a broken clock and is refused rather than judged.
    """
    if not math.isfinite(elapsed_seconds) or elapsed_seconds < 0:
        raise SchemaError("the drill's elapsed time must be a finite, non-negative number")
    in_time = elapsed_seconds <= TIME_LIMIT_SECONDS
    return DrillOutcome.SUCCESS if in_time and answer == shown else DrillOutcome.FAILURE


def competence_draw(competence: float, seed: int | str) -> DrillOutcome:
    """An AI's answer to a drill (IV.4, R-02): success with probability ``competence``.

    Seeded: the same (competence, seed) always answers the same way.
    """
    if not 0.0 <= competence <= 1.0:
        raise ValueError("a drill competence is a probability between 0 and 1")
    roll = random.Random(f"no-go-competence:{seed}").random()
    return DrillOutcome.SUCCESS if roll < competence else DrillOutcome.FAILURE
