"""The mint's aiohttp app: routes and thin handlers over ``stamping`` and ``census``."""

from __future__ import annotations

from aiohttp import web

from ledger.api.mint import Census, OwnerCensus, StampAnswer
from ledger.api.treasury import MintOrder, MintOrders, OrderAnswer, OrdersAnswer
from ledger.errors import (
    AddressError,
    AllowanceExhausted,
    BadSignatureError,
    ChainError,
    InsufficientWork,
    KeyFormatError,
    MisprintGone,
    Overloaded,
    RateLimited,
    RequestIdReused,
    StaleRequest,
    UnknownTitle,
    VerificationError,
    WrongLeague,
)
from ledger.limits import MAX_REQUEST_BODY_BYTES
from ledger.manifest import LeagueManifest
from ledger.print_runs import serial_for
from ledger.requests import StampRequest
from ledger.tables import MisprintAward
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.http.logs import read_view
from services.http.metrics import sql_figure
from services.http.pages import Page
from services.kernel.compose import compose
from services.kernel.host import Running, ServiceSpec, Shell
from services.kernel.ratelimit import SourceBuckets, source_of
from services.kernel.settings import LeagueSettings
from services.mint import tables
from services.mint.census import census, owner_census
from services.mint.mint import Mint
from services.mint.misprint import Awarded, award
from services.mint.orders import Orderer, outcomes
from services.mint.stamping import Stamper

MINT = web.AppKey("mint", Mint)
MINT_LOG = web.AppKey("mint_log", EventStore)
STAMPER = web.AppKey("stamper", Stamper)
ORDERER = web.AppKey("orderer", Orderer)
SOURCES = web.AppKey("sources", SourceBuckets)

#: Largest stamp request body: a full batch of presented prints with room to spare.
MAX_STAMP_BODY = 32 * 1024
#: Largest order body: an upgrade's order carries the returned print's whole chain, which the
#: treasury took in a purchase of at most this size (L-20).
MAX_ORDER_BODY = MAX_REQUEST_BODY_BYTES


async def stamp_prints(request: web.Request, body: StampRequest) -> StampAnswer:
    # The source's bucket first: a flood costs its sender before it costs the mint a
    # signature check.
    await request.app[SOURCES].spend(source_of(request.remote), len(body.prints))
    return await request.app[STAMPER].stamp(body)


async def stamp_order(request: web.Request, body: MintOrder) -> OrderAnswer:
    return await request.app[ORDERER].order(body)


async def stamp_orders(request: web.Request, body: MintOrders) -> OrdersAnswer:
    return outcomes(await request.app[ORDERER].orders(body.orders), request.path)


async def read_census(request: web.Request) -> Census:
    return await census(request.app[MINT], read_view(request.app, MINT_LOG))


async def read_owner(request: web.Request) -> OwnerCensus:
    return await owner_census(request.app[MINT], request.match_info["address"])


async def read_manifest(request: web.Request) -> LeagueManifest:
    return request.app[MINT].manifest


async def census_page(request: web.Request, answer: Census) -> dict[str, object]:
    """The census page links each run's latest stamped serial to its provenance."""
    runs = request.app[MINT].manifest.print_runs
    latest = {
        (title.title, finish): serial_for(title.title, finish, count.stamped, runs)
        for title in answer.titles
        for finish, count in title.finishes.items()
        if count.stamped
    }
    return {"latest": latest}


#: What an order of the treasury's can be refused with, alone or in a batch.
ORDER_PROBLEMS = (
    BadSignatureError,
    KeyFormatError,
    WrongLeague,
    UnknownTitle,
    RequestIdReused,
    VerificationError,
    ChainError,
    Overloaded,
)


async def award_misprint(request: web.Request, body: MisprintAward) -> Awarded:
    return await award(request.app[MINT], body)


ENDPOINTS = (
    Endpoint(
        "POST",
        "/mint/stamp",
        "Stamp presented prints",
        stamp_prints,
        StampAnswer,
        body=StampRequest,
        problems=(
            BadSignatureError,
            KeyFormatError,
            WrongLeague,
            StaleRequest,
            UnknownTitle,
            RequestIdReused,
            InsufficientWork,
            RateLimited,
            AllowanceExhausted,
            Overloaded,
        ),
        max_body=MAX_STAMP_BODY,
        description=(
            "Presents unstamped prints in a request signed by the owner's key, each with a "
            "proof-of-work nonce worth its run's current price (the manifest's stamp_work, "
            "rising by tenths as the run empties to stamp_work_rise times it; see "
            "docs/economy.md). Each print that can be stamped receives the next serial of its "
            "finish's run and a certificate issued to the owner; an exhausted run, a nonce "
            "short of the price now, or the day's allowance used up refuses that item alone. "
            "A source network (IPv4 /24, IPv6 /56) may present source_prints_per_minute "
            "prints a minute in bursts of source_prints_burst (429 with Retry-After beyond). "
            "Replaying a request answers the same certificates and stamps nothing new; "
            "reusing its request_id for another body is a 409."
        ),
    ),
    Endpoint(
        "POST",
        "/mint/orders",
        "Stamp a print on the treasury's order (a purchase with notes)",
        stamp_order,
        OrderAnswer,
        body=MintOrder,
        problems=ORDER_PROBLEMS,
        max_body=MAX_ORDER_BODY,
        description=(
            "Stamps one print of the order's title and finish to the buyer it names, on an "
            "order signed by the treasury's key (Book V.5: buying with notes returns a stamped "
            "print): inside the fixed runs (an exhausted run refuses it, and the treasury "
            "refunds the purchase) and outside the buyer's daily stamping allowance, with no "
            "proof of work (the notes paid). Each order id is stamped once: a replay answers "
            "the same certificate or refusal and stamps nothing new; another order under the "
            "same id is a 409. A finish upgrade's order carries the returned standard print's "
            "whole chain, verified here (every signature and link; its last hop the buyer's "
            "endorsement to the mint's key: 422 broken-chain otherwise); the print is taken "
            "back in the order's transaction, and an exhausted run issues it again to the "
            "buyer (L-20)."
        ),
    ),
    Endpoint(
        "POST",
        "/mint/orders/batch",
        "Stamp prints on the treasury's orders, many in one request",
        stamp_orders,
        OrdersAnswer,
        body=MintOrders,
        problems=ORDER_PROBLEMS,
        max_body=MAX_ORDER_BODY,
        description=(
            "Up to 256 of the treasury's orders in one request, each answered as POST "
            "/mint/orders answers it alone, in order: its answer, or the problem document it "
            "would have been refused with (the others are answered all the same). Orders sent "
            "together are stamped in one transaction of the mint's log."
        ),
    ),
    Endpoint(
        "GET",
        "/ledger",
        "The census of every print run",
        read_census,
        Census,
        page=Page("ledger.html", lambda request: request.app[MINT].manifest, census_page),
    ),
    Endpoint(
        "GET",
        "/ledger/owners/{address}",
        "What the mint has stamped to the keys of an address",
        read_owner,
        OwnerCensus,
        problems=(AddressError,),
    ),
    Endpoint("GET", "/mint/manifest", "The league manifest", read_manifest, LeagueManifest),
    Endpoint(
        "POST",
        "/mint/misprint",
        "The Misprint CZ-TALLY-000, once, for a witnessed Balance at Chair VI or above",
        award_misprint,
        Awarded,
        body=MisprintAward,
        problems=(BadSignatureError, KeyFormatError, VerificationError, WrongLeague, MisprintGone),
        description=(
            "Takes a misprint-award signed by the tables key (docs/formats.md, 'Witnessed "
            "tables'). The first award gets the one mint-signed certificate of CZ-TALLY-000, "
            "outside the census and every run (Book IV.6, V.8), recorded as a print-stamped "
            "event naming the table; the same table's award again answers the same "
            "certificate; any other table's is 409 misprint-gone."
        ),
    ),
)


async def open_mint(shell: Shell) -> Running:
    """Bind the database to this league; the mint, its writers and its sources' buckets."""
    manifest = shell.manifest
    await tables.bind_league(shell.store, manifest)
    app = shell.app
    app[MINT] = mint = Mint(manifest, shell.key, shell.store)
    app[STAMPER] = stamper = Stamper(mint)
    app[ORDERER] = orderer = Orderer(mint)
    app[SOURCES] = shell.buckets("stamps", what="prints")
    return Running(close=(stamper.close, orderer.close))


SPEC = ServiceSpec(
    name="mint",
    title="THE WINDOW league: the mint",
    description=(
        "Stamps prints from the league's fixed, published print runs and publishes the "
        "census. Every stamp is an event in the mint's signed Merkle log."
    ),
    endpoints=ENDPOINTS,
    log_key=MINT_LOG,
    open=open_mint,
    figures=(
        sql_figure(
            "league_mint_run_remaining",
            "Prints the mint's runs have left to stamp, by finish",
            ("finish",),
            "SELECT finish, sum(size - stamped) FROM mint.runs GROUP BY finish",
        ),
    ),
)
SERVICE = SPEC.service()


def create_app(settings: LeagueSettings) -> web.Application:
    """The mint alone, over ``settings.database_url`` (migrated beforehand)."""
    return compose(settings, [SERVICE])
