"""POST /mint/orders: the treasury's signed order stamps one print to a buyer (Book V.5
"buying with notes returns a stamped print"; issue 11): inside the fixed runs, outside the
buyer's stamping allowance, once per order id."""

from __future__ import annotations

import time
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient, stamp_request
from ledger.api.mint import Refused, Stamped
from ledger.api.problems import Problem
from ledger.api.treasury import MintOrder, OrderAnswer, mint_order
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.projection import PROJECTION


def order(
    key: SigningKey, manifest: LeagueManifest, buyer: SigningKey, order_id: str,
    title: str = "Tally", finish: str = "standard",
) -> MintOrder:
    return mint_order(
        key, manifest, order_id=order_id, owner=buyer.public.to_text(), title=title,
        finish=finish, at=int(time.time()),
    )


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
    assert (certificate.serial, certificate.issued_to) == (
        "CZ-TALLY-0001", buyer.public.to_text()
    )
    certificate.verify(PublicKey.from_text(manifest.mint))
    (logged,) = await stamped_events(server)
    assert (logged.certificate, logged.request_id, logged.ordered) == (
        certificate, "buy-00000001", True
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
