"""Counted words: one is singular, every other count (none included) plural."""

from __future__ import annotations

from ledger.words import plural


def test_one_is_singular_and_every_other_count_plural() -> None:
    """ "1 item", "0 items", "2 fraud proofs", and a word whose plural is not an added s."""
    assert plural(1, "item") == "1 item"
    assert plural(0, "item") == "0 items"
    assert plural(2, "fraud proof") == "2 fraud proofs"
    assert plural(1, "copy", "copies") == "1 copy"
    assert plural(3, "copy", "copies") == "3 copies"
