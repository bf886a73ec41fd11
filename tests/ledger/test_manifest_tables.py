"""The tables service's key in the league manifest: named under the root signature, added to a
league founded without it by signing the manifest again, and never part of the manifest's id,
which every certificate and request names."""

from __future__ import annotations

import pytest

from ledger.errors import BadSignatureError, SchemaError
from ledger.manifest import LeagueManifest, with_tables
from ledger.wire import hash_text
from tests.ledger.factories import key, make_league


def test_the_tables_key_is_added_without_changing_the_manifest_id() -> None:
    """A manifest naming no tables key keeps its bytes and its id; the same manifest signed
    again naming one keeps the id (certificates issued before stay good) and is root-signed."""
    league = make_league()
    plain = league.manifest
    assert "tables" not in plain.to_wire()
    assert plain.hash_text() == hash_text(plain.hash())  # the id as it always was
    certificate = league.print_certificate(key(9))

    enrolled = with_tables(plain, league.root, key(5).public)
    assert enrolled.tables == key(5).public.to_text()
    assert enrolled.hash_text() == plain.hash_text()
    assert hash_text(enrolled.hash()) != plain.hash_text()  # the key is signed, not in the id
    parsed = LeagueManifest.from_wire(enrolled.to_wire())
    parsed.verify_root(key(1).public)
    parsed.check_certificate(certificate)
    moved = {**enrolled.to_wire(), "tables": key(6).public.to_text()}
    with pytest.raises(BadSignatureError):  # the key is signed with the rest
        LeagueManifest.from_wire(moved).verify_root()


def test_only_the_root_adds_the_tables_key_and_never_as_null() -> None:
    league = make_league()
    with pytest.raises(BadSignatureError):
        with_tables(league.manifest, key(7), key(5).public)
    with pytest.raises(SchemaError):
        LeagueManifest.from_wire({**league.manifest.to_wire(), "tables": None})
