"""Counted words in messages: ``plural(1, "item")`` is "1 item", ``plural(2, "item")`` is
"2 items" (cz's and league's lines, so none says "1 items")."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, the word in the plural unless the count is exactly one: an
    ``s`` added, or ``many`` for a word that is not (``plural(n, "copy", "copies")``)."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many if many is not None else word + 's'}"
