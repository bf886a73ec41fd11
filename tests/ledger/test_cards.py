"""Ledger cards (Book V.6, docs/architecture.md §3): an armored public key and its address."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.address import address_of
from ledger.armor import LEDGER_CARD, armor
from ledger.canonical import jcs
from ledger.cards import LedgerCard
from ledger.errors import ArmorError, DecodeError, SchemaError
from ledger.keys import SigningKey


def test_card_holds_key_and_its_address(alice: SigningKey) -> None:
    """A card is the public key and the address derived from it, armored as CZ LEDGER CARD."""
    card = LedgerCard.for_key(alice.public)
    assert card.public_key == alice.public
    assert card.address == address_of(alice.public)
    assert card.to_armor().startswith("-----BEGIN CZ LEDGER CARD-----\n")


def test_card_with_another_keys_address_is_refused(alice: SigningKey, bob: SigningKey) -> None:
    """A card whose address is not its key's is refused: the address a person compares must
    be the key an endorsement is made out to."""
    wire = {**LedgerCard.for_key(alice.public).to_wire(), "address": address_of(bob.public)}
    with pytest.raises(SchemaError, match="not the address of its key"):
        LedgerCard.from_armor(armor(LEDGER_CARD, jcs(wire)))


def test_card_address_must_be_canonical(alice: SigningKey) -> None:
    """On a card the address is in its canonical spelling (lenient reading is for typing)."""
    wire = LedgerCard.for_key(alice.public).to_wire()
    with pytest.raises(SchemaError):
        LedgerCard.from_wire({**wire, "address": wire["address"].lower()})


def test_card_armor_refuses_other_labels(alice: SigningKey) -> None:
    """A card's armor under another label is refused."""
    text = LedgerCard.for_key(alice.public).to_armor().replace("LEDGER CARD", "SLIP")
    with pytest.raises(ArmorError, match="expected a CZ LEDGER CARD"):
        LedgerCard.from_armor(text)


def test_card_with_a_bad_key_is_refused(alice: SigningKey) -> None:
    """A non-canonical key on a card is a typed decode error."""
    wire = LedgerCard.for_key(alice.public).to_wire()
    with pytest.raises(DecodeError):
        LedgerCard.from_wire({**wire, "key": wire["key"] + "A"})


@given(st.binary(min_size=32, max_size=32))
def test_card_round_trip(seed: bytes) -> None:
    """Every key's card reads back identical from its armor and its wire object."""
    card = LedgerCard.for_key(SigningKey(seed).public)
    assert LedgerCard.from_armor(card.to_armor()) == card
    assert LedgerCard.from_wire(card.to_wire()) == card


# Regression: hmac.compare_digest raised TypeError on a non-ASCII address.
@pytest.mark.parametrize("address", ["CZ-é", "CZ-\u0130", "CZ-8B10-F\u017fZ1-MB14", "\udcff"])
def test_card_with_a_non_ascii_address_is_a_schema_error(alice: SigningKey, address: str) -> None:
    """A card whose address is not ASCII is refused as a SchemaError naming the address field,
    never a TypeError from the comparison inside the validator."""
    wire = LedgerCard.for_key(alice.public).to_wire()
    with pytest.raises(SchemaError, match="address"):
        LedgerCard.from_wire({**wire, "address": address})
