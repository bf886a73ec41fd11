"""Print and note certificates (docs/architecture.md §3): shape, signatures, fit with the
manifest."""

from __future__ import annotations

import pytest

from ledger.certificates import NoteCertificate, PrintCertificate, certificate_from_wire
from ledger.errors import (
    BadSignatureError,
    KeyFormatError,
    SchemaError,
    SerialError,
    UnknownKindError,
    VerificationError,
)
from ledger.keys import SigningKey
from tests.ledger.factories import League, make_league


def test_print_certificate_is_mint_signed_and_fits_the_runs(
    league: League, alice: SigningKey
) -> None:
    """A print certificate verifies under the mint key the manifest names, and its serial,
    title, set and finish agree with the manifest's runs."""
    certificate = league.print_certificate(alice)
    assert league.manifest.issuer_key(certificate) == league.mint.public
    certificate.verify(league.mint.public)
    league.manifest.check_certificate(certificate)
    with pytest.raises(BadSignatureError):
        certificate.verify(league.treasury.public)


def test_note_certificate_is_treasury_signed_and_in_the_note_set(
    league: League, alice: SigningKey
) -> None:
    """A note certificate verifies under the treasury key and names a note of the set."""
    note = league.note_certificate(alice, "CZ-M100-006000")
    assert note.denomination == 100
    assert league.manifest.issuer_key(note) == league.treasury.public
    note.verify(league.treasury.public)
    league.manifest.check_certificate(note)
    with pytest.raises(BadSignatureError):
        note.verify(league.mint.public)


def test_certificate_under_another_manifest_is_refused(league: League, alice: SigningKey) -> None:
    """A certificate names the hash of its manifest; another league's manifest refuses it."""
    other = make_league(name="Other League")
    certificate = other.print_certificate(alice)
    with pytest.raises(VerificationError, match="another manifest"):
        league.manifest.check_certificate(certificate)


@pytest.mark.parametrize(
    ("serial", "finish", "card_set", "error"),
    [
        ("CZ-MODEL-A-1201", "standard", "begotten", VerificationError),  # gilt range
        ("CZ-MODEL-A-0042", "standard", "base", VerificationError),  # wrong set
        ("CZ-MODEL-A-1601", "holofoil", "begotten", SerialError),  # past the run
    ],
)
def test_certificate_disagreeing_with_the_runs_is_refused(
    league: League, alice: SigningKey, serial: str, finish: str, card_set: str, error: type
) -> None:
    """A mint-signed certificate whose finish or set the runs contradict, or whose number is
    past the run, does not fit the league."""
    certificate = league.print_certificate(alice, serial, finish=finish, card_set=card_set)
    with pytest.raises(error):
        league.manifest.check_certificate(certificate)


def test_misprint_is_a_certificate_outside_the_runs(league: League, alice: SigningKey) -> None:
    """CZ-TALLY-000 with finish misprint fits the league though no run holds it; any other
    serial cannot claim the misprint finish, nor the misprint serial another finish."""
    misprint = league.print_certificate(
        alice, "CZ-TALLY-000", title="Tally", card_set="base", finish="misprint"
    )
    league.manifest.check_certificate(misprint)
    with pytest.raises(SchemaError, match="misprint"):
        league.print_certificate(
            alice, "CZ-TALLY-0001", title="Tally", card_set="base", finish="misprint"
        )
    with pytest.raises(SchemaError):
        league.print_certificate(alice, "CZ-TALLY-000", title="Tally", card_set="base")


@pytest.mark.parametrize(
    "change",
    [
        {"title": "Model-B"},
        {"serial": "CZ-MODEL-A-42"},
        {"serial": "CZ-MODEL-A-٠٠٤٢"},
        {"finish": "shiny"},
        {"issue": 0},
        {"event": -1},
        {"event": "7"},
        {"issue": True},
        {"extra": 1},
    ],
)
def test_malformed_print_certificates_are_refused(
    league: League, alice: SigningKey, change: dict[str, object]
) -> None:
    """Shape errors (serial not of the title, unknown finish, bad numbers, unknown fields)
    are SchemaErrors on parse."""
    wire = {**league.print_certificate(alice).to_wire(), **change}
    with pytest.raises(SchemaError):
        PrintCertificate.from_wire(wire)


def test_note_serial_must_match_its_denomination(league: League, alice: SigningKey) -> None:
    """An M25 certificate cannot carry an M100 serial."""
    wire = {**league.note_certificate(alice).to_wire(), "denomination": 100}
    with pytest.raises(SchemaError, match="M100"):
        NoteCertificate.from_wire(wire)


def test_kinds_are_checked_before_anything_else(league: League, alice: SigningKey) -> None:
    """A note given to the print parser (and any unknown kind) is an UnknownKindError."""
    note = league.note_certificate(alice).to_wire()
    with pytest.raises(UnknownKindError, match="print certificate"):
        PrintCertificate.from_wire(note)
    with pytest.raises(UnknownKindError):
        certificate_from_wire({**note, "kind": "coupon"})
    assert certificate_from_wire(note) == league.note_certificate(alice)


@pytest.mark.parametrize(
    "issued_to",
    [
        "AAAA",  # too short
        "A" * 44,  # 33 bytes
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",  # non-zero trailing bits: not canonical
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",  # padded
        "+AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # standard alphabet
    ],
)
def test_bad_keys_are_refused_as_key_errors(
    league: League, alice: SigningKey, issued_to: str
) -> None:
    """A key of the wrong length or in non-canonical base64url is a KeyFormatError naming
    the field."""
    wire = {**league.print_certificate(alice).to_wire(), "issued_to": issued_to}
    with pytest.raises(KeyFormatError, match="issued_to"):
        PrintCertificate.from_wire(wire)
