"""The owner-signed stamp request (ledger/requests.py): its signature, its kind, its limits."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.errors import BadSignatureError, SchemaError, UnknownKindError
from ledger.keys import SigningKey
from ledger.limits import MAX_STAMP_BATCH
from ledger.requests import StampRequest
from tests.ledger.factories import League


def _fields(league: League, owner: SigningKey, prints: int = 1) -> dict[str, Any]:
    return {
        "league": league.manifest.league,
        "manifest": league.manifest.hash_text(),
        "request_id": "req-00000001",
        "time": 1_800_000_000,
        "owner": owner.public.to_text(),
        "prints": [{"title": "Model-A", "finish": "gilt"}] * prints,
        "work": [7] * prints,
    }


def test_a_signed_request_round_trips_and_verifies_under_its_owner(
    league: League, alice: SigningKey, bob: SigningKey
) -> None:
    """A stamp request parses back equal from its wire form; only the owner's key verifies it."""
    request = StampRequest.sign(alice, **_fields(league, alice))
    again = StampRequest.from_wire(request.to_wire())
    assert again == request
    again.verify(alice.public)
    with pytest.raises(BadSignatureError):
        again.verify(bob.public)


def test_an_edited_request_no_longer_verifies(league: League, alice: SigningKey) -> None:
    """Changing a presented finish after signing breaks the owner's signature."""
    wire = StampRequest.sign(alice, **_fields(league, alice)).to_wire()
    wire["prints"] = [{"title": "Model-A", "finish": "holofoil"}]
    with pytest.raises(BadSignatureError):
        StampRequest.from_wire(wire).verify(alice.public)


def test_a_batch_is_limited_and_never_empty(league: League, alice: SigningKey) -> None:
    """More than MAX_STAMP_BATCH prints, or none, is a SchemaError before anything is signed."""
    StampRequest.sign(alice, **_fields(league, alice, MAX_STAMP_BATCH))
    for count in (0, MAX_STAMP_BATCH + 1):
        with pytest.raises(SchemaError):
            StampRequest.sign(alice, **_fields(league, alice, count))


def test_another_kind_is_refused_before_it_is_read(league: League, alice: SigningKey) -> None:
    """A signed object of another kind is an UnknownKindError, not a stamp request."""
    wire = StampRequest.sign(alice, **_fields(league, alice)).to_wire()
    with pytest.raises(UnknownKindError):
        StampRequest.from_wire({**wire, "kind": "print"})


def test_one_nonce_per_print(league: League, alice: SigningKey) -> None:
    """A request carries exactly one proof-of-work nonce per print, each an unsigned integer
    canonical JSON carries exactly (at most 2**53 − 1; docs/economy.md): a larger one is
    refused by the schema the OpenAPI documents publish, not later as not canonicalizable."""
    assert StampRequest.sign(alice, **{**_fields(league, alice), "work": [2**53 - 1]})
    for work in ([], [1, 2], [-1], [2**53], [2**64]):
        with pytest.raises(SchemaError):
            StampRequest.sign(alice, **{**_fields(league, alice), "work": work})
