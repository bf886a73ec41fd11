"""The auditor's pure core (docs/operations.md "Auditing a running league"), over logs built in
memory with real signatures (tests/ledger/audit/world.py). The treasury's log audited: notes
issued once, inside the note set, dense issues, the supply and the faucet's cap, purchases
closed with exact change, refunds and rejections."""

from __future__ import annotations

import json

import pytest

from ledger.api.treasury import buy_request
from ledger.audit import Auditor, check_page, facts
from ledger.audit.facts import _Slow
from ledger.endorsements import endorse
from ledger.events import (
    EventBody,
    PaymentRejected,
    PurchaseClosed,
    PurchaseOpened,
)
from tests.ledger.audit.world import (
    World,
    a,
    b,
    both_paid,
    c,
    failure,
    pages_of,
    purchase,
    refunded,
    traded,
    treasury_key,
    treasury_world,
)
from tests.ledger.factories import chain_of


def test_a_treasury_log_passes(world: World) -> None:
    """Notes issued, notarized, paid to the treasury, returned and re-issued
    as change: every check passes; the report gives the treasury's figures."""
    traded(world)
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second))
    world.issue(b, "CZ-M25-000002", issue=2, request_id="claim-0003")  # re-issued, issue 2
    report = world.audit().report()
    figures = report.treasury
    assert figures is not None
    assert (figures.issues, figures.returns, figures.claimed) == (8, 2, 76)
    assert figures.purchases == {"delivered": 1}
    assert figures.note_hops == 4
    assert figures.denominations[1] == (25, 24_000, 23_999, 1)
    assert figures.denominations[2] == (5, 40_000, 39_996, 4)
    text = "\n".join(report.lines())
    assert "supply 1,500,000 marks after every event" in text
    assert "M25: 23999 in reserve, 1 out of 24000" in text
    assert [s.service for s in report.services] == ["mint", "treasury", "notary"]


def test_a_note_issued_twice_without_a_return_fails(world: World) -> None:
    """A note is never issued while out: issue 1 twice."""
    world.issue(a, "CZ-M25-000001")
    world.issue(b, "CZ-M25-000001", request_id="claim-0002")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "while its issue 1 is out" in caught.reason


def test_a_certificate_signed_by_another_key_fails(world: World) -> None:
    """Every note certificate is signed by the manifest's treasury key."""
    world.issue(a, "CZ-M25-000001")
    world.issue(a, "CZ-M5-000001", request_id="claim-0002", signer=world.league.mint)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "not signed by the league's treasury" in caught.reason


def test_a_serial_outside_the_note_set_fails(world: World) -> None:
    """A note's serial lies inside the manifest's note set (6,000 M100 notes)."""
    world.issue(a, "CZ-M100-006001")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 0)
    assert "note set" in caught.reason


def test_a_supply_broken_by_a_forged_issue_fails(world: World) -> None:
    """A forged issue 2 of a note whose issue 1 was never returned, at the stream version
    the service would write, would make the supply 1,500,025: named with its seq."""
    world.issue(a, "CZ-M25-000001")
    world.treasury.versions["note/CZ-M25-000001"] += 1  # as if a return had been written
    world.issue(c, "CZ-M25-000001", issue=2, request_id="claim-0002")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "the supply would be 1,500,025 marks, not 1,500,000" in caught.reason


def test_issue_numbers_are_dense(world: World) -> None:
    """Issue n only after issue n-1: a first issue numbered 2 fails."""
    world.issue(a, "CZ-M25-000001", issue=2)
    caught = failure(world)
    assert "where issue 1 is next" in caught.reason


def test_the_faucet_cap_per_key_and_day_holds(world: World) -> None:
    """Book V.5: at most the policy's 50 marks per key per UTC day: a 51st mark fails."""
    world.issue(a, "CZ-M25-000001")
    world.issue(a, "CZ-M25-000002")
    world.issue(b, "CZ-M1-000001", request_id="claim-0002")
    world.audit().report()
    world.issue(a, "CZ-M1-000002", request_id="claim-0003")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 3)
    assert "51 marks on 2026-12-02 (UTC), more than its 50 a day" in caught.reason


def test_a_hop_of_a_note_never_issued_fails(world: World) -> None:
    """The notary's hops of notes follow the treasury's issues."""
    world.issue(a, "CZ-M25-000001")
    other = world.league.note_certificate(a, "CZ-M25-000001", issue=2)
    world.record_note(chain_of(other, a, b), 1)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 0)
    assert "never issued" in caught.reason


def test_an_unknown_treasury_event_fails_naming_its_type(world: World) -> None:
    """An event type the auditor does not know fails loudly, naming it."""
    world.issue(a, "CZ-M25-000001")

    class Minted(EventBody):
        TYPE = "notes-minted"
        WHAT = "notes-minted event"
        serial: str

        def stream(self) -> str:
            return "note/CZ-M25-000002"

    world.treasury.append(Minted(serial="CZ-M25-000002"))
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "'notes-minted'" in caught.reason


def test_a_purchase_closed_without_exact_change_fails(world: World) -> None:
    """V.5 "exact change": paid M50 for a price of 30, changed only 15."""
    first, second = treasury_world(world)
    purchase(
        world,
        a,
        both_paid(world, first, second),
        change=("CZ-M5-000001", "CZ-M5-000002", "CZ-M5-000003"),
    )
    caught = failure(world)
    assert caught.service == "treasury"
    assert caught.seq == len(world.treasury.events) - 1
    assert "closed delivered but not exactly: paid 50" in caught.reason


def test_a_return_naming_another_notary_event_fails(world: World) -> None:
    """A note's return names the notary's hop that recorded its endorsement to the treasury."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), misnamed=-1)
    caught = failure(world)
    assert caught.service == "treasury"
    assert "names the notary's hop at seq" in caught.reason


def test_a_print_delivered_that_the_mint_never_stamped_fails(world: World) -> None:
    """Every purchase delivered is stamped: its print is the mint's stamp to the buyer."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), stamped=False)
    caught = failure(world)
    assert caught.service == "treasury"
    assert "which the mint's log did not stamp to its buyer" in caught.reason


def test_the_fast_path_gives_the_reference_verdicts_on_the_treasury(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The treasury's pages (issues, returns, a purchase's steps), clean or edited, get the
    same facts and failures from the fast path as from the protocol's own code."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second))
    pages = [("treasury", page) for page in pages_of(world.treasury, 3)]
    for event in world.treasury.events[:1] + world.treasury.events[-3:]:
        for change in (
            {"reason": "refund"},
            {"request_id": "claim-9999"},
            {"extra": 1},
            {"notarized": 0},
        ):
            raw = json.loads(event.model_dump_json())
            raw["body"].update(change)
            pages.append(("treasury", json.dumps({"events": [raw], "next_after": raw["seq"]})))
    context = Auditor(world.league.manifest, world.league.root.public).context
    fast = [check_page(context(service), text) for service, text in pages]
    assert sum(page.failure is None for page in fast) == len(pages_of(world.treasury, 3))
    with monkeypatch.context() as slow:

        def reference_only(*args: object) -> object:
            raise _Slow

        slow.setattr(facts, "_fast", reference_only)
        reference = [check_page(context(service), text) for service, text in pages]
    assert fast == reference


def test_a_refund_and_a_rejection_pass(world: World) -> None:
    """L-18: an exhausted run refunds the very notes paid (issue 2 to the buyer); a payment
    the notary refused closes rejected, moving nothing."""
    first, second = treasury_world(world)
    refunded(world, a, [chain_of(second.certificate, a, treasury_key)])
    pid = "purchase-0003"
    paid = endorse(first, b, treasury_key.public, 1_700_000_100)
    request = buy_request(
        b, world.league.manifest, "Tally", [paid], purchase_id=pid, at=1_700_000_000
    )
    world.treasury.append(PurchaseOpened(purchase_id=pid, request=request, price=30, paid=25))
    world.treasury.append(PaymentRejected(purchase_id=pid, reason="another endorsement"))
    world.treasury.append(PurchaseClosed(purchase_id=pid, outcome="rejected"))
    figures = world.audit().report().treasury
    assert figures is not None
    assert figures.purchases == {"refunded": 1, "rejected": 1}
    assert (figures.issues, figures.returns, figures.open_purchases) == (4, 1, 0)
    assert figures.denominations[1] == (25, 24_000, 23_998, 2)


def test_a_refund_short_of_the_payment_fails(world: World) -> None:
    """A refund gives back the whole payment: one of two paid notes kept fails."""
    _, second = treasury_world(world)
    third = chain_of(world.issue(c, "CZ-M1-000002", request_id="claim-0004").certificate, c, a)
    world.record_note(third, 1)  # c pays a, who pays (L-21)
    refunded(
        world,
        a,
        [
            chain_of(second.certificate, a, treasury_key),
            endorse(third, a, treasury_key.public, 1_700_000_100),
        ],
        short=1,
    )
    caught = failure(world)
    assert caught.service == "treasury"
    assert "closed refunded but not exactly: paid 26, refunded 25" in caught.reason
