"""POST /mint/orders: the treasury's signed order stamps one print to a buyer (Book V.5
"buying with notes returns a stamped print"): inside the fixed runs, outside the
buyer's stamping allowance, once per order id; POST /mint/orders/batch: many at once, each
answered as alone."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, stamp_request
from ledger.api.mint import Refused, Stamped
from ledger.api.problems import Problem
from ledger.api.treasury import MintOrder, OrderAnswer, ReturnedPrint, mint_order
from ledger.endorsements import Chain, Endorsement, endorse
from ledger.events import MINT_EVENTS, PrintReissued, PrintReturned, PrintStamped, parse_event
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from ledger.wire import hash_text
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.projection import PROJECTION
from tests.harness.trading import T0


def order(
    key: SigningKey,
    manifest: LeagueManifest,
    buyer: SigningKey,
    order_id: str,
    title: str = "Tally",
    finish: str = "standard",
) -> MintOrder:
    return mint_order(
        key,
        manifest,
        order_id=order_id,
        owner=buyer.public.to_text(),
        title=title,
        finish=finish,
        at=int(time.time()),
    )


def upgrade_order(
    key: SigningKey,
    manifest: LeagueManifest,
    owner: str,
    order_id: str,
    returned: Chain,
    finish: str = "gilt",
) -> MintOrder:
    """The treasury's order of a ``finish`` Tally for ``owner`` against ``returned`` (its hop
    to the mint notarized at an index the mint takes on the treasury's word)."""
    return mint_order(
        key,
        manifest,
        order_id=order_id,
        owner=owner,
        title="Tally",
        finish=finish,
        at=int(time.time()),
        returned=ReturnedPrint(chain=returned, notarized=7),
    )


async def standard_tally(
    league: LeagueClient, manifest: LeagueManifest, owner: SigningKey
) -> Chain:
    """A standard Tally stamped to ``owner`` (the owner's own allowance)."""
    answer = await league.stamp(stamp_request(owner, manifest, [("Tally", "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped), item
    return Chain(certificate=item.certificate, endorsements=())


async def post(server: TestServer, body: MintOrder | dict[str, Any]) -> OrderAnswer | Problem:
    wire = body.to_wire() if isinstance(body, MintOrder) else body
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.make_url("/mint/orders"), json=wire) as response,
    ):
        text = await response.text()
        if response.status >= 400:
            assert response.content_type == "application/problem+json"
            return Problem.model_validate_json(text)
        return OrderAnswer.model_validate_json(text)


async def stamped_events(server: TestServer) -> list[PrintStamped]:
    events = await server.app[MINT_LOG].read()
    return [body for e in events if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)]


async def test_an_order_stamps_to_the_buyer_outside_the_allowance_once(
    settings: LeagueSettings, server: TestServer, league: LeagueClient
) -> None:
    """The treasury's order stamps the next serial of the run to the buyer, logged as
    ordered; the buyer's allowance is untouched (their own stamp next counts 1, not 2); the
    same order again answers the same certificate and logs nothing; another order under the
    same id is 409; the projection is what the log folds to."""
    manifest = load_manifest(settings)
    treasury = load_service_key(settings, manifest, "treasury", None)
    buyer = SigningKey.generate()
    placed = order(treasury, manifest, buyer, "buy-00000001")
    first = await post(server, placed)
    assert isinstance(first, OrderAnswer)
    assert not first.replayed
    assert isinstance(first.item, Stamped)
    certificate = first.item.certificate
    assert (certificate.serial, certificate.issued_to) == ("CZ-TALLY-0001", buyer.public.to_text())
    certificate.verify(PublicKey.from_text(manifest.mint))
    (logged,) = await stamped_events(server)
    assert (logged.certificate, logged.request_id, logged.ordered) == (
        certificate,
        "buy-00000001",
        True,
    )

    own = await league.stamp(stamp_request(buyer, manifest, [("Tally", "standard")]))
    assert own.allowance.used_today == 1
    assert [e.ordered for e in await stamped_events(server)] == [True, False]
    assert "ordered" not in (await server.app[MINT_LOG].read())[1].body

    again = await post(server, placed)  # the treasury resends the order it signed
    assert isinstance(again, OrderAnswer)
    assert again.replayed
    assert again.item == first.item
    assert len(await stamped_events(server)) == 2
    other = await post(server, order(treasury, manifest, buyer, "buy-00000001", "Pairing"))
    assert isinstance(other, Problem)
    assert (other.status, other.type.rsplit("/", 1)[-1]) == (409, "request-id-reused")
    assert (await rebuild(server.app[MINT_LOG], PROJECTION, commit=False)).agrees


async def test_an_order_not_signed_by_the_treasury_is_refused(
    settings: LeagueSettings, server: TestServer
) -> None:
    """Only the treasury orders: an order signed by the mint's own key, by a player, or
    altered after signing is refused (422 bad-signature) and nothing is stamped."""
    manifest = load_manifest(settings)
    buyer = SigningKey.generate()
    mint_key = load_service_key(settings, manifest, "mint", None)
    treasury = load_service_key(settings, manifest, "treasury", None)
    altered = order(treasury, manifest, buyer, "buy-00000002").to_wire()
    altered["owner"] = SigningKey.generate().public.to_text()
    for body in (
        order(mint_key, manifest, buyer, "buy-00000002"),
        order(buyer, manifest, buyer, "buy-00000002"),
        altered,
    ):
        refused = await post(server, body)
        assert isinstance(refused, Problem)
        assert (refused.status, refused.type.rsplit("/", 1)[-1]) == (422, "bad-signature")
    assert await stamped_events(server) == []


async def test_an_order_of_an_exhausted_run_is_refused_for_good(
    settings: LeagueSettings, server: TestServer
) -> None:
    """The runs are fixed: orders past the holofoil run of 1 are refused run-exhausted, the
    refusal is the order's answer for good (a replay repeats it), and nothing more is
    stamped."""
    manifest = load_manifest(settings)
    treasury = load_service_key(settings, manifest, "treasury", None)
    buyer = SigningKey.generate()
    first = await post(
        server, order(treasury, manifest, buyer, "buy-00000003", "Tally", "holofoil")
    )
    assert isinstance(first, OrderAnswer)
    assert isinstance(first.item, Stamped)
    late = order(treasury, manifest, buyer, "buy-00000004", "Tally", "holofoil")
    for expected_replayed in (False, True):
        refused = await post(server, late)
        assert isinstance(refused, OrderAnswer)
        assert refused.replayed is expected_replayed
        assert isinstance(refused.item, Refused)
        assert refused.item.problem == "run-exhausted"
    assert len(await stamped_events(server)) == 1


async def returns(server: TestServer) -> list[PrintReturned | PrintReissued]:
    return [
        body
        for e in await server.app[MINT_LOG].read()
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintReturned | PrintReissued)
    ]


async def test_an_upgrade_order_takes_the_print_back_once_and_a_second_hands_nothing_back(
    settings: LeagueSettings, server: TestServer, league: LeagueClient
) -> None:
    """# L-20: an upgrade order takes the buyer's standard print back (``print-returned``)
    and stamps the gilt print in one transaction. A second order returning the same hop (only
    a treasury's defect sends one) is refused stale-issue for good, hands nothing back (the
    print went back once, for the first order: issuing it again would issue it twice) and
    records nothing."""
    manifest = load_manifest(settings)
    treasury = load_service_key(settings, manifest, "treasury", None)
    mint_key = PublicKey.from_text(manifest.mint)
    buyer = SigningKey.generate()
    returned = endorse(await standard_tally(league, manifest, buyer), buyer, mint_key, T0)
    first = await post(
        server, upgrade_order(treasury, manifest, buyer.public.to_text(), "up-00000001", returned)
    )
    assert isinstance(first, OrderAnswer)
    assert isinstance(first.item, Stamped)
    assert (first.item.certificate.finish, first.item.certificate.issued_to) == (
        "gilt",
        buyer.public.to_text(),
    )
    assert first.reissued is None
    (back,) = await returns(server)
    assert isinstance(back, PrintReturned)
    assert (back.serial, back.issue, back.order_id, back.endorsement) == (
        returned.serial,
        1,
        "up-00000001",
        returned.endorsements[-1],
    )
    size = (await server.app[MINT_LOG].head()).size
    second = upgrade_order(treasury, manifest, buyer.public.to_text(), "up-00000002", returned)
    for expected_replayed in (False, True):
        refused = await post(server, second)
        assert isinstance(refused, OrderAnswer)
        assert refused.replayed is expected_replayed
        assert isinstance(refused.item, Refused)
        assert refused.item.problem == "stale-issue"
        assert "another order took this issue back" in refused.item.reason
        assert refused.reissued is None
    assert (await server.app[MINT_LOG].head()).size == size
    assert await returns(server) == [back]
    assert (await rebuild(server.app[MINT_LOG], PROJECTION, commit=False)).agrees


async def test_an_upgrade_order_whose_print_the_buyer_did_not_sign_back_is_refused(
    settings: LeagueSettings, server: TestServer, league: LeagueClient
) -> None:
    """# L-20, V.6: the mint verifies the returned print's whole chain itself, trusting the
    treasury's signature for nothing else: a hop to the mint signed by a key that did not hold
    the print, a buyer's hop ordered for another owner, an endorsement whose signature does
    not verify, a hop to another key than the mint's, and a chain missing a link are each
    refused (422) before anything is recorded; the same order id then serves an honest
    order."""
    manifest = load_manifest(settings)
    treasury = load_service_key(settings, manifest, "treasury", None)
    mint_key = PublicKey.from_text(manifest.mint)
    buyer, thief, friend = (SigningKey.generate() for _ in range(3))
    standard = await standard_tally(league, manifest, buyer)
    mine = buyer.public.to_text()
    honest = endorse(standard, buyer, mint_key, T0)
    stolen = Chain(
        certificate=standard.certificate,
        endorsements=(
            Endorsement.sign(
                thief,
                serial=standard.serial,
                hop=1,
                prev=hash_text(standard.certificate.hash()),
                to=manifest.mint,
                time=T0,
                **{"from": thief.public.to_text()},
            ),
        ),
    )
    altered = honest.endorsements[0].model_copy(update={"time": T0 + 1})
    via_friend = endorse(endorse(standard, buyer, friend.public, T0), friend, mint_key, T0)
    cases = [
        (thief.public.to_text(), stolen, "broken-chain"),  # signed by a key not holding it
        (thief.public.to_text(), honest, "broken-chain"),  # the buyer's hop, another owner
        (mine, Chain(certificate=standard.certificate, endorsements=(altered,)), "bad-signature"),
        (mine, endorse(standard, buyer, friend.public, T0), "broken-chain"),  # not to the mint
        (
            mine,
            Chain(certificate=standard.certificate, endorsements=via_friend.endorsements[1:]),
            "broken-chain",
        ),  # a link gone
        (mine, via_friend, "broken-chain"),  # the friend's hop, ordered for the buyer
    ]
    size = (await server.app[MINT_LOG].head()).size
    for owner, returned, slug in cases:
        refused = await post(
            server, upgrade_order(treasury, manifest, owner, "up-00000003", returned)
        )
        assert isinstance(refused, Problem)
        assert (slug, refused.status, refused.type.rsplit("/", 1)[-1]) == (slug, 422, slug)
    assert (await server.app[MINT_LOG].head()).size == size
    assert await returns(server) == []
    done = await post(server, upgrade_order(treasury, manifest, mine, "up-00000003", honest))
    assert isinstance(done, OrderAnswer)
    assert isinstance(done.item, Stamped)
    assert [type(b) for b in await returns(server)] == [PrintReturned]


async def test_orders_sent_together_are_each_answered_as_alone(
    settings: LeagueSettings, server: TestServer, league: LeagueClient
) -> None:
    """POST /mint/orders/batch (the treasury's form for purchases that arrive together):
    each order answered as POST /mint/orders answers it alone, in order; an order not signed
    by the treasury is refused alone (its problem in its place, the others stamped); a copy of
    an order in the same batch is its replay; an order answered before is replayed; the
    projection is what the log folds to (Book V.5)."""
    manifest = load_manifest(settings)
    treasury = load_service_key(settings, manifest, "treasury", None)
    buyer = SigningKey.generate()
    earlier = order(treasury, manifest, buyer, "buy-batch-0000")
    assert isinstance(await post(server, earlier), OrderAnswer)
    first = order(treasury, manifest, buyer, "buy-batch-0001", "Pairing")
    forged = order(SigningKey.generate(), manifest, buyer, "buy-batch-0002")
    second = order(treasury, manifest, buyer, "buy-batch-0003", "Escrow")
    outcomes = await league.orders([first, forged, second, first, earlier])
    assert [type(o).__name__ for o in outcomes] == [
        "OrderAnswer",
        "LeagueProblem",
        "OrderAnswer",
        "OrderAnswer",
        "OrderAnswer",
    ]
    one, refused, two, copy, replay = outcomes
    assert isinstance(refused, LeagueProblem)
    assert (refused.status, refused.slug) == (422, "bad-signature")
    assert isinstance(one, OrderAnswer)
    assert isinstance(two, OrderAnswer)
    assert isinstance(copy, OrderAnswer)
    assert isinstance(replay, OrderAnswer)
    assert (one.replayed, two.replayed, copy.replayed, replay.replayed) == (
        False,
        False,
        True,
        True,
    )
    assert copy.item == one.item
    stamped = [(e.request_id, e.certificate.serial) for e in await stamped_events(server)]
    assert stamped == [
        ("buy-batch-0000", "CZ-TALLY-0001"),
        ("buy-batch-0001", "CZ-PAIRING-0001"),
        ("buy-batch-0003", "CZ-ESCROW-0001"),
    ]
    assert (await rebuild(server.app[MINT_LOG], PROJECTION, commit=False)).agrees
