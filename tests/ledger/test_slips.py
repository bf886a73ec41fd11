"""Slips (Book V.6, docs/architecture.md §3): armored whole chains, verified offline on import."""

from __future__ import annotations

import pytest

from ledger.armor import SLIP, armor
from ledger.canonical import jcs
from ledger.endorsements import Chain, endorse, verify_league_chain
from ledger.errors import (
    BadSignatureError,
    ChainError,
    DecodeError,
    FraudDetected,
    SchemaError,
    SizeLimitError,
    UnknownKindError,
)
from ledger.fraud import SeenRegistry
from ledger.keys import SigningKey
from ledger.limits import MAX_ARMOR_BYTES, MAX_CHAINS_PER_SLIP
from ledger.slips import Slip, receive_slip
from tests.ledger.factories import League, chain_of


@pytest.fixture
def slip(league: League, alice: SigningKey, bob: SigningKey) -> Slip:
    """Alice sends bob a print and a note."""
    print_chain = chain_of(league.print_certificate(alice), alice, bob)
    note_chain = chain_of(league.note_certificate(league.treasury), league.treasury, alice, bob)
    return Slip(chains=(print_chain, note_chain))


def test_slip_round_trips_through_armor_and_every_chain_ends_at_the_receiver(
    slip: Slip, league: League, bob: SigningKey
) -> None:
    """A written slip reads back identical, as a CZ SLIP block, and each chain it carries
    verifies offline to the receiver's key."""
    text = slip.to_armor()
    assert text.startswith("-----BEGIN CZ SLIP-----\n")
    received = Slip.from_armor(text)
    assert received == slip
    assert [verify_league_chain(c, league.manifest) for c in received.chains] == [bob.public] * 2


def test_slip_json_inside_the_armor_must_be_canonical(slip: Slip) -> None:
    """The armored bytes are RFC 8785 JSON; the same object with other spacing or key order,
    or with a repeated key, is refused (one text per slip)."""
    import json

    loose = json.dumps(slip.to_wire(), indent=1).encode()
    with pytest.raises(DecodeError, match="canonical JSON"):
        Slip.from_armor(armor(SLIP, loose))
    chains = jcs(slip.to_wire()["chains"])
    repeated = b'{"chains":' + chains + b',"chains":' + chains + b',"kind":"slip"}'
    with pytest.raises(DecodeError, match="repeats the key 'chains'"):
        Slip.from_armor(armor(SLIP, repeated))


def test_slip_names_each_serial_once(slip: Slip) -> None:
    """The same chain twice in one slip is refused."""
    wire = slip.to_wire()
    wire["chains"] = [wire["chains"][0]] * 2
    with pytest.raises(SchemaError, match="each serial once"):
        Slip.from_wire(wire)


def test_slip_limits(slip: Slip) -> None:
    """An empty slip, more chains than published, or a block over the byte limit is refused."""
    wire = slip.to_wire()
    with pytest.raises(SchemaError):
        Slip.from_wire({**wire, "chains": []})
    with pytest.raises(SchemaError):
        Slip.from_wire({**wire, "chains": wire["chains"] * (MAX_CHAINS_PER_SLIP // 2 + 1)})
    with pytest.raises(SizeLimitError):
        Slip.from_armor(" " * (MAX_ARMOR_BYTES[SLIP] + 1))


def test_a_ledger_card_is_not_a_slip(alice: SigningKey) -> None:
    """A CZ SLIP block holding another kind of object is refused by kind."""
    from ledger.cards import LedgerCard

    card = LedgerCard.for_key(alice.public)
    with pytest.raises(UnknownKindError):
        Slip.from_armor(armor(SLIP, jcs(card.to_wire())))


def test_receive_slip_admits_chains_ending_at_the_receiver(
    slip: Slip, league: League, bob: SigningKey
) -> None:
    """Importing a good slip returns its chains and records every hop in the registry."""
    registry = SeenRegistry()
    assert receive_slip(Slip.from_armor(slip.to_armor()), league.manifest, bob.public, registry)
    assert len(registry) == sum(len(c.endorsements) for c in slip.chains)


def test_receive_slip_refuses_a_chain_endorsed_to_someone_else(
    slip: Slip, league: League, carol: SigningKey
) -> None:
    """A print endorsed to another key is provably not the receiver's to take (V.6): the
    whole slip is refused and nothing is recorded."""
    registry = SeenRegistry()
    with pytest.raises(ChainError, match="not yours to take"):
        receive_slip(slip, league.manifest, carol.public, registry)
    assert len(registry) == 0


def test_receive_slip_refuses_a_double_spend_and_hands_over_the_proof(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Alice endorses one print to carol, then to bob: carol's registry (which saw the first)
    refuses bob's onward slip with the fraud proof convicting alice, recording nothing."""
    start = chain_of(league.print_certificate(alice), alice)
    to_carol = endorse(start, alice, carol.public, 1)
    to_bob_then_carol = endorse(endorse(start, alice, bob.public, 2), bob, carol.public, 3)
    registry = SeenRegistry()
    receive_slip(Slip(chains=(to_carol,)), league.manifest, carol.public, registry)
    with pytest.raises(FraudDetected, match="signed away twice") as refused:
        receive_slip(Slip(chains=(to_bob_then_carol,)), league.manifest, carol.public, registry)
    (proof,) = refused.value.proofs
    assert proof.verify() == alice.public
    assert len(registry) == 1


def test_receive_slip_refuses_a_forged_chain(slip: Slip, league: League, bob: SigningKey) -> None:
    """A chain whose certificate was not signed by the league's mint is refused."""
    forged = slip.chains[0].certificate.sign(
        bob, **{k: v for k, v in slip.chains[0].certificate.body().items() if k != "kind"}
    )
    bad = Slip(chains=(Chain(certificate=forged, endorsements=slip.chains[0].endorsements),))
    with pytest.raises(BadSignatureError):
        receive_slip(bad, league.manifest, bob.public, SeenRegistry())
