"""POST /treasury/buy: buying with notes returns a stamped print and exact change (Book V.5,
V.6, V.7; docs/architecture.md §4 "one arbiter of transfers").

The mint, the treasury and the notary are served in one app on a real port (each reaches the
others at it); the supply invariant and every projection rebuild are checked after every
test.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict, stamp_request
from ledger.api.treasury import BuyRequest, buy_request
from ledger.certificates import NoteCertificate
from ledger.endorsements import Chain, endorse
from ledger.events import TREASURY_EVENTS, PurchaseOpened, parse_event
from ledger.keys import PublicKey, SigningKey
from services.eventlog import Row
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.treasury import tables
from services.treasury.app import TREASURY_LOG
from services.treasury.writing import Group
from tests.harness.buying import (
    faucet,
    league,
    ordered,
    purchase_steps,
    server,
    settings,
    to_treasury,
)
from tests.harness.trading import T0
from tests.harness.treasury import Faucet, throttled_faucet

__all__ = ["faucet", "league", "server", "settings"]  # fixtures


async def notes_of(faucet: Faucet, owner: SigningKey, marks: int) -> list[Chain]:
    return [
        Chain(certificate=note, endorsements=())
        for note in (await faucet.claim(owner, marks)).notes
    ]


def purchase(
    faucet: Faucet, buyer: SigningKey, title: str, payment: Sequence[Chain], pid: str
) -> BuyRequest:
    return buy_request(buyer, faucet.manifest, title, payment, purchase_id=pid, at=int(time.time()))


def denominations(notes: Sequence[NoteCertificate]) -> list[int]:
    return sorted(note.denomination for note in notes)


async def test_buying_with_exact_money_and_with_change(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """M25 + M5 buys a common single (M30) exactly; M25 + M25 buys one with M20 change in
    notes made out to the buyer. Each purchase's stream has one event per step, the mint
    stamped each order once to the buyer, the paid notes are back in the reserve, and the
    same request again answers the same, marked a replay, taking no step."""
    buyer = SigningKey.generate()
    exact = [to_treasury(faucet, c, buyer) for c in await notes_of(faucet, buyer, 30)]
    first = await league.buy(purchase(faucet, buyer, "Tally", exact, "buy-exact-0001"))
    assert (first.outcome, first.price, first.paid, first.change) == ("delivered", 30, 30, [])
    assert first.stamped is not None
    assert (first.stamped.title, first.stamped.issued_to) == ("Tally", buyer.public.to_text())

    payer = SigningKey.generate()
    two = [to_treasury(faucet, c, payer) for c in await notes_of(faucet, payer, 50)]
    request = purchase(faucet, payer, "Pairing", two, "buy-change-01")
    second = await league.buy(request)
    assert (second.outcome, second.paid) == ("delivered", 50)
    assert denominations(second.change) == [5, 5, 5, 5]
    assert {n.issued_to for n in second.change} == {payer.public.to_text()}
    treasury = PublicKey.from_text(faucet.manifest.treasury)
    for note in second.change:
        note.verify(treasury)

    store = server.app[TREASURY_LOG]
    assert await purchase_steps(store, "buy-change-01") == [
        "purchase-opened",
        "payment-notarized",
        "order-signed",
        "print-delivered",
        "payment-returned",
        "purchase-closed",
    ]
    assert len(await ordered(server.app[MINT_LOG], "buy-change-01")) == 1
    again = await league.buy(request)
    assert (second.replayed, again.replayed) == (False, True)
    assert again == second.model_copy(update={"replayed": True})
    assert len(await purchase_steps(store, "buy-change-01")) == 6
    life = await league.provenance(two[0].serial)
    assert (life.standing, life.returns[-1].purchase_id) == ("in-reserve", "buy-change-01")


async def test_a_spent_note_an_old_issue_and_a_note_not_paid_to_the_treasury(
    faucet: Faucet, league: LeagueClient
) -> None:
    """A note spent once cannot pay again (its issue came back: stale-issue), not even after
    it is issued again to someone else; a note whose last hop is to a friend does not pay
    (broken-chain); too little money does not buy; a purchase id reused is 409."""
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    (note,) = await notes_of(faucet, buyer, 25)
    (five,) = await notes_of(faucet, buyer, 5)
    paid = [to_treasury(faucet, note, buyer), to_treasury(faucet, five, buyer)]
    assert (
        await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-spent-01"))
    ).outcome == "delivered"
    with pytest.raises(LeagueProblem) as spent:
        await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-spent-02"))
    assert (spent.value.status, spent.value.slug) == (409, "stale-issue")

    await faucet.claim(SigningKey.generate(), 30)  # the returned notes, issued again
    with pytest.raises(LeagueProblem) as old:
        await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-spent-03"))
    assert (old.value.slug, "current issue is 2" in (old.value.problem.detail or "")) == (
        "stale-issue",
        True,
    )

    buyer = SigningKey.generate()  # a fresh key: the faucet gives 50 marks a key a day
    (mine,) = await notes_of(faucet, buyer, 25)
    (more,) = await notes_of(faucet, buyer, 5)
    to_friend = endorse(mine, buyer, friend.public, T0)
    with pytest.raises(LeagueProblem) as wrong:
        await league.buy(
            purchase(
                faucet,
                buyer,
                "Tally",
                [to_friend, to_treasury(faucet, more, buyer)],
                "buy-friend-1",
            )
        )
    assert (wrong.value.status, wrong.value.slug) == (422, "broken-chain")
    with pytest.raises(LeagueProblem) as short:
        await league.buy(
            purchase(faucet, buyer, "Tally", [to_treasury(faucet, mine, buyer)], "buy-short-01")
        )
    assert (short.value.status, short.value.slug) == (422, "verification-failed")
    with pytest.raises(LeagueProblem) as reused:
        await league.buy(
            purchase(
                faucet,
                buyer,
                "Pairing",
                [to_treasury(faucet, mine, buyer), to_treasury(faucet, more, buyer)],
                "buy-spent-01",
            )
        )
    assert (reused.value.status, reused.value.slug) == (409, "request-id-reused")


async def test_a_note_endorsed_to_a_friend_and_to_the_treasury_is_spent_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """The buyer signs a note to a friend, which the notary records, and then pays with the
    same note: the purchase is rejected with the fraud proof convicting the buyer, nothing is
    stamped and the note stays the friend's. Paid first instead, the purchase is delivered
    and the friend's chain is refused with the fraud proof (V.6, V.7; L-17)."""
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    note, five = await notes_of(faucet, buyer, 30)
    await league.notarize([endorse(note, buyer, friend.public, T0)])
    paid = [to_treasury(faucet, note, buyer), to_treasury(faucet, five, buyer)]
    answer = await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-double-1"))
    assert (answer.outcome, answer.stamped, answer.change) == ("rejected", None, [])
    (proof,) = answer.proofs
    assert proof.verify() == buyer.public
    assert await ordered(server.app[MINT_LOG], "buy-double-1") == []
    assert (await league.provenance(note.serial)).holder == friend.public.to_text()

    buyer = SigningKey.generate()  # a fresh key: the faucet gives 50 marks a key a day
    note, five = await notes_of(faucet, buyer, 30)
    paid = [to_treasury(faucet, note, buyer), to_treasury(faucet, five, buyer)]
    assert (
        await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-double-2"))
    ).outcome == "delivered"
    with pytest.raises(NotaryConflict) as late:
        await league.notarize([endorse(note, buyer, friend.public, T0)])
    (conflict,) = late.value.conflicts
    assert conflict.proof.verify() == buyer.public
    assert conflict.proof.first == paid[0].endorsements[0]


async def test_an_exhausted_run_refunds_the_payment_in_full(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """The standard run of Escrow (3 in this league) stamped out: a purchase of it is
    refunded, the very notes paid issued back to the buyer under their next issue, and the
    refunded notes pay for another single."""
    stamper = SigningKey.generate()
    manifest = faucet.manifest
    await league.stamp(stamp_request(stamper, manifest, [("Escrow", "standard")] * 3))
    buyer = SigningKey.generate()
    paid = [to_treasury(faucet, c, buyer) for c in await notes_of(faucet, buyer, 50)]
    answer = await league.buy(purchase(faucet, buyer, "Escrow", paid, "buy-exhausted"))
    assert (answer.outcome, answer.stamped) == ("refunded", None)
    assert "exhausted" in (answer.reason or "")
    assert [(n.serial, n.issue, n.issued_to) for n in answer.refund] == [
        (c.serial, c.issue + 1, buyer.public.to_text()) for c in paid
    ]
    assert await purchase_steps(server.app[TREASURY_LOG], "buy-exhausted") == [
        "purchase-opened",
        "payment-notarized",
        "order-signed",
        "order-refused",
        "purchase-closed",
    ]
    again = [
        to_treasury(faucet, Chain(certificate=n, endorsements=()), buyer) for n in answer.refund
    ]
    bought = await league.buy(purchase(faucet, buyer, "Tally", again, "buy-after-refund"))
    assert (bought.outcome, denominations(bought.change)) == ("delivered", [5, 5, 5, 5])
    events = [parse_event(e, TREASURY_EVENTS) for e in await server.app[TREASURY_LOG].read()]
    assert sum(1 for e in events if getattr(e, "reason", None) == "refund") == 2


async def test_bundles_and_unknown_titles_are_not_sold(
    faucet: Faucet, league: LeagueClient
) -> None:
    """Only singles are sold for notes (V.5: bundles are never sold for money): a title the
    league does not print is refused; an uncommon single costs M60, so M50 does not buy it."""
    buyer = SigningKey.generate()
    paid = [to_treasury(faucet, c, buyer) for c in await notes_of(faucet, buyer, 50)]
    for title in ("Bundle", "Misprint"):
        with pytest.raises(LeagueProblem) as refused:
            await league.buy(purchase(faucet, buyer, title, paid, f"buy-{title.lower()}-01"))
        assert (refused.value.status, refused.value.slug) == (422, "unknown-title")
    with pytest.raises(LeagueProblem) as short:
        await league.buy(purchase(faucet, buyer, "Torsor", paid, "buy-uncommon"))
    assert "60 marks" in (short.value.problem.detail or "")  # an uncommon single is M60


async def test_a_chain_copied_from_the_feed_pays_nothing_for_a_thief(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """# L-21: a rejected purchase leaves the payer's other notes bound to the treasury, their
    chains public in ``purchase-opened``. A thief who copies such a chain into a purchase of
    their own beside a note of theirs is refused (422 broken-chain: the last endorsement is
    not the buyer's) and nothing moves; the victim's next purchase with the bound note is
    delivered."""
    victim, friend, thief = (SigningKey.generate() for _ in range(3))
    note, five = await notes_of(faucet, victim, 30)
    await league.notarize([endorse(note, victim, friend.public, T0)])  # signed away first
    paid = [to_treasury(faucet, note, victim), to_treasury(faucet, five, victim)]
    assert (
        await league.buy(purchase(faucet, victim, "Tally", paid, "buy-victim-1"))
    ).outcome == "rejected"
    store = server.app[TREASURY_LOG]
    (opened,) = [
        body
        for e in await store.read_stream("purchase/buy-victim-1")
        if isinstance(body := parse_event(e, TREASURY_EVENTS), PurchaseOpened)
    ]
    bound = next(c for c in opened.request.payment if c.serial == five.serial)  # the feed's copy
    own = [to_treasury(faucet, c, thief) for c in await notes_of(faucet, thief, 25)]
    with pytest.raises(LeagueProblem) as refused:
        await league.buy(purchase(faucet, thief, "Tally", [*own, bound], "buy-thief-01"))
    assert (refused.value.status, refused.value.slug) == (422, "broken-chain")
    assert "not the buyer's" in (refused.value.problem.detail or "")
    assert await purchase_steps(store, "buy-thief-01") == []

    donor = SigningKey.generate()  # the victim's day of claims is nearly used: a gift of 25
    more = [
        to_treasury(faucet, endorse(c, donor, victim.public, T0), victim)
        for c in await notes_of(faucet, donor, 25)
    ]
    answer = await league.buy(purchase(faucet, victim, "Tally", [bound, *more], "buy-victim-2"))
    assert (answer.outcome, answer.stamped and answer.stamped.issued_to) == (
        "delivered",
        victim.public.to_text(),
    )


async def test_a_source_buying_too_fast_is_refused(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """A source network may send source_prints_burst purchases at once: the next is a 429
    `rate-limited` with Retry-After before its signature is checked, and opens nothing (a
    rejected purchase moves no note, so without it the same notes opened purchase after
    purchase, each logged whole: an outsider's 290 in 28 s)."""
    async with throttled_faucet(make_settings, 2) as (faucet, server):
        buyer = SigningKey.generate()
        (note,) = (await faucet.claim(buyer, 25)).notes
        paid = endorse(
            Chain(certificate=note, endorsements=()),
            buyer,
            PublicKey.from_text(faucet.manifest.treasury),
            1_700_000_000,
        )
        request = buy_request(
            buyer, faucet.manifest, "Tally", [paid], purchase_id="buy-fast-0001", at=1_700_000_000
        )
        body = {**request.to_wire(), "sig": "A" * 86}
        statuses = []
        for _ in range(3):
            async with faucet.session.post(f"{faucet.url}/treasury/buy", json=body) as response:
                statuses.append(response.status)
                problem = await response.json(content_type=None)
        assert statuses == [422, 422, 429]
        assert problem["type"] == "/problems/rate-limited"
        assert (await server.app[TREASURY_LOG].head()).size == 1  # the claim alone


async def test_a_groups_closings_read_the_returned_notes_once(
    faucet: Faucet, league: LeagueClient, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closings of one transaction of the purchase writer read the reserve's returned
    notes once (more than the first asks, for those after it), each then seeing what it
    would have read alone: the same notes, lowest number first."""
    buyer = SigningKey.generate()
    paid = [to_treasury(faucet, c, buyer) for c in await notes_of(faucet, buyer, 50)]
    bought = await league.buy(purchase(faucet, buyer, "Tally", paid, "buy-returns-01"))
    assert bought.outcome == "delivered"  # the two M25 paid are back in the reserve
    store = server.app[TREASURY_LOG]
    async with store.transaction() as tx:
        first_seq = await tx.lock()
        alone = await tables.returned_notes(tx, Counter({25: 2}))
        reads = 0
        fetch = tx.fetch

        async def counted(query: str, *args: object) -> list[Row]:
            nonlocal reads
            reads += query == tables.RETURNED
            return await fetch(query, *args)

        monkeypatch.setattr(tx, "fetch", counted)
        group = Group(tx, first_seq, tx.now)
        assert await group.returned_notes(Counter({25: 1})) == {25: alone[25][:1]}
        assert await group.returned_notes(Counter({25: 2})) == alone
        assert reads == 1
