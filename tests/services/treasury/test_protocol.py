"""The treasury's protocol objects, pure: its events, the signed claim and the supply answer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger.api.treasury import (
    CHEAPEST_SINGLE_MARKS,
    ClaimRequest,
    DenominationSupply,
    TreasurySupply,
    claim_request,
    claim_work,
)
from ledger.endorsements import Chain, endorse
from ledger.errors import BadSignatureError, SchemaError
from ledger.events import (
    TREASURY_EVENTS,
    NoteIssued,
    NoteReturned,
    body_as,
    note_stream,
    parse_event,
)
from ledger.leaf import Event
from ledger.manifest import DEFAULT_POLICIES
from ledger.work import challenge, meets
from tests.ledger.factories import key, make_league

LEAGUE = make_league()
T0 = 1_800_000_000


def as_event(seq: int, body: NoteIssued | NoteReturned) -> Event:
    new = body.new_event(0)
    return Event(
        seq=seq,
        stream=new.stream,
        stream_version=1,
        type=new.type,
        body=dict(new.body),
        recorded_at=datetime(2026, 12, 3, tzinfo=UTC),
        leaf_hash=bytes(32),
        signature=bytes(64),
    )


def test_note_events_round_trip_through_the_log_types() -> None:
    """An issue and a return of one note live in the note's stream and parse back as the
    models their types name; another type is refused."""
    holder = key(10)
    certificate = LEAGUE.note_certificate(holder, "CZ-M100-000001", issue=2)
    issued = NoteIssued(certificate=certificate, request_id="claim-0001", reason="claim")
    chain = endorse(
        Chain(certificate=certificate, endorsements=()), holder, LEAGUE.treasury.public, T0
    )
    returned = NoteReturned(
        serial=certificate.serial,
        issue=2,
        endorsement=chain.endorsements[0],
        notarized=7,
        purchase_id="buy-00000001",
    )
    assert issued.stream() == returned.stream() == note_stream("CZ-M100-000001")
    assert parse_event(as_event(0, issued), TREASURY_EVENTS) == issued
    assert body_as(as_event(1, returned), NoteReturned) == returned
    with pytest.raises(SchemaError):
        body_as(as_event(0, issued), NoteReturned)
    with pytest.raises(SchemaError):
        NoteIssued.from_wire({**issued.to_wire(), "reason": "gift"})


def test_a_claim_is_signed_and_carries_work_at_its_price() -> None:
    """The claim verifies under its owner's key only; its nonce meets the price of its marks
    and is bound to the request (changing the marks unbinds it)."""
    owner = key(11)
    policies = DEFAULT_POLICIES.model_copy(update={"stamp_work": 64})
    manifest = make_league(policies=policies).manifest
    claim = claim_request(owner, manifest, 50, request_id="claim-0001", at=T0)
    claim.verify(owner.public)
    with pytest.raises(BadSignatureError):
        claim.verify(key(12).public)
    price = claim_work(policies, 50)
    assert price == -(-64 * 50 // CHEAPEST_SINGLE_MARKS) == 107
    assert meets(challenge(claim.to_wire()), 0, claim.work, price)
    moved = {**claim.to_wire(), "marks": 49}
    assert challenge(moved) != challenge(claim.to_wire())
    with pytest.raises(SchemaError):
        ClaimRequest.from_wire({**claim.to_wire(), "marks": 0})
    assert claim_work(DEFAULT_POLICIES.model_copy(update={"stamp_work": 1}), 1) == 1


def test_the_supply_answer_sums_to_the_note_set() -> None:
    """Reserve + circulation is the supply per denomination, and the published set is
    1,500,000 marks however many notes are out; a count that does not add up is refused."""
    supply = TreasurySupply.of(LEAGUE.manifest, {100: 6, 1: 3}, checkpoint="x")
    assert supply.marks.supply == 1_500_000
    assert supply.marks.circulation == 603
    assert supply.marks.reserve + supply.marks.circulation == 1_500_000
    with pytest.raises(ValueError, match="reserve \\+ circulation is not the supply"):
        DenominationSupply(denomination=5, supply=10, reserve=6, circulation=5)
    with pytest.raises(ValueError, match="reserve \\+ circulation is not the supply"):
        TreasurySupply.of(LEAGUE.manifest, {25: 24_001}, checkpoint="x")
