"""Charters and decks (The Charter, Manifest, Privileges), and positions as strict JSON."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from game.charter import (
    CardDataError,
    CharterViolation,
    check_deck,
    deck_failures,
    from_json,
    library,
    load_charter,
    load_deck,
    to_json,
)
from ledger.errors import SchemaError
from tests.game.charter.scenes import scene


def deck_with(**changes: int) -> Any:
    data = copy.deepcopy(library.deck("ember").source)
    data["cards"].update(changes)
    return load_deck(data)


# The Charter
def test_the_packaged_decks_satisfy_their_charters() -> None:
    """Every packaged deck satisfies the charter it is designed under."""
    cards = library.card_set()
    for name in library.deck_names():
        deck = library.deck(name)
        assert deck_failures(deck, library.charter(deck.charter), cards) == []


# The Charter
def test_the_card_count_is_exact() -> None:
    """One card too many, or too few, fails the charter."""
    cards, skirmish = library.card_set(), library.charter("skirmish")
    assert deck_failures(deck_with(Keep=4), skirmish, cards) == [
        "the deck holds 21 cards; the charter sets exactly 20"
    ]
    assert deck_failures(deck_with(Keep=2), skirmish, cards) == [
        "the deck holds 19 cards; the charter sets exactly 20"
    ]


# The Charter
def test_the_summed_complexity_must_fit() -> None:
    """Swapping cheap cards for complex ones past 44 fails; the count still holds."""
    cards, skirmish = library.card_set(), library.charter("skirmish")
    data = copy.deepcopy(library.deck("ember").source)
    data["cards"] = {"Keep": 15, "Seize": 5}  # 30 + 20 = 50
    deck = load_deck(data)
    failures = deck_failures(deck, skirmish, cards)
    assert failures == ["the cards' complexity sums to 50; the charter's complexity is 44"]
    with pytest.raises(CharterViolation) as info:
        check_deck(deck, skirmish, cards)
    assert info.value.failures == tuple(failures)


# Manifest, Privileges
def test_manifest_cards_need_a_grant_that_covers_them() -> None:
    """Militia (manifest alone, complexity 2) fits skirmish's grant of 2; a grant of 1 does
    not account for it (C-06), and no grant at all refuses it."""
    cards = library.card_set()
    data = copy.deepcopy(library.charter("skirmish").source)
    data["manifest"]["complexity"] = 1
    data["format_line"] = "deck 20 · complexity 44 · manifest 1/turn at complexity 1"
    small = load_charter(data, cards)
    failures = deck_failures(library.deck("ember"), small, cards)
    assert failures == ["'Militia' has complexity 2; a manifest use alone accounts for 1 (C-06)"]


# Manifest
def test_the_format_line_states_the_grant() -> None:
    """A charter whose format line does not state its manifest grant is refused."""
    data = copy.deepcopy(library.charter("skirmish").source)
    data["format_line"] = "deck 20 · complexity 44"
    with pytest.raises(CardDataError, match="the format line must read"):
        load_charter(data, library.card_set())


# Zones, Control and ownership
def test_positions_round_trip_and_refuse_a_card_in_two_places() -> None:
    """to_json(from_json(j)) == j; a card listed twice is one SchemaError."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    data = json.loads(json.dumps(to_json(s)))
    assert to_json(from_json(data)) == data
    data["hands"][1].append(data["hands"][0][0])
    with pytest.raises(SchemaError, match=r"lies in two places|only its owner's cards"):
        from_json(data)
    bad = json.loads(json.dumps(to_json(s)))
    bad["board"][0]["bond"] = "glued"
    with pytest.raises(SchemaError, match=r"board\.0"):
        from_json(bad)
