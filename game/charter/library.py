"""The card set, charters and decks shipped with the package (``game/charter/data/*.json``).

Reading the package's own data is the one read this package does: it is fixed at install time,
like a module's constants. Anything a user supplies is parsed by the caller and handed to
:func:`game.charter.cards.load_card_set` and :mod:`game.charter.charters` as parsed JSON.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from game.charter.cards import CardSet, load_card_set
from game.charter.charters import Charter, Deck, load_charter, load_deck
from game.charter.errors import CardDataError
from ledger.wire import parse_json

_DATA = "game.charter.data"


def _names(prefix: str) -> list[str]:
    files = resources.files(_DATA).iterdir()
    return sorted(
        f.name.removeprefix(prefix).removesuffix(".json")
        for f in files
        if f.name.startswith(prefix) and f.name.endswith(".json")
    )


def _read(prefix: str, name: str) -> Any:
    if name not in _names(prefix):
        raise CardDataError(f"no packaged {prefix.rstrip('-')} called {name!r}")
    text = resources.files(_DATA).joinpath(f"{prefix}{name}.json").read_text("utf-8")
    return parse_json(text, what=f"{prefix}{name}.json")


def card_set_names() -> list[str]:
    return _names("cards-")


def charter_names() -> list[str]:
    return _names("charter-")


def deck_names() -> list[str]:
    return _names("deck-")


@cache
def card_set(name: str = "sample") -> CardSet:
    """A packaged card set, loaded and checked once per process."""
    return load_card_set(_read("cards-", name))


@cache
def charter(name: str) -> Charter:
    """A packaged charter, checked against its packaged card set."""
    data = _read("charter-", name)
    set_name = data.get("card_set") if isinstance(data, dict) else None
    return load_charter(data, card_set(set_name if isinstance(set_name, str) else "sample"))


@cache
def deck(name: str) -> Deck:
    """A packaged deck, read once per process (like :func:`charter`)."""
    return load_deck(_read("deck-", name))
