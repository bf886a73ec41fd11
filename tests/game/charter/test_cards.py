"""Cards as data: the sample set loads, and every rule a card must keep is refused clearly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from game.charter import library
from game.charter.cards import (
    ACTIVATED,
    EDICT,
    INTERRUPT,
    LOCATION,
    RESERVE,
    STATIC,
    TRANSACTIONAL,
    load_card_set,
    weight,
)
from game.charter.errors import CardDataError


def sample() -> dict[str, Any]:
    return copy.deepcopy(library.card_set().source)


def with_card(card: dict[str, Any]) -> dict[str, Any]:
    data = sample()
    data["cards"].append(card)
    return data


def refused(data: dict[str, Any], words: str) -> None:
    with pytest.raises(CardDataError) as info:
        load_card_set(data)
    assert words in info.value.diagnostics()


# Resource tiers
def test_tiers_weigh_one_two_four() -> None:
    """tier 1 weighs 1, tier 2 weighs 2, tier 3 weighs 4, and so on."""
    assert [weight(t) for t in (1, 2, 3, 4)] == [1, 2, 4, 8]


# Resource tiers
def test_resource_value_is_the_weight_of_the_named_requirements() -> None:
    """Seize names two tide (tier 2) and one additional: value 4; additional weigh nothing."""
    cards = library.card_set()
    assert cards.card("Seize").value == 4
    assert cards.card("Harbor").value == 0  # additional requirements only
    assert cards.card("Crown").value == 4  # one aurum, tier 3


# Locations
def test_each_type_carries_its_attributes() -> None:
    """A location carries strength, resilience, integrity and extent."""
    keep = library.card_set().card("Keep")
    assert keep.type == LOCATION
    assert (keep.strength, keep.resilience, keep.integrity, keep.extent) == (1, 1, 5, 3)


# Objects
def test_an_object_carries_no_attributes() -> None:
    """Objects carry no attributes: a strength on one is refused, naming the card."""
    data = sample()
    data["cards"][15]["strength"] = 1  # Lantern
    refused(data, "card 'Lantern': an object carries no strength")


# Structures
def test_a_structure_needs_its_size() -> None:
    """A structure carries size: one without it is refused."""
    refused(
        with_card({"name": "Hut", "type": "structure", "complexity": 1, "price": {},
                   "strength": 0, "resilience": 0, "integrity": 1}),
        "a structure carries size",
    )  # fmt: skip


# Ability keywords
@pytest.mark.parametrize(
    ("keyword", "kind"),
    [("Interrupt", "activated"), ("Affix", "static"), ("Attach", "static"), ("Free", "static")],
)
def test_keywords_have_their_kind(keyword: str, kind: str) -> None:
    """Interrupt and Grant are static, Affix transactional, Attach and Free activated."""
    ability: dict[str, Any] = {"kind": kind, "keyword": keyword}
    if kind == "activated":
        ability["price"] = {}
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {},
                   "abilities": [ability]}),
        f"{keyword} is",
    )  # fmt: skip


# Ability traits
def test_traits_follow_the_gutter_rule() -> None:
    """Transactional shows its trait; interrupt and reserve speeds theirs; the rest none."""
    cards = library.card_set()
    bolt = cards.card("Bolt").abilities[0]
    lancer = cards.card("Lancer").abilities[0]
    warden = cards.card("Warden").abilities[0]
    crown = cards.card("Crown").abilities[0]
    assert (bolt.kind, bolt.trait) == (TRANSACTIONAL, "transactional")
    assert (lancer.kind, lancer.speed, lancer.trait) == (ACTIVATED, INTERRUPT, "interrupt")
    assert (warden.speed, warden.trait) == (RESERVE, "reserve")
    assert (crown.kind, crown.trait) == (STATIC, None)


# Ability traits
def test_a_wrong_trait_is_refused() -> None:
    """A standard-speed activated ability shows an empty gutter, never a speed trait."""
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {},
                   "abilities": [{"kind": "activated", "trait": "interrupt", "price": {},
                                  "effect": {"do": "draw", "amount": 1}}]}),
        "the gutter shows an empty gutter, not the interrupt trait",
    )  # fmt: skip


# Static abilities
def test_a_static_ability_cannot_fire() -> None:
    """Static is the only kind that cannot choose: it states a standing fact, never an event."""
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {},
                   "abilities": [{"kind": "static", "effect": {"do": "draw", "amount": 1}}]}),
        "a static ability never fires",
    )  # fmt: skip


# Edicts
def test_an_edict_performs_an_ability_as_it_resolves() -> None:
    """An edict with no transactional ability is refused."""
    refused(
        with_card({"name": "Void", "type": "edict", "complexity": 1, "price": {}}),
        "an edict performs its ability as it resolves",
    )
    assert library.card_set().card("Bolt").type == EDICT


# Ability keywords
def test_grant_needs_a_way_to_anchor() -> None:
    """Grant works while anchored, and only Affix or Attach anchor a card (Anchoring)."""
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {},
                   "abilities": [{"kind": "static", "keyword": "Grant",
                                  "granted": {"kind": "static",
                                              "effect": {"do": "withhold", "target": "self"}}}]}),
        "needs Affix or Attach",
    )  # fmt: skip


# Resources
def test_unknown_identity_is_refused() -> None:
    """A named requirement names one of the set's identities."""
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {"named": ["gold"]}}),
        "unknown resource identity 'gold'",
    )


# Manifest
def test_manifest_only_in_a_cards_own_price() -> None:
    """Spending a manifest use is part of a card's price; an ability price cannot spend one."""
    refused(
        with_card({"name": "Odd", "type": "object", "complexity": 1, "price": {},
                   "abilities": [{"kind": "activated", "price": {"manifest": True},
                                  "effect": {"do": "draw", "amount": 1}}]}),
        "only a card's own price may spend a manifest use",
    )  # fmt: skip


def test_schema_faults_name_the_card_and_field() -> None:
    """A shape fault is one sentence naming the card and the field."""
    data = sample()
    data["cards"][0]["complexity"] = "two"
    refused(data, "card set card 'Keep': complexity")
    data = sample()
    data["cards"][1]["colour"] = "red"
    refused(data, "card 'Harbor': colour")
