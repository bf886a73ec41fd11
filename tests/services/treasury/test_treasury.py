"""Making change from the reserve (services/treasury/treasury.py): an amount as notes, the
largest denomination first (Book V.5: a claim's notes and a purchase's change)."""

from __future__ import annotations

from services.treasury.treasury import make_change


def test_change_is_made_of_the_largest_notes_first() -> None:
    """Largest first, short denominations made up from smaller ones, None when the reserve
    cannot make the amount exactly."""
    full = {100: 9, 25: 9, 5: 9, 1: 9}
    assert make_change(50, full) == [25, 25]
    assert make_change(49, full) == [25, 5, 5, 5, 5, 1, 1, 1, 1]
    assert make_change(130, full) == [100, 25, 5]
    assert make_change(50, {100: 9, 25: 0, 5: 10, 1: 0}) == [5] * 10
    assert make_change(50, {100: 9, 25: 1, 5: 4, 1: 4}) is None
