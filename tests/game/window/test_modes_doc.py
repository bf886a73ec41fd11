"""docs/modes.md publishes the numbers the code uses: the Chairs' and the other opponents'
strengths, the marks per result and the store's prices must agree with the constants."""

from __future__ import annotations

import re
from pathlib import Path

from game.window import Verdict
from game.window.ai.roster import (
    ASSESSOR_STRENGTH,
    CHAIR_STRENGTH,
    CLERK_STRENGTH,
    REGISTRAR_STRENGTH,
)
from game.window.campaign import (
    ASSESSOR_MARKS,
    CHAIR_MARKS,
    CLERK_MARKS,
    REGISTRAR_FIRST_MARKS,
    REGISTRAR_REPEAT_MARKS,
    ROMAN,
)
from game.window.drill import LIT_CELLS, SHOW_SECONDS, TIME_LIMIT_SECONDS
from game.window.economy.prices import BUNDLE_PRICE, SINGLE_PRICE, UPGRADE_PRICE

DOC = (Path(__file__).resolve().parents[3] / "docs" / "modes.md").read_text(encoding="utf-8")


def _row(first_cell: str) -> list[str]:
    for line in DOC.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == first_cell:
            return cells[1:]
    raise AssertionError(f"docs/modes.md has no table row {first_cell!r}")


def _strength(cells: list[str]) -> tuple[int, float, float]:
    return int(cells[0]), float(cells[1]), float(cells[2])


def test_chair_table_matches_code() -> None:
    """IV.6: the published table of each Chair's budget, error rate and drill competence."""
    for n in range(1, 13):
        s = CHAIR_STRENGTH[n]
        assert _strength(_row(ROMAN[n])) == (s.node_budget, s.error_rate, s.drill_competence)


def test_other_opponents_match_code() -> None:
    """IV.1, IV.2, IV.5: clerks, the Assessor and the Registrars as published."""
    for n in range(1, 5):
        s = CLERK_STRENGTH[n]
        assert _strength(_row(f"clerk {n}")) == (s.node_budget, s.error_rate, s.drill_competence)
    for name, s in (("the Assessor", ASSESSOR_STRENGTH), ("each Registrar", REGISTRAR_STRENGTH)):
        assert _strength(_row(name)) == (s.node_budget, s.error_rate, s.drill_competence)


def test_marks_table_matches_code() -> None:
    """The published marks per result (win, Balance, loss) for every venue."""
    order = (Verdict.WIN, Verdict.BALANCE, Verdict.LOSS)
    for name, table in (
        ("a clerk's table", CLERK_MARKS),
        ("the Assessor's table", ASSESSOR_MARKS),
        ("a Registrar, first settlement", REGISTRAR_FIRST_MARKS),
        ("a Registrar, repeat settlement", REGISTRAR_REPEAT_MARKS),
    ):
        assert [int(c) for c in _row(name)] == [table[v] for v in order]
    for n in range(1, 13):
        assert CHAIR_MARKS[n][Verdict.WIN] == CHAIR_MARKS[n][Verdict.BALANCE] == 10 + 10 * n
        assert CHAIR_MARKS[n][Verdict.LOSS] == 0
    assert _row("Chair n") == ["10 + 10·n", "10 + 10·n", "0"]


def test_prices_and_drill_match_code() -> None:
    """V.5 prices and the drill's published parameters."""
    prices = [
        int(_row(f"single print, {r.value} " + extra)[0])
        for r, extra in (
            (
                r,
                {
                    "common": "(base six)",
                    "uncommon": "(the Folded)",
                    "rare": "(Lettered, Begotten, Counted)",
                    "sealed": "(the Sealed set)",
                }[r.value],
            )
            for r in SINGLE_PRICE
        )
    ]
    assert prices == list(SINGLE_PRICE.values())
    assert [int(_row(f"finish upgrade to {f.value}")[0]) for f in UPGRADE_PRICE] == list(
        UPGRADE_PRICE.values()
    )
    assert int(_row("one sealed bundle")[0]) == BUNDLE_PRICE
    assert re.search(rf"\| lit cells \| {LIT_CELLS},", DOC)
    assert f"| shown for | {SHOW_SECONDS} s" in DOC
    assert f"| time limit | {TIME_LIMIT_SECONDS} s" in DOC
