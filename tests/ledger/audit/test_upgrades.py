"""The auditor's pure core (docs/operations.md "Auditing a running league"), over logs built in
memory with real signatures (tests/ledger/audit/world.py). Finish upgrades: prints returned to
the mint and issued again (L-20), each return matched to the notary's hop it names."""

from __future__ import annotations

import pytest

from ledger.audit import AuditFailure, Auditor
from ledger.endorsements import Chain, endorse
from ledger.events import (
    HopRecorded,
    PrintReturned,
)
from tests.ledger.audit.world import (
    World,
    a,
    b,
    both_paid,
    c,
    failure,
    mint_key,
    purchase,
    reissue,
    returned_to_mint,
    treasury_world,
    upgrade,
)
from tests.ledger.factories import chain_of


def test_a_print_returned_and_issued_again_passes(world: World) -> None:
    """L-20: a print taken back by the mint (its hop to the mint's key notarized) for a gilt
    upgrade, refused (an exhausted run) and refunded: issued again as issue 2 to the buyer,
    whose chain then moves, passes; the runs count the stamp once."""
    back = returned_to_mint(world, a)
    again = reissue(world, a)
    upgrade(world, a, back, reissued=again)
    world.notary.append(HopRecorded(issue=2, endorsement=chain_of(again, a, b).endorsements[0]))
    auditor = world.audit()
    report = auditor.report()
    assert (report.prints, report.hops) == (1, 8)  # and the four notes paid, two via a
    assert (report.returned_prints, report.reissued_prints, report.notarized_prints) == (1, 1, 1)
    assert report.treasury is not None
    assert report.treasury.purchases == {"refunded": 1}
    text = "\n".join(report.lines())
    assert (
        "upgrades: 1 prints returned to the mint, each once per issue for a purchase of "
        "that upgrade, 1 on their notarized hop" in text
    )
    assert "past its audited log" not in text
    assert auditor.holder("CZ-MODEL-A-0001") == b.public.to_text()


def test_a_print_taken_back_for_no_upgrade_and_given_to_anyone_fails(world: World) -> None:
    """L-20, as a reviewer reproduced it: the notary records a→b, never a hop to the mint;
    the mint says the print came back on notary seq 999 for a made-up order and issues it
    again to c. With no treasury log the return cannot be accounted for; with one, it names no
    purchase of that upgrade; with a's real upgrade open, c is not its buyer."""

    def forged(world: World, order: str) -> Chain:
        chain = world.stamp(a, "CZ-MODEL-A-0001")
        to_b = chain_of(chain.certificate, a, b)
        world.record(to_b, 1)
        back = endorse(to_b, b, mint_key.public, 1_700_000_200)
        world.mint.append(
            PrintReturned(
                serial=back.serial,
                issue=1,
                endorsement=back.endorsements[1],
                notarized=999,
                order_id=order,
            )
        )
        reissue(world, c, order)
        return back

    forged(world, "purchase-0666")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "the treasury serves no log" in caught.reason

    world.issue(a, "CZ-M25-000001")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "names no purchase opened with that print returned" in caught.reason

    bought = World(world.league)
    upgrade(bought, b, forged(bought, "purchase-0004"), closed=False)
    caught = failure(bought)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "who is not its buyer" in caught.reason


def test_a_return_past_the_notary_log_is_not_matched_and_not_notarized(world: World) -> None:
    """A return naming a notary seq past the log read is "not matched this run", under the
    mint, never counted notarized; one the log reached but never matched fails."""
    back = returned_to_mint(world, a, notarized=6)
    upgrade(world, a, back, closed=False)
    report = world.audit().report()
    assert (report.returned_prints, report.notarized_prints) == (1, 0)
    text = "\n".join(report.lines())
    assert "mint: 1 print returns name notary hops past its audited log" in text
    assert report.treasury is not None
    assert report.treasury.unmatched_returns == 0
    assert "treasury: 1 returns" not in text

    # The notary's log fed before the return: seq 0 was read, the return never matched.
    late = World(world.league)
    back = returned_to_mint(late, a)
    upgrade(late, a, back, closed=False)
    auditor = Auditor(late.league.manifest, late.league.root.public)
    for log in (late.mint, late.treasury, late.notary):
        auditor.checkpoint(log.service, log.checkpoint())
    auditor.add("mint", late.mint.events[:1])
    auditor.add("treasury", late.treasury.events)
    auditor.add("notary", late.notary.events)
    auditor.add("mint", late.mint.events[1:])
    with pytest.raises(AuditFailure) as caught:
        auditor.report()
    assert (caught.value.service, caught.value.seq) == ("mint", 1)
    assert "at seq 0, which its log (audited to 7 events) never matched" in caught.value.reason


def test_two_returns_naming_one_notary_hop_fail(world: World) -> None:
    """A note's return and a print's return naming the same notary seq: the second fails
    (one overwrote the other before, leaving the print's return unchecked)."""
    back = chain_of(world.stamp(a, "CZ-MODEL-A-0001").certificate, a, mint_key)
    # The mint's return, never notarized, names the notary's hop of the first paid note.
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=0,
            order_id="purchase-0004",
        )
    )
    seqs = upgrade(world, a, back, reissued=reissue(world, a))
    assert seqs[0] == 0
    caught = failure(world)
    assert caught.service == "treasury"
    assert (
        f"names the notary's hop at seq {seqs[0]}, which the mint's return at seq 1 "
        f"names too" in caught.reason
    )


def test_a_refunded_upgrade_without_its_print_back_fails(world: World) -> None:
    """L-20: a refunded upgrade hands its print back: one where the mint neither took the
    print nor issued it again fails."""
    back = chain_of(world.stamp(a, "CZ-MODEL-A-0001").certificate, a, mint_key)
    upgrade(world, a, back)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", len(world.treasury.events) - 1)
    assert "closed refunded but not exactly: the print returned for it is not handed back" in (
        caught.reason
    )


def test_a_print_returned_twice_or_issued_again_before_its_return_fails(world: World) -> None:
    """L-20: a print comes back once per issue, and is issued again only after it came back."""
    back = returned_to_mint(world, a)
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=1,
            order_id="purchase-0010",
        )
    )
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "returned as issue 1, but it is back at the mint" in caught.reason

    early = World(world.league)
    early.stamp(a, "CZ-MODEL-A-0001")
    reissue(early, a)
    caught = failure(early)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "is not back at the mint" in caught.reason


def test_a_return_naming_another_hop_or_a_hop_by_the_mint_fails(world: World) -> None:
    """L-20: a print's return names the notary's hop that records its endorsement to the
    mint's key; the mint never signs a print it took back away again."""
    chain = world.stamp(a, "CZ-MODEL-A-0001")
    to_b = chain_of(chain.certificate, a, b)
    world.record(to_b, 1)  # seq 0: a→b
    back = endorse(to_b, b, mint_key.public, 1_700_000_200)
    world.record(back, 2)  # seq 1: b→mint
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[1],
            notarized=0,
            order_id="purchase-0004",
        )
    )
    upgrade(world, b, back, closed=False)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "names the notary's hop at seq 0, which records another event" in caught.reason

    signed = World(world.league)
    back = returned_to_mint(signed, a)
    onward = endorse(back, mint_key, c.public, 1_700_000_200)
    signed.notary.append(HopRecorded(issue=1, endorsement=onward.endorsements[1]))
    caught = failure(signed)
    assert (caught.service, caught.seq) == ("notary", 1)
    assert "signed away by the mint" in caught.reason


def test_a_purchase_priced_off_the_published_price_fails(world: World) -> None:
    """V.5: a single is sold at its rarity's price (a common one M30), never another."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), price=25, change=("CZ-M25-000003",))
    caught = failure(world)
    assert caught.service == "treasury"
    assert "priced 25 marks, but the published price of a single of its title is 30" in (
        caught.reason
    )


def test_a_purchase_taking_a_chain_its_buyer_did_not_sign_over_fails(world: World) -> None:
    """# L-21: a purchase takes only what its buyer signed over; a chain endorsed to the
    treasury by another key (copied from the feed) in a purchase-opened fails the audit."""
    first, second = treasury_world(world)
    purchase(world, c, both_paid(world, first, second))  # a's hops, c the buyer
    caught = failure(world)
    assert caught.service == "treasury"
    assert "whose last endorsement is not its buyer's (L-21)" in caught.reason
