"""The notary's aiohttp app: routes and thin handlers over ``notarizing`` and ``provenance``."""

from __future__ import annotations

import contextlib
import logging

from aiohttp import web

from ledger.api.notary import (
    Conflict,
    FraudConflict,
    NotarizeAnswer,
    NotarizeRequest,
    Provenance,
)
from ledger.api.problems import PROBLEM_JSON, PROBLEM_PREFIX
from ledger.api.provenance import ProvenanceChecks, provenance_checks
from ledger.errors import (
    BadSignatureError,
    ChainError,
    FraudDetected,
    KeyFormatError,
    LedgerError,
    NotStamped,
    RetryLater,
    SerialError,
    StaleIssueError,
    UnknownKindError,
    UnknownSerial,
    VerificationError,
)
from ledger.limits import MAX_NEW_HOPS_PER_CHAIN, MAX_REQUEST_BODY_BYTES
from ledger.note_set import parse_note_serial
from ledger.print_runs import MISPRINT_SERIAL, parse_serial
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.http.logs import read_view
from services.http.pages import Page, Search
from services.http.problems import problem_of, title_of
from services.kernel.compose import compose
from services.kernel.host import Running, ServiceSpec, Shell
from services.kernel.settings import LeagueSettings
from services.notary.following import MINT, TREASURY, IssuerLink
from services.notary.holders import holders_endpoint
from services.notary.notarizing import (
    MAX_CONFLICTS_PER_HOP,
    Conflicted,
    Notary,
    Writer,
    submit,
)
from services.notary.provenance import provenance
from services.notary.receipts import Receipts

log = logging.getLogger(__name__)

NOTARY = web.AppKey("notary", Notary)
NOTARY_LOG = web.AppKey("notary_log", EventStore)
WRITER = web.AppKey("notary_writer", Writer)
RECEIPTS = web.AppKey("receipts", Receipts)


async def notarize(request: web.Request, body: NotarizeRequest) -> NotarizeAnswer | web.Response:
    submitted = await submit(request.app[NOTARY], body)
    receipts = request.app[RECEIPTS]
    try:
        recorded = await request.app[WRITER].record(submitted)
    except Conflicted as conflicted:
        return await _conflict(request, conflicted)
    made = await receipts.of(recorded.seqs, recorded.fresh)
    return NotarizeAnswer(receipts=[made[seq] for seq in recorded.seqs], recorded=recorded.recorded)


async def _conflict(request: web.Request, conflicted: Conflicted) -> web.Response:
    """409 ``fraud``, with the prior record and the fraud proof of each conflicting hop."""
    priors = await request.app[RECEIPTS].of(found.prior for found in conflicted.found)
    slug, status = problem_of(FraudDetected)
    document = FraudConflict(
        type=PROBLEM_PREFIX + slug,
        title=title_of(slug),
        status=status,
        detail=conflicted.diagnostics(),
        instance=request.path,
        conflicts=[
            Conflict(
                serial=found.proof.first.serial,
                hop=found.proof.first.hop,
                prior=priors[found.prior],
                proof=found.proof,
            )
            for found in conflicted.found
        ],
    )
    return web.Response(status=status, text=document.model_dump_json(), content_type=PROBLEM_JSON)


async def read_provenance(request: web.Request) -> Provenance:
    return await provenance(
        request.app[NOTARY],
        request.app[RECEIPTS],
        request.match_info["serial"],
        read_view(request.app, NOTARY_LOG),
    )


#: Most issuer events one provenance page fetches to check its proofs (one per issue).
MAX_PAGE_EVENTS = 32


async def provenance_page(request: web.Request, life: Provenance) -> dict[str, object]:
    """Every proof of the page's account checked here, as ``cz provenance`` checks it: the
    issuer's events fetched from its feed (the mint's stamp and a print's issues again, or
    the treasury's issues of a note)."""
    notary = request.app[NOTARY]
    if life.standing == "outside-runs":
        checked = ProvenanceChecks((), None)
    else:
        issuer = notary.mint if life.stamp is not None else notary.treasury
        wanted = [(notary.mint, life.stamp.index)] if life.stamp is not None else []
        wanted += [(issuer, issued.index) for issued in life.issues]
        wanted += [(issuer, returned.index) for returned in life.returns]
        events = []
        for link, index in wanted[:MAX_PAGE_EVENTS]:
            if link.league is None:
                continue
            with contextlib.suppress(LedgerError):  # the proof that needs it says so
                page = await link.league.events(index - 1, 1, service=link.issuer.source)
                events += page.events[:1]
        checked = provenance_checks(life, notary.manifest, events)
    return {"checked": checked, "proofs": checked.by_ref()}


def searched_serial(request: web.Request, text: str) -> str:
    """A serial typed in the search box, if it is a print or note serial of this league."""
    serial, manifest = text.upper(), request.app[NOTARY].manifest
    if serial != MISPRINT_SERIAL:
        try:
            parse_note_serial(serial, manifest.note_set)
        except SerialError:
            parse_serial(serial, manifest.print_runs)
    return serial


ENDPOINTS = (
    Endpoint(
        "POST",
        "/notary/endorsements",
        "Notarize endorsements: a receipt per hop, or the fraud proof",
        notarize,
        NotarizeAnswer,
        body=NotarizeRequest,
        problems=(
            VerificationError,
            BadSignatureError,
            ChainError,
            StaleIssueError,
            NotStamped,
            FraudDetected,
            KeyFormatError,
            UnknownKindError,
            SerialError,
            RetryLater,
        ),
        max_body=MAX_REQUEST_BODY_BYTES,
        description=(
            'Takes an armored slip ({"slip": "-----BEGIN CZ SLIP-----..."}) or whole '
            'chains ({"chains": [...]}). Every chain is verified offline under the league '
            "manifest (the mint's certificate, every endorsement's prev link, holder and "
            "signature) and its certificate must be one the mint's feed stamped. The first "
            "endorsement recorded at each (serial, issue, hop) wins (Book V.6): new hops are "
            "recorded in order, all of the request or none of it, and every hop of every chain "
            "answers with a receipt signed by the notary (log index, a checkpoint covering "
            "it, the inclusion proof). Sending the same chains again answers the same "
            "receipts. A different endorsement at a recorded hop records nothing: 409 fraud, "
            "whose conflicts member carries the prior record's receipt and the fraud proof "
            f"(the log keeps at most {MAX_CONFLICTS_PER_HOP} conflicts per hop, the first "
            f"ones). A request records at most {MAX_NEW_HOPS_PER_CHAIN} new hops of one "
            "chain: more is 413 too-large, nothing recorded (ruling L-22)."
        ),
    ),
    Endpoint(
        "GET",
        "/provenance/{serial}",
        "One print's whole life: stamp, hops, conflicts, holder",
        read_provenance,
        Provenance,
        problems=(UnknownSerial, RetryLater),
        page=Page(
            "provenance.html",
            lambda request: request.app[NOTARY].manifest,
            provenance_page,
            search=Search("serial", searched_serial),
        ),
        description=(
            "The print's stamp from the mint's feed with the mint's inclusion proof, every "
            "recorded hop with its receipt, every refused conflict with its fraud proof, and "
            "the current holder as far as the notary knows. The Misprint CZ-TALLY-000 answers "
            "standing outside-runs (Book V.8); a serial nobody stamped is 404."
        ),
    ),
    holders_endpoint(NOTARY_LOG),
)


async def open_notary(shell: Shell) -> Running:
    """The notary, its links to the issuers it follows, its writer and receipts; the leader
    follows the issuers' feeds."""
    links = {
        issuer: IssuerLink(shell.store, shell.manifest, shell.peers[issuer.source], issuer)
        for issuer in (MINT, TREASURY)
    }
    notary = Notary(shell.manifest, shell.key, shell.store, links[MINT], links[TREASURY])
    app = shell.app
    app[NOTARY] = notary
    app[WRITER] = writer = Writer(notary)
    app[RECEIPTS] = Receipts(shell.store, shell.key, shell.checkpointer)
    following = tuple(link.run for link in links.values() if link.follower is not None)
    return Running(leader=following, close=(writer.close,))


SPEC = ServiceSpec(
    name="notary",
    title="THE WINDOW league: the notary",
    description=(
        "The one arbiter of transfers: records the first endorsement at each hop of every "
        "stamped print, answers receipts and fraud proofs, and tells each print's provenance. "
        "Every hop and every refused conflict is an event in the notary's signed Merkle log."
    ),
    endpoints=ENDPOINTS,
    log_key=NOTARY_LOG,
    open=open_notary,
    peers=(MINT.source, TREASURY.source),
    max_body=MAX_REQUEST_BODY_BYTES,
    # Not ready before it has read both issuers' feeds (/readyz counts their lag).
    follows=(MINT.source, TREASURY.source),
)
SERVICE = SPEC.service()


def create_app(settings: LeagueSettings) -> web.Application:
    """The notary alone, over ``settings.database_url`` (migrated beforehand)."""
    return compose(settings, [SERVICE])
