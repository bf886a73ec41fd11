"""The No-Go drill (IV.4, R-02): pattern generation, judging, and the AIs' competence draw."""

from __future__ import annotations

import math

import pytest

from game.window.drill import (
    CELLS,
    LIT_CELLS,
    TIME_LIMIT_SECONDS,
    DrillOutcome,
    Pattern,
    competence_draw,
    generate_pattern,
    judge,
    parse_pattern,
)
from ledger.errors import SchemaError


def test_same_seed_same_pattern_and_lit_count() -> None:
    """IV.4: a drill's pattern is a seeded 3×3 pattern with LIT_CELLS distinct lit cells."""
    for seed in range(200):
        pattern = generate_pattern(seed)
        assert pattern == generate_pattern(seed)
        assert len(pattern.lit) == LIT_CELLS
        assert all(0 <= cell < CELLS for cell in pattern.lit)
    assert len({generate_pattern(seed) for seed in range(200)}) > 50


def test_exact_answer_in_time_succeeds() -> None:
    """IV.4: reproducing the shown pattern before the timer closes flips the card."""
    shown = generate_pattern(7)
    answer = parse_pattern(shown.notation())
    assert judge(shown, answer, 1.5) is DrillOutcome.SUCCESS
    assert judge(shown, answer, TIME_LIMIT_SECONDS) is DrillOutcome.SUCCESS


def test_late_answer_fails() -> None:
    """IV.4: a right answer after the timer closes is a failure (No-Go spent for nothing)."""
    shown = generate_pattern(7)
    answer = parse_pattern(shown.notation())
    assert judge(shown, answer, math.nextafter(TIME_LIMIT_SECONDS, 99)) is DrillOutcome.FAILURE


def test_one_wrong_cell_fails() -> None:
    """IV.4: the answer must reproduce the pattern exactly; one cell off, lit or dark, fails."""
    shown = Pattern(frozenset({0, 4, 8, 2}))
    assert judge(shown, Pattern(frozenset({0, 4, 8})), 1.0) is DrillOutcome.FAILURE
    assert judge(shown, Pattern(frozenset({0, 2, 4, 6, 8})), 1.0) is DrillOutcome.FAILURE
    assert judge(shown, parse_pattern("101/010/101"), 1.0) is DrillOutcome.FAILURE
    assert judge(shown, parse_pattern("101/010/001"), 1.0) is DrillOutcome.SUCCESS


@pytest.mark.parametrize("elapsed", [-0.1, math.nan, math.inf])
def test_broken_clock_is_refused(elapsed: float) -> None:
    """Judging refuses an elapsed time that no real clock gives, rather than judging it."""
    shown = generate_pattern(1)
    with pytest.raises(SchemaError):
        judge(shown, shown, elapsed)


@pytest.mark.parametrize(
    "text", ["", "101/010", "101/010/0011", "1O1/010/001", "101-010-001", "1" * 40, "1/0/1"]
)
def test_malformed_answers_are_refused(text: str) -> None:
    """An answer is three rows of three 0/1; anything else is a typed SchemaError."""
    with pytest.raises(SchemaError):
        parse_pattern(text)


def test_notation_round_trips() -> None:
    """A pattern's notation reads back to the same pattern (rows top to bottom)."""
    pattern = Pattern(frozenset({1, 3, 8}))
    assert pattern.notation() == "010/100/001"
    assert parse_pattern(pattern.notation()) == pattern


def test_competence_draw_is_seeded_and_calibrated() -> None:
    """R-02: AIs answer at their listed competence: a seeded draw with that success rate."""
    assert all(competence_draw(1.0, s) is DrillOutcome.SUCCESS for s in range(100))
    assert all(competence_draw(0.0, s) is DrillOutcome.FAILURE for s in range(100))
    draws = [competence_draw(0.6, s) for s in range(20_000)]
    assert draws == [competence_draw(0.6, s) for s in range(20_000)]
    rate = draws.count(DrillOutcome.SUCCESS) / len(draws)
    assert abs(rate - 0.6) < 5 * math.sqrt(0.6 * 0.4 / len(draws))


def test_competence_outside_probability_is_an_error() -> None:
    """A competence is a probability; 1.2 is a programming error, not a strong AI."""
    with pytest.raises(ValueError, match="probability"):
        competence_draw(1.2, 0)
