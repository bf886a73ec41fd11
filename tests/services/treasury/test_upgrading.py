"""POST /treasury/buy with an upgrade: a finish upgrade bought with notes against a standard
print returned to the mint (Book V.5 "finish upgrade (gilt M80, holofoil M200)";
docs/architecture.md §3 "a print returned for a finish upgrade ... comes back to its issuer"; L-20).

The mint, the treasury and the notary are served in one app on a real port; the supply
invariant and every projection rebuild are checked after every test (the fixtures of
test_buying), and ``league audit``'s auditor runs over the three logs at the end of each.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import (
    LeagueClient,
    LeagueProblem,
    LeagueUnreachable,
    NotaryConflict,
    stamp_request,
)
from auditor import audit_url
from clients.cz_league import verified_provenance
from ledger.address import address_of
from ledger.api.mint import Stamped
from ledger.api.problems import Problem
from ledger.api.treasury import BuyRequest, ReturnedPrint, mint_order
from ledger.audit import AuditReport
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.events import (
    MINT_EVENTS,
    NOTARY_EVENTS,
    HopRecorded,
    PrintReissued,
    PrintReturned,
    parse_event,
)
from ledger.keys import PublicKey, SigningKey
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT, MINT_LOG
from services.mint.audit import audit_census
from services.notary.app import NOTARY_LOG
from services.treasury.app import TREASURY_LOG
from tests.harness.buying import faucet, league, ordered, purchase_steps, server
from tests.harness.crashed_saga import ORDER, crash_after_commit, install_around_calls, running
from tests.harness.mint import checkpoint_covering
from tests.harness.trading import T0
from tests.harness.treasury import Faucet
from tests.harness.upgrading import paid, settings, stamped, to_mint, upgrade
from tests.reliability.crashing import Killer

#: test_buying's fixtures, served here too.
__all__ = ["faucet", "league", "server", "settings"]


DELIVERED = [
    "purchase-opened",
    "payment-notarized",
    "order-signed",
    "print-delivered",
    "payment-returned",
    "purchase-closed",
]


async def mint_events(server: TestServer, pid: str) -> list[object]:
    found: list[object] = []
    for event in await server.app[MINT_LOG].read():
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintReturned | PrintReissued) and body.order_id == pid:
            found.append(body)
    return found


async def audited(server: TestServer, league: LeagueClient, tmp: Path) -> AuditReport:
    """``league audit`` of the served league once each log's checkpoint covers all of it
    (in this process): raises at the first violation."""
    for service, key in (("mint", MINT_LOG), ("treasury", TREASURY_LOG), ("notary", NOTARY_LOG)):
        await checkpoint_covering(league, (await server.app[key].head()).size, service)
    outcome = await audit_url(str(server.make_url("")), tmp / "audit", workers=0)
    return outcome.report


async def test_an_upgrade_to_gilt_with_change_and_to_holofoil(
    faucet: Faucet, league: LeagueClient, server: TestServer, tmp_path: Path
) -> None:
    """# V.5, L-20: M100 and a standard Tally returned to the mint buy a gilt Tally and M20 of
    change; the returned print is recorded back at the mint in the order's transaction, its
    chain is history (a hop after it is refused, stale-issue), and the gilt print is the
    buyer's. M200 and another standard Tally buy its holofoil exactly. The audit is clean."""
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    standard = await stamped(league, faucet, buyer, "Tally")
    returned = to_mint(faucet, standard, buyer)
    request = upgrade(
        faucet, buyer, "Tally", "gilt", returned, await paid(faucet, buyer, 100), "up-gilt-0001"
    )
    answer = await league.buy(request)
    assert (answer.outcome, answer.price, answer.paid) == ("delivered", 80, 100)
    assert answer.stamped is not None
    assert (answer.stamped.title, answer.stamped.finish, answer.stamped.issued_to) == (
        "Tally",
        "gilt",
        buyer.public.to_text(),
    )
    assert sum(n.denomination for n in answer.change) == 20
    assert await purchase_steps(server.app[TREASURY_LOG], "up-gilt-0001") == DELIVERED
    (back,) = await mint_events(server, "up-gilt-0001")
    assert isinstance(back, PrintReturned)
    assert (back.serial, back.issue) == (standard.serial, 1)
    assert len(await ordered(server.app[MINT_LOG], "up-gilt-0001")) == 1
    # A replay takes no step, and says it is one.
    assert await league.buy(request) == answer.model_copy(update={"replayed": True})
    # L-20: the census counts stamps; a return moves none of its counts.
    (tally,) = [t for t in (await league.census()).titles if t.title == "Tally"]
    assert (tally.finishes["standard"].stamped, tally.finishes["gilt"].stamped) == (1, 1)
    (mine,) = (await league.owner(address_of(buyer.public))).keys
    assert sorted((o.finish, o.owned) for o in mine.owned) == [("gilt", 1), ("standard", 1)]
    assert mine.allowance.used_today == 1  # the stamp; the ordered gilt print is outside it
    # V.8: its whole life, every proof checked as cz checks it; the mint holds it now.
    life, holder = await verified_provenance(league, faucet.manifest, standard.serial)
    assert life.holder == faucet.manifest.mint
    assert holder == PublicKey.from_text(faucet.manifest.mint)
    assert [(r.issue, r.purchase_id) for r in life.returns] == [(1, "up-gilt-0001")]
    assert life.issues == []
    with pytest.raises(NotaryConflict):  # signed away again at its hop to the mint: fraud
        await league.notarize([endorse(standard, buyer, friend.public, T0)])

    other = await stamped(league, faucet, buyer, "Tally")
    holo = upgrade(
        faucet,
        buyer,
        "Tally",
        "holofoil",
        to_mint(faucet, other, buyer),
        await paid(faucet, buyer, 200),
        "up-holo-0001",
    )
    answer = await league.buy(holo)
    assert (answer.outcome, answer.price, answer.change) == ("delivered", 200, [])
    assert answer.stamped is not None
    assert answer.stamped.finish == "holofoil"
    report = await audited(server, league, tmp_path)
    assert (report.returned_prints, report.reissued_prints) == (2, 0)
    assert report.treasury is not None
    assert report.treasury.purchases == {"delivered": 2}


async def test_a_print_endorsed_to_a_friend_and_returned_to_the_mint_moves_once(
    faucet: Faucet, league: LeagueClient, server: TestServer, tmp_path: Path
) -> None:
    """# V.6, V.7, L-20: the buyer gives a standard print to a friend (notarized) and then
    returns it for an upgrade: the purchase is rejected with the fraud proof convicting the
    buyer, the notes are not taken and nothing is stamped; returned first instead, the
    upgrade is delivered and the friend's chain is refused with the proof."""
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    standard = await stamped(league, faucet, buyer, "Tally")
    await league.notarize([endorse(standard, buyer, friend.public, T0)])
    payment = await paid(faucet, buyer, 80)
    answer = await league.buy(
        upgrade(
            faucet, buyer, "Tally", "gilt", to_mint(faucet, standard, buyer), payment, "up-fraud-01"
        )
    )
    assert (answer.outcome, answer.stamped) == ("rejected", None)
    (proof,) = answer.proofs
    assert proof.verify() == buyer.public
    assert await ordered(server.app[MINT_LOG], "up-fraud-01") == []
    assert await mint_events(server, "up-fraud-01") == []
    assert (await league.provenance(standard.serial)).holder == friend.public.to_text()
    # The notes were never taken: they pay for a single.
    single = await league.buy(
        BuyRequest.sign(
            buyer,
            league=faucet.manifest.league,
            manifest=faucet.manifest.hash_text(),
            purchase_id="up-fraud-02",
            time=int(time.time()),
            buyer=buyer.public.to_text(),
            title="Tally",
            payment=tuple(payment),
        )
    )
    assert single.outcome == "delivered"

    buyer = SigningKey.generate()
    standard = await stamped(league, faucet, buyer, "Tally")
    answer = await league.buy(
        upgrade(
            faucet,
            buyer,
            "Tally",
            "gilt",
            to_mint(faucet, standard, buyer),
            await paid(faucet, buyer, 80),
            "up-fraud-03",
        )
    )
    assert answer.outcome == "delivered"
    with pytest.raises(NotaryConflict) as late:
        await league.notarize([endorse(standard, buyer, friend.public, T0)])
    (conflict,) = late.value.conflicts
    assert conflict.proof.verify() == buyer.public
    await audited(server, league, tmp_path)


async def test_a_return_that_is_not_a_standard_print_of_the_title_or_not_the_buyers(
    faucet: Faucet, league: LeagueClient, server: TestServer, tmp_path: Path
) -> None:
    """# L-20: a gilt print returned, a standard print of another title, someone else's print,
    a print not endorsed to the mint, and a print already returned are refused when the
    purchase opens: nothing is notarized, stamped or paid."""
    buyer, other = SigningKey.generate(), SigningKey.generate()
    payment = await paid(faucet, buyer, 100)
    gilt = await stamped(league, faucet, buyer, "Tally", "gilt")
    pairing = await stamped(league, faucet, buyer, "Pairing")
    theirs = await stamped(league, faucet, other, "Tally")
    mine = await stamped(league, faucet, buyer, "Tally")
    cases = [
        ("up-bad-gilt", to_mint(faucet, gilt, buyer), 422, "verification-failed"),
        ("up-bad-title", to_mint(faucet, pairing, buyer), 422, "verification-failed"),
        ("up-bad-owner", to_mint(faucet, theirs, other), 422, "broken-chain"),
        ("up-bad-to", endorse(mine, buyer, other.public, T0), 422, "broken-chain"),
    ]
    for pid, returned, status, slug in cases:
        with pytest.raises(LeagueProblem) as refused:
            await league.buy(upgrade(faucet, buyer, "Tally", "gilt", returned, payment, pid))
        assert (pid, refused.value.status, refused.value.slug) == (pid, status, slug)
        assert await purchase_steps(server.app[TREASURY_LOG], pid) == []

    done = await league.buy(
        upgrade(faucet, buyer, "Tally", "gilt", to_mint(faucet, mine, buyer), payment, "up-ok-0001")
    )
    assert done.outcome == "delivered"
    with pytest.raises(LeagueProblem) as again:
        await league.buy(
            upgrade(
                faucet,
                buyer,
                "Tally",
                "gilt",
                to_mint(faucet, mine, buyer),
                await paid(faucet, buyer, 100),
                "up-again-01",
            )
        )
    assert (again.value.status, again.value.slug) == (409, "stale-issue")
    await audited(server, league, tmp_path)


async def test_an_exhausted_gilt_run_hands_back_the_notes_and_the_print(
    faucet: Faucet, league: LeagueClient, server: TestServer, tmp_path: Path
) -> None:
    """# V.5, L-18, L-20: the gilt run of Escrow (2 here) stamped out, an upgrade of it is
    refunded: the very notes paid issued back under their next issue, and the returned
    standard print issued back to the buyer by the mint as its issue 2, once. The print's
    issue 1 chain is history (stale-issue); its issue 2 moves."""
    stamper, buyer, friend = (SigningKey.generate() for _ in range(3))
    await league.stamp(stamp_request(stamper, faucet.manifest, [("Escrow", "gilt")] * 2))
    standard = await stamped(league, faucet, buyer, "Escrow")
    payment = await paid(faucet, buyer, 100)
    returned = to_mint(faucet, standard, buyer)
    answer = await league.buy(
        upgrade(faucet, buyer, "Escrow", "gilt", returned, payment, "up-empty-01")
    )
    assert (answer.outcome, answer.stamped) == ("refunded", None)
    assert "exhausted" in (answer.reason or "")
    assert [(n.serial, n.issue) for n in answer.refund] == [
        (c.serial, c.issue + 1) for c in payment
    ]
    back = answer.returned
    assert isinstance(back, PrintCertificate)
    assert (back.serial, back.issue, back.issued_to, back.finish) == (
        standard.serial,
        2,
        buyer.public.to_text(),
        "standard",
    )
    back.verify(PublicKey.from_text(faucet.manifest.mint))
    kinds = [type(e).__name__ for e in await mint_events(server, "up-empty-01")]
    assert kinds == ["PrintReturned", "PrintReissued"]
    assert await ordered(server.app[MINT_LOG], "up-empty-01") == []
    assert (await league.provenance(standard.serial)).holder == buyer.public.to_text()

    with pytest.raises(LeagueProblem) as history:  # issue 1 returned: history
        await league.notarize([returned])
    assert history.value.slug == "stale-issue"
    reissued = Chain(certificate=back, endorsements=())
    await league.notarize([endorse(reissued, buyer, friend.public, T0)])
    assert (await league.provenance(standard.serial)).holder == friend.public.to_text()
    # V.8: both issues, the return between them and each issue's chain, checked as cz does.
    life, holder = await verified_provenance(league, faucet.manifest, standard.serial)
    assert holder == friend.public
    assert [(i.certificate.issue, i.certificate.issued_to) for i in life.issues] == [
        (2, buyer.public.to_text())
    ]
    assert [(r.issue, r.purchase_id) for r in life.returns] == [(1, "up-empty-01")]
    assert [(h.receipt.issue, h.endorsement.hop) for h in life.hops] == [(1, 1), (2, 1)]
    report = await audited(server, league, tmp_path)
    assert (report.returned_prints, report.reissued_prints) == (1, 1)
    # The census (league verify) is the auditor's mint checker over the mint's store alone: a
    # print returned and issued again passes it without the other logs (L-20); 2 gilts, 1
    # standard stamped, the standard's issue 2 the buyer's.
    census = await audit_census(server.app[MINT])
    assert (census.prints, census.owners) == (3, 2)


async def test_an_upgrade_the_mint_refuses_without_its_print_is_not_refunded(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """# L-20: a purchase's print hop is notarized, then (the treasury crashed just after the
    commit of ``order-signed``, its fresh app's orders to the mint held back by a hook of the
    test) an order under another id, as only a defect sends, takes that very hop back at the
    mint. The purchase's own order is refused stale-issue without the print handed back: the
    treasury does not close it refunded (an upgrade refunded hands its print back) but keeps
    it open (503 retry-later) with its notes bound, and the mint took the print back once,
    issued nothing again and stamped once."""
    killer = Killer(None)
    killer.install(monkeypatch)
    orders = asyncio.Event()  # the treasury's orders to the mint wait for it
    install_around_calls(monkeypatch, "treasury", ORDER, before=orders.wait)
    manifest = load_manifest(settings)
    buyer = SigningKey.generate()
    pid = "up-held-0001"
    async with running(settings, killer) as league:
        mint = league.trio.instances["mint"].server
        (item,) = (
            await league.mint.stamp(stamp_request(buyer, manifest, [("Tally", "standard")]))
        ).items
        assert isinstance(item, Stamped)
        returned = endorse(
            Chain(certificate=item.certificate, endorsements=()),
            buyer,
            PublicKey.from_text(manifest.mint),
            T0,
        )
        faucet = league.faucet
        payment = await paid(faucet, buyer, 80)
        request = upgrade(faucet, buyer, "Tally", "gilt", returned, payment, pid)
        crash_after_commit(killer, "delivered", "order-signed")
        with pytest.raises(LeagueUnreachable):
            await league.treasury.buy(request)
        await league.trio.settled()
        assert killer.victim is not None
        assert killer.victim.service == "treasury"

        (hop,) = [
            e.seq
            for e in await league.log("notary").read()
            if isinstance(body := parse_event(e, NOTARY_EVENTS), HopRecorded)
            and body.endorsement == returned.endorsements[-1]
        ]
        treasury = load_service_key(settings, manifest, "treasury", None)
        other = await league.mint.order(
            mint_order(
                treasury,
                manifest,
                order_id="up-other-01",
                owner=buyer.public.to_text(),
                title="Tally",
                finish="gilt",
                at=int(time.time()),
                returned=ReturnedPrint(chain=returned, notarized=hop),
            )
        )
        assert isinstance(other.item, Stamped)

        orders.set()
        async with league.session.post(
            f"{league.trio.url('treasury')}/treasury/buy", json=request.to_wire()
        ) as response:
            text = await response.text()
        assert response.status == 503, text  # not refunded
        held = Problem.model_validate_json(text)
        assert held.type.rsplit("/", 1)[-1] == "retry-later"
        assert "without handing" in (held.detail or "")
        steps = await league.steps(pid)
        assert steps == ["purchase-opened", "payment-notarized", "order-signed"]
        assert await mint_events(mint, pid) == []
        kinds = [type(e).__name__ for e in await mint_events(mint, "up-other-01")]
        assert kinds == ["PrintReturned"]
        assert await ordered(mint.app[MINT_LOG], pid) == []
