"""The treasury's aiohttp app: routes and thin handlers over ``claiming`` and its tables."""

from __future__ import annotations

import logging

from aiohttp import web

from ledger.api.rewards import RewardAnswer, RewardOrder
from ledger.api.treasury import BuyAnswer, BuyRequest, ClaimAnswer, ClaimRequest, TreasurySupply
from ledger.errors import (
    AllowanceExhausted,
    BadSignatureError,
    ChainError,
    InsufficientWork,
    KeyFormatError,
    Overloaded,
    RateLimited,
    RequestIdReused,
    RetryLater,
    RunExhaustedError,
    StaleIssueError,
    StaleRequest,
    UnknownTitle,
    VerificationError,
    WrongLeague,
)
from ledger.limits import MAX_REQUEST_BODY_BYTES
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.http.logs import read_view
from services.http.pages import Page
from services.kernel.compose import compose
from services.kernel.host import Running, ServiceSpec, Shell
from services.kernel.ratelimit import SourceBuckets, source_of
from services.kernel.settings import LeagueSettings
from services.treasury import tables
from services.treasury.buying import Buyer, Peers
from services.treasury.claiming import Claimer
from services.treasury.rewarding import Rewarder
from services.treasury.treasury import Treasury

log = logging.getLogger(__name__)

TREASURY = web.AppKey("treasury", Treasury)
TREASURY_LOG = web.AppKey("treasury_log", EventStore)
CLAIMER = web.AppKey("claimer", Claimer)
CLAIM_SOURCES = web.AppKey("claim_sources", SourceBuckets)
BUY_SOURCES = web.AppKey("buy_sources", SourceBuckets)
BUYER = web.AppKey("buyer", Buyer)
REWARDER = web.AppKey("rewarder", Rewarder)

#: Largest claim body: one signed claim with room to spare.
MAX_CLAIM_BODY = 4 * 1024


async def claim_notes(request: web.Request, body: ClaimRequest) -> ClaimAnswer:
    # The source's bucket first: a flood costs its sender before it costs a signature check.
    await request.app[CLAIM_SOURCES].spend(source_of(request.remote), 1)
    return await request.app[CLAIMER].claim(body)


async def buy(request: web.Request, body: BuyRequest) -> BuyAnswer:
    # As for claims: a purchase the notary rejects moves no note, so the same notes could
    # open purchase after purchase, each logged whole; the source pays first.
    await request.app[BUY_SOURCES].spend(source_of(request.remote), 1)
    return await request.app[BUYER].buy(body)


async def pay_reward(request: web.Request, body: RewardOrder) -> RewardAnswer:
    # Signed by the tables key alone (checked before anything is read): no source pays.
    return await request.app[REWARDER].pay(body)


async def read_supply(request: web.Request) -> TreasurySupply:
    treasury = request.app[TREASURY]
    reads = read_view(request.app, TREASURY_LOG)
    checkpoint = await reads.served_checkpoint()
    rows = await tables.supply(reads)
    return TreasurySupply.of(
        treasury.manifest, {d: row.circulating for d, row in rows.items()}, str(checkpoint)
    )


ENDPOINTS = (
    Endpoint(
        "POST",
        "/treasury/claim",
        "Claim notes for unstamped marks (the faucet)",
        claim_notes,
        ClaimAnswer,
        body=ClaimRequest,
        problems=(
            BadSignatureError,
            KeyFormatError,
            WrongLeague,
            StaleRequest,
            RequestIdReused,
            InsufficientWork,
            RateLimited,
            AllowanceExhausted,
            RunExhaustedError,
            Overloaded,
        ),
        max_body=MAX_CLAIM_BODY,
        description=(
            "Converts unstamped marks into notes from the reserve (Book V.5), in a claim "
            "signed by the claimant's key with a proof-of-work nonce worth the claim's price "
            "(the manifest's stamp_work per 30 marks, rounded up; docs/economy.md). A key "
            "converts at most faucet_marks_per_day marks per UTC day (the database's clock): "
            "a claim converts the smaller of what it asks and what is left today, composed "
            "from the reserve largest denomination first, each note a fresh treasury-signed "
            "certificate of its next issue; the answer says what is left today, and a key "
            "with nothing left is refused (429, Retry-After to midnight UTC). A reserve "
            "that cannot make the amount refuses the claim (409). A source network (IPv4 "
            "/24, IPv6 /56) may claim source_prints_per_minute times a minute in bursts of "
            "source_prints_burst (429 with Retry-After beyond). Replaying a claim answers "
            "the same notes and issues nothing new; reusing its request_id for another body "
            "is a 409."
        ),
    ),
    Endpoint(
        "POST",
        "/treasury/buy",
        "Buy a single with notes: the print and exact change",
        buy,
        BuyAnswer,
        body=BuyRequest,
        problems=(
            BadSignatureError,
            KeyFormatError,
            WrongLeague,
            UnknownTitle,
            ChainError,
            StaleIssueError,
            VerificationError,
            RequestIdReused,
            RunExhaustedError,
            RetryLater,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Book V.5: buying with notes returns a stamped print and exact change. A purchase "
            "signed by the buyer names a title (a single, standard finish, priced by its "
            "set's rarity: M30/M60/M120/M240) and pays with whole note chains, each endorsed "
            "last to the treasury's key and of the note's current issue. The treasury has "
            "the notary record the payment, orders the print from the mint (inside the fixed "
            "runs, outside the buyer's stamping allowance), returns the paid notes to the "
            "reserve and issues the change; each step is an event of the purchase's stream. "
            "The answer says how it ended: delivered (the print and the change), refunded "
            "(the run was exhausted: the paid notes issued back) or rejected (the notary "
            "recorded another endorsement of a paid note first: its fraud proof). A service "
            "that does not answer leaves the purchase open (503 retry-later): the treasury "
            "completes it on its own, and the same request later answers how it ended. "
            "Reusing a purchase id for another purchase is a 409; bundles are never sold. A "
            "source network (IPv4 /24, IPv6 /56) may send source_prints_per_minute purchases "
            "a minute in bursts of source_prints_burst (429 with Retry-After beyond), asking "
            "again included."
        ),
    ),
    Endpoint(
        "POST",
        "/treasury/rewards",
        "Pay a witnessed table's reward: notes from the reserve, prints stamped by the mint",
        pay_reward,
        RewardAnswer,
        body=RewardOrder,
        problems=(
            BadSignatureError,
            KeyFormatError,
            WrongLeague,
            VerificationError,
            UnknownTitle,
            RequestIdReused,
            RetryLater,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            "Book IV.1-IV.6 paid for real (docs/economy.md): the tables service's reward "
            "order, signed by the tables key the manifest names, for one closed witnessed "
            "table's due as the player's witnessed campaign settles it. The treasury pays each "
            "table once: a reward-paid event at version 0 of stream reward/<table> with the "
            "marks issued as notes of the reserve (note-issued, reason reward, request id the "
            "table) and its signed mint orders of the prints (reward.<table>.<k>), which go to "
            "the mint through the purchases' order path (each stamped inside its run, or "
            "refused when the run is exhausted). The same order again answers the same "
            "payment (replayed) and pays nothing more; another order for a table already "
            "paid is a 409. A reserve that cannot make the marks, or a mint that does not "
            "answer, is 503 retry-later: the tables service asks again."
        ),
    ),
    Endpoint(
        "GET",
        "/treasury",
        "The currency's audit: supply, reserve and circulation per denomination",
        read_supply,
        TreasurySupply,
        page=Page("treasury.html", lambda request: request.app[TREASURY].manifest),
        description=(
            "Book V.8: /treasury audits the currency. Per denomination of the manifest's note "
            "set: the notes that exist (fixed), those in the reserve and those in circulation, "
            "reserve + circulation = supply; the same in marks, summing to the note set's "
            "total (1,500,000 marks in the published set); and the treasury log's latest "
            "signed checkpoint."
        ),
    ),
)


async def open_treasury(shell: Shell) -> Running:
    """Bind the database to this league; the treasury, its claimer and buyer, its sources'
    buckets; the leader resumes open purchases."""
    manifest = shell.manifest
    await tables.bind_league(shell.store, manifest)
    app = shell.app
    app[TREASURY] = treasury = Treasury(manifest, shell.key, shell.store)
    app[CLAIMER] = claimer = Claimer(treasury)
    app[CLAIM_SOURCES] = shell.buckets("claims", what="claims")
    app[BUY_SOURCES] = shell.buckets("purchases", what="purchases")
    app[BUYER] = buyer = Buyer(treasury, Peers(shell.peers["notary"], shell.peers["mint"]))
    app[REWARDER] = Rewarder(treasury, buyer)
    return Running(leader=(buyer.run,), close=(buyer.close, claimer.close))


SPEC = ServiceSpec(
    name="treasury",
    title="THE WINDOW league: the treasury",
    description=(
        "Issues notes from the league's fixed note set of 1,500,000 marks (the faucet) and "
        "publishes the supply. Every issue is an event in the treasury's signed Merkle log."
    ),
    endpoints=ENDPOINTS,
    log_key=TREASURY_LOG,
    open=open_treasury,
    peers=("notary", "mint"),
    max_body=MAX_REQUEST_BODY_BYTES,
    turns=True,
)
SERVICE = SPEC.service()


def create_app(settings: LeagueSettings) -> web.Application:
    """The treasury alone, over ``settings.database_url`` (migrated beforehand)."""
    return compose(settings, [SERVICE])
