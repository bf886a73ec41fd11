"""Fraud proofs and the seen-registry (docs/architecture.md §3, Book V.6–V.7): a double spend
convicts its signer offline; anything short of one is refused as a proof."""

from __future__ import annotations

import pytest

from ledger.endorsements import Chain, endorse, verify_league_chain
from ledger.errors import InvalidFraudProofError, SchemaError, UnknownKindError
from ledger.fraud import FraudProof, SeenRegistry
from ledger.keys import SigningKey
from tests.ledger.factories import League, chain_of


@pytest.fixture
def double_spend(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> tuple[Chain, Chain]:
    """Alice endorses the same print at hop 1 to bob and to carol."""
    start = chain_of(league.print_certificate(alice), alice)
    return endorse(start, alice, bob.public, 100), endorse(start, alice, carol.public, 100)


def test_double_spend_is_a_proof_anyone_verifies(
    double_spend: tuple[Chain, Chain], alice: SigningKey
) -> None:
    """Two valid endorsements of one serial at one hop by one key convict that key, and the
    proof survives its wire form."""
    to_bob, to_carol = double_spend
    proof = FraudProof(first=to_bob.endorsements[0], second=to_carol.endorsements[0])
    assert proof.verify() == alice.public
    assert FraudProof.from_wire(proof.to_wire()).verify() == alice.public
    assert "signed away twice at hop 1" in proof.describe()


def test_the_same_endorsement_twice_is_not_fraud(double_spend: tuple[Chain, Chain]) -> None:
    """One endorsement presented as both halves proves nothing."""
    hop = double_spend[0].endorsements[0]
    with pytest.raises(InvalidFraudProofError, match="one and the same"):
        FraudProof(first=hop, second=hop).verify()


def test_honest_hops_of_one_chain_are_not_fraud(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Two different hops of one honest chain are refused as a proof (different hop)."""
    chain = chain_of(league.print_certificate(alice), alice, bob, carol)
    with pytest.raises(InvalidFraudProofError, match="same serial, hop"):
        FraudProof(first=chain.endorsements[0], second=chain.endorsements[1]).verify()


def test_reissue_is_not_fraud(league: League, bob: SigningKey, carol: SigningKey) -> None:
    """The treasury signing hop 1 of issue 1 and hop 1 of issue 2 of one note follows two
    different certificates: not the same previous link, so not fraud."""
    treasury = league.treasury
    first = chain_of(league.note_certificate(treasury, issue=1), treasury, bob)
    second = chain_of(league.note_certificate(treasury, issue=2), treasury, carol)
    with pytest.raises(InvalidFraudProofError):
        FraudProof(first=first.endorsements[0], second=second.endorsements[0]).verify()
    registry = SeenRegistry()
    assert registry.admit(first) == ()
    assert registry.admit(second) == ()


def test_a_forged_half_is_not_fraud(double_spend: tuple[Chain, Chain]) -> None:
    """If either endorsement's signature fails, the proof is refused: nobody can be framed by
    editing their endorsement."""
    to_bob, to_carol = double_spend
    genuine = to_bob.endorsements[0]
    edited = type(genuine).from_wire({**to_carol.endorsements[0].to_wire(), "time": 101})
    with pytest.raises(InvalidFraudProofError, match="second endorsement's signature"):
        FraudProof(first=genuine, second=edited).verify()
    with pytest.raises(InvalidFraudProofError, match="first endorsement's signature"):
        FraudProof(first=edited, second=genuine).verify()


def test_halves_signed_by_different_keys_are_not_fraud(
    league: League, alice: SigningKey, bob: SigningKey, carol: SigningKey
) -> None:
    """Two keys each signing one endorsement at the same position convicts neither."""
    genuine = chain_of(league.print_certificate(alice), alice, bob).endorsements[0]
    other = type(genuine).sign(
        carol,
        **{**genuine.body(), "from": carol.public.to_text(), "to": carol.public.to_text()},
    )
    with pytest.raises(InvalidFraudProofError, match="different keys"):
        FraudProof(first=genuine, second=other).verify()


def test_registry_detects_the_conflict_on_import_and_keeps_the_first(
    league: League, double_spend: tuple[Chain, Chain], alice: SigningKey
) -> None:
    """Importing both halves of a double spend: the first is admitted, the second yields a
    proof with the seen endorsement first and is not recorded."""
    to_bob, to_carol = double_spend
    for chain in double_spend:
        verify_league_chain(chain, league.manifest)
    registry = SeenRegistry()
    assert registry.admit(to_bob) == ()
    (proof,) = registry.admit(to_carol)
    assert proof.first == to_bob.endorsements[0]
    assert proof.second == to_carol.endorsements[0]
    assert proof.verify() == alice.public
    hop = to_bob.endorsements[0]
    assert registry.hash_at(hop.serial, 1, hop.prev) == hop.hash()
    assert registry.admit(to_bob) == ()  # the same chain again is no conflict


def test_registry_round_trips_and_refuses_duplicates(double_spend: tuple[Chain, Chain]) -> None:
    """The registry's wire form (for the save code) restores it; a wire form listing two
    endorsements at one position is refused."""
    to_bob, to_carol = double_spend
    registry = SeenRegistry()
    registry.admit(to_bob)
    restored = SeenRegistry.from_wire(registry.to_wire())
    assert len(restored) == 1
    assert restored.conflicts(to_carol)[0].first == to_bob.endorsements[0]
    wire = registry.to_wire()
    wire["endorsements"].append(to_carol.endorsements[0].to_wire())
    with pytest.raises(SchemaError):
        SeenRegistry.from_wire(wire)
    with pytest.raises(UnknownKindError):
        SeenRegistry.from_wire({**wire, "kind": "slip"})
