"""Wire forms of every signed object (docs/architecture.md §3, Book V.7 "any altered byte kills the
signature"): round trips, tampering, domain separation, and typed errors on bad JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ledger.canonical import DOMAIN_TAGS, jcs, object_hash
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.encoding import encode_b64url
from ledger.endorsements import Chain, Endorsement, endorse, verify_league_chain
from ledger.errors import BadSignatureError, DecodeError, LedgerError, SchemaError
from ledger.fraud import FraudProof
from ledger.keys import SigningKey
from ledger.print_runs import serial_for
from ledger.slips import Slip
from ledger.tables import TableOpen
from ledger.wire import SignedModel, parse_json
from tests.ledger.factories import League, chain_of, key, make_league


def _signed_objects(small_league: League) -> dict[str, tuple[SignedModel, Callable[[Any], None]]]:
    """One of each signed kind, with the check a verifier runs on it after parsing."""
    league = small_league
    alice, bob = key(10), key(11)
    chain = chain_of(
        league.print_certificate(
            alice, "CZ-TALLY-0003", title="Tally", card_set="base", finish="gilt"
        ),
        alice,
        bob,
    )
    note = league.note_certificate(alice)
    manifest = league.manifest

    def check_print(obj: PrintCertificate) -> None:
        league.manifest.check_certificate(obj)
        obj.verify(league.mint.public)

    def check_note(obj: NoteCertificate) -> None:
        league.manifest.check_certificate(obj)
        obj.verify(league.treasury.public)

    def check_endorsement(obj: Endorsement) -> None:
        verify_league_chain(Chain(certificate=chain.certificate, endorsements=(obj,)), manifest)

    return {
        "print": (chain.certificate, check_print),
        "note": (note, check_note),
        "endorsement": (chain.endorsements[0], check_endorsement),
        "manifest": (manifest, lambda obj: obj.verify_root(league.root.public)),
    }


@pytest.mark.parametrize("kind", ["print", "note", "endorsement", "manifest"])
def test_flipping_any_byte_fails_parse_or_verification(small_league: League, kind: str) -> None:
    """For every byte of the canonical wire text of each signed kind, two different flips
    (low bit, case bit) are each refused with a LedgerError: never accepted, never a crash."""
    obj, check = _signed_objects(small_league)[kind]
    check(obj)  # the untouched object verifies
    text = jcs(obj.to_wire())
    for position in range(len(text)):
        for mask in (0x01, 0x20):
            changed = bytearray(text)
            changed[position] ^= mask
            with pytest.raises(LedgerError):
                check(type(obj).from_wire(bytes(changed)))


def test_flipping_a_chain_byte_fails(small_league: League) -> None:
    """A whole chain's wire text with any byte flipped never verifies."""
    alice, bob = key(10), key(11)
    chain = chain_of(small_league.note_certificate(alice), alice, bob)
    text = jcs(chain.to_wire())
    for position in range(0, len(text), 3):
        changed = bytearray(text)
        changed[position] ^= 0x01
        with pytest.raises(LedgerError):
            verify_league_chain(Chain.from_wire(bytes(changed)), small_league.manifest)


@pytest.mark.parametrize("kind", ["print", "note", "endorsement", "manifest"])
def test_a_signature_of_one_kind_never_verifies_as_another(small_league: League, kind: str) -> None:
    """The same body signed under any other domain tag does not verify as this kind, and its
    hash differs: no signature can be replayed as another kind."""
    obj, _ = _signed_objects(small_league)[kind]
    signer = {
        "print": small_league.mint,
        "note": small_league.treasury,
        "endorsement": key(10),
        "manifest": small_league.root,
    }[kind]
    body = obj.body()
    for other in DOMAIN_TAGS:
        if other == kind:
            continue
        foreign = type(obj).from_wire({**body, "sig": signer.sign(other, body)})
        with pytest.raises(BadSignatureError):
            foreign.verify(signer.public)
        assert object_hash(other, body) != obj.hash()


def test_parse_errors_are_typed_never_pydantic(small_league: League) -> None:
    """Bad input of every sort raises a LedgerError subclass, never pydantic's
    ValidationError or a bare Python exception."""
    wire = small_league.note_certificate(key(10)).to_wire()
    bad_inputs: list[Any] = [
        b"\xff\xfe",
        "[]",
        "null",
        "{",
        '{"kind": "note", "kind": "note"}',
        '{"kind": "note", "denomination": NaN}',
        '{"kind": "note", "denomination": Infinity}',
        "[" * 100_000 + "]" * 100_000,
        {**wire, "denomination": 25.0},
        {**wire, "serial": None},
        {**wire, "serial": ["CZ-M25-000001"]},
        {**wire, "issue": 2**64},
        {**wire, "event": 2**53},
        {k: v for k, v in wire.items() if k != "sig"},
        {**wire, "sig": wire["sig"][:-1]},
    ]
    for bad in bad_inputs:
        try:
            NoteCertificate.from_wire(bad)
        except ValidationError:  # pragma: no cover - the failure this test exists to catch
            pytest.fail(f"pydantic error leaked for {str(bad)[:60]!r}")
        except LedgerError:
            continue
        pytest.fail(f"accepted {str(bad)[:60]!r}")


def test_parse_json_refuses_duplicates_and_non_finite_numbers() -> None:
    """The JSON reader used for every wire object refuses a repeated key and NaN/Infinity."""
    with pytest.raises(DecodeError, match="repeats the key 'a'"):
        parse_json('{"a": 1, "a": 2}')
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(DecodeError):
            parse_json(f'{{"a": {constant}}}')


def test_sign_validates_before_signing(small_league: League) -> None:
    """Nothing malformed is ever signed: building a certificate with a bad field fails."""
    with pytest.raises(SchemaError):
        PrintCertificate.sign(
            small_league.mint,
            serial="CZ-TALLY-0001",
            title="Tally",
            set="base",
            finish="standard",
            issued_to=key(10).public.to_text(),
            issue=1,
            event=-5,
            manifest=small_league.manifest.hash_text(),
        )


seeds = st.binary(min_size=32, max_size=32).map(SigningKey)
_LEAGUE = make_league()


@settings(max_examples=50, deadline=None)
@given(
    holder=seeds,
    recipients=st.lists(seeds, max_size=4),
    data=st.data(),
)
def test_every_wire_format_round_trips(
    holder: SigningKey, recipients: list[SigningKey], data: st.DataObject
) -> None:
    """Random certificates, endorsement chains, slips and fraud proofs survive to_wire /
    from_wire (as objects and as JSON text), keep their hashes, and still verify."""
    league = _LEAGUE
    run = data.draw(st.sampled_from(league.manifest.print_runs.runs))
    finish = data.draw(st.sampled_from(["standard", "gilt", "holofoil"]))
    k = data.draw(st.integers(1, run.size(finish)))
    certificate = league.print_certificate(
        holder,
        serial_for(run.title, finish, k),
        title=run.title,
        card_set=run.set,
        finish=finish,
        issue=data.draw(st.integers(1, 2**31)),
        event=data.draw(st.integers(0, 2**53 - 1)),
    )
    chain = chain_of(certificate, holder, *recipients)
    note = league.note_certificate(
        holder, data.draw(st.sampled_from(["CZ-M1-000001", "CZ-M100-006000"]))
    )
    for obj in (certificate, note, league.manifest, *chain.endorsements, chain):
        assert type(obj).from_wire(obj.to_wire()) == obj
        assert type(obj).from_wire(json.dumps(obj.to_wire())) == obj
    for endorsement in chain.endorsements:
        assert Endorsement.from_wire(endorsement.to_wire()).hash() == endorsement.hash()
    slip = Slip(chains=(chain, chain_of(note, holder)))
    assert Slip.from_armor(slip.to_armor()) == slip
    expected = recipients[-1] if recipients else holder
    assert verify_league_chain(Chain.from_wire(chain.to_wire()), league.manifest) == expected.public
    other = data.draw(seeds)
    start = chain_of(certificate, holder)
    proof = FraudProof(
        first=endorse(start, holder, other.public, 1).endorsements[0],
        second=endorse(start, holder, holder.public, 2).endorsements[0],
    )
    assert FraudProof.from_wire(proof.to_wire()) == proof
    assert FraudProof.from_wire(proof.to_wire()).verify() == holder.public


def test_an_optional_member_left_out_when_none_is_refused_as_null() -> None:
    """A member that travels only when set (``work`` and ``portfolio`` of a table-open, a
    manifest's ``urls``) has one wire form: given as ``null`` it is refused as a schema error
    naming it, not left to fail later as a signature over other bytes (``bad-signature``)."""
    player = SigningKey.generate()
    fields: dict[str, Any] = {
        "league": "test-league",
        "manifest": encode_b64url(bytes(32)),
        "request_id": "request-0001",
        "time": 1_700_000_000,
        "player": player.public.to_text(),
        "venue": "clerk-1",
    }
    signed = TableOpen.sign(player, **fields).to_wire()
    assert "work" not in signed
    assert TableOpen.from_wire(signed).verify(player.public) is None
    for member in ("work", "portfolio"):
        with pytest.raises(SchemaError, match=f"{member} is absent when there is none, never"):
            TableOpen.from_wire({**signed, member: None})
