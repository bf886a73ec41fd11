"""An API client of a league server (aiohttp): the mint and the notary now, the treasury later.

One place for the timeout (:data:`DEFAULT_TIMEOUT` per call) and for retries: made with
``retries=MAX_RETRIES``, a client retries a 503 or 429 with backoff, honouring a short
``Retry-After`` (:func:`retry_wait`).
Every problem+json answer becomes a :class:`LeagueProblem` (a ``LedgerError``, so ``cz`` prints
it on one line like any other refusal). Answers are parsed into the services' own models, and
what can be verified offline is: the manifest's root signature, every certificate's mint
signature and that it names the owner.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import aiohttp
import orjson
from pydantic import BaseModel, ValidationError
from yarl import URL

from ledger.api.logs import ConsistencyProof, Feed, InclusionProof
from ledger.api.mint import Census, OwnerCensus, StampAnswer, Stamped
from ledger.api.notary import Conflict, FraudConflict, NotarizeAnswer, Provenance
from ledger.api.problems import PROBLEM_JSON, Problem
from ledger.api.tables import TableEvents, TableView
from ledger.api.treasury import (
    BuyAnswer,
    BuyRequest,
    ClaimAnswer,
    ClaimRequest,
    MintOrder,
    OrderAnswer,
    OrdersAnswer,
)
from ledger.certificates import PrintCertificate
from ledger.checkpoint import Checkpoint
from ledger.endorsements import Chain
from ledger.errors import (
    DecodeError,
    LedgerError,
    SchemaError,
    SizeLimitError,
    VerificationError,
)
from ledger.keys import PublicKey, SigningKey
from ledger.limits import KIB, MAX_ANSWER_BYTES, MAX_NEW_HOPS_PER_CHAIN
from ledger.manifest import LeagueManifest
from ledger.requests import StampRequest
from ledger.tables import TableJoin, TableMove, TableOpen, TableSeed
from ledger.work import challenge, request_work, solve

M = TypeVar("M", bound=BaseModel)


def _json_text(body: Any) -> str:
    """A request's JSON body (``json=``): orjson's compact text, as the stdlib's but some
    ten times faster (bodies are wire objects: string keys, integers within 2**53)."""
    return orjson.dumps(body).decode()


#: How long one call may take before the client gives up (seconds).
DEFAULT_TIMEOUT = 30.0


#: Retries of a call the league answered 503 (overloaded) or 429 (rate limited), for a client
#: made with ``retries=MAX_RETRIES`` (the player's ``cz``; services following each other keep
#: their own retry loops and the default of none) ...
MAX_RETRIES = 3
#: ... as long as it asks to wait no longer than this (seconds): a daily allowance that
#: resets at midnight is answered at once, not slept through.
MAX_RETRY_WAIT = 10.0
#: The first backoff when no Retry-After is given (doubling per attempt).
BACKOFF = 0.25


def retry_wait(
    status: int, headers: Mapping[str, str], attempt: int, retries: int = MAX_RETRIES
) -> float | None:
    """Seconds to wait before retrying an answer of ``status``, or None to give up now:
    ``Retry-After`` (delta-seconds) honoured, else exponential backoff from :data:`BACKOFF`,
    at most ``retries`` times and never longer than :data:`MAX_RETRY_WAIT`."""
    if status not in (429, 503) or attempt >= retries:
        return None
    backoff = BACKOFF * (1 << attempt)
    given = headers.get("Retry-After")
    if given is None:
        return min(backoff, MAX_RETRY_WAIT)
    if not given.strip().isdigit():
        return None  # an HTTP-date, or nonsense: not worth guessing at
    wait = float(int(given.strip()))
    return None if wait > MAX_RETRY_WAIT else max(wait, backoff)


#: What a path segment this client puts in a URL may hold: every serial, address and table id
#: is made of these; anything else (a ``/``, ``..``, a ``?``) would name another resource.
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,128}")


def segment(value: str, what: str) -> str:
    """``value`` as one path segment of a URL, or :class:`SchemaError` saying it is not
    ``what``."""
    if _SEGMENT.fullmatch(value) is None:
        shown = value if len(value) <= 64 else value[:61] + "..."
        raise SchemaError(f"{shown!r} is not {what}")
    return value


class LeagueProblem(LedgerError):
    """The league refused a request: its RFC 9457 problem, as a typed error."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.title}: {problem.detail}")
        self.problem = problem

    @property
    def slug(self) -> str:
        """The problem type's slug, e.g. ``run-exhausted``."""
        return self.problem.slug

    @property
    def status(self) -> int:
        return self.problem.status


class NotaryConflict(LeagueProblem):
    """The notary refused endorsements that conflict with the ones it recorded first: each
    conflict carries the prior record's receipt and the fraud proof (Book V.6)."""

    def __init__(self, problem: FraudConflict) -> None:
        super().__init__(problem)
        self.conflicts: list[Conflict] = problem.conflicts


class LeagueUnreachable(LedgerError):
    """The league server could not be reached, or did not answer in time."""


def unreachable(
    url: str, exc: aiohttp.ClientError | TimeoutError, timeout: float | None
) -> LeagueUnreachable:
    """Why nothing came from the league at ``url``, in one line saying what to check."""
    if isinstance(exc, aiohttp.ClientSSLError):  # before its base, ClientConnectorError
        return LeagueUnreachable(
            f"TLS failed at {url} ({_reason(exc)}): is it served over https? `league serve` "
            "serves plain http:// (give its URL with http://)"
        )
    if isinstance(exc, aiohttp.ClientConnectorError):
        return LeagueUnreachable(
            f"{url} did not answer: is `league serve` running there, at that host and "
            f"port? ({_reason(exc)})"
        )
    if isinstance(exc, TimeoutError):
        return LeagueUnreachable(
            f"{url} did not answer within {timeout or DEFAULT_TIMEOUT:g} s: is it a league's "
            "address, and is the league up?"
        )
    return LeagueUnreachable(f"{url} did not answer: {exc}")


def _reason(exc: aiohttp.ClientConnectorError) -> str:
    """The operating system's or the TLS library's word for it (not aiohttp's wrapping)."""
    cause = exc.os_error
    return str(getattr(cause, "reason", None) or cause.strerror or cause)


def new_request_id() -> str:
    """A fresh request id (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def stamp_request(
    owner: SigningKey,
    manifest: LeagueManifest,
    prints: Iterable[tuple[str, str]],
    *,
    request_id: str | None = None,
    at: int | None = None,
    works: Sequence[int] | None = None,
    on_solved: Callable[[int], None] | None = None,
) -> StampRequest:
    """A signed request presenting ``prints`` ((title, finish) pairs) for stamping, with the
    proof of work each costs: ``works`` (from :func:`ledger.work.request_work` and the census,
    as :meth:`LeagueClient.stamp_prints` does), else the manifest's price at a full run."""
    orders = list(prints)
    unsigned: dict[str, Any] = {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": request_id or new_request_id(),
        "time": int(time.time()) if at is None else at,
        "owner": owner.public.to_text(),
        "prints": [{"title": title, "finish": finish} for title, finish in orders],
    }
    if works is None:
        works = [manifest.policies.stamp_work] * len(orders)
    bound = challenge({"kind": StampRequest.KIND, **unsigned})
    nonces = []
    for index, work in enumerate(works):
        nonces.append(solve(bound, index, work))
        if on_solved is not None:
            on_solved(index + 1)
    return StampRequest.sign(owner, **unsigned, work=nonces)


def verify_stamped(answer: StampAnswer, manifest: LeagueManifest, owner: PublicKey) -> None:
    """Check every certificate of ``answer``: mint-signed, in the runs, issued to ``owner``."""
    for item in answer.items:
        if isinstance(item, Stamped):
            check_certificate(item.certificate, manifest, owner)


def check_certificate(
    certificate: PrintCertificate, manifest: LeagueManifest, owner: PublicKey
) -> None:
    certificate.verify(manifest.issuer_key(certificate))
    manifest.check_certificate(certificate)
    if PublicKey.from_text(certificate.issued_to) != owner:
        raise VerificationError(f"{certificate.serial} is issued to another key")


async def _read_answer(response: aiohttp.ClientResponse) -> str:
    """The answer's text (UTF-8, as JSON and signed notes are), read no further than
    :data:`MAX_ANSWER_BYTES`: a league is not trusted to keep its answers small."""
    if (response.content_length or 0) > MAX_ANSWER_BYTES:
        raise SizeLimitError(f"the league's answer is larger than {MAX_ANSWER_BYTES} bytes")
    body = bytearray()
    async for chunk in response.content.iter_chunked(64 * KIB):
        body += chunk
        if len(body) > MAX_ANSWER_BYTES:
            raise SizeLimitError(f"the league's answer is larger than {MAX_ANSWER_BYTES} bytes")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("the league's answer is not UTF-8 text") from None


class LeagueClient:
    """``async with LeagueClient(url) as league: await league.census()``."""

    def __init__(
        self,
        base_url: str,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 0,
    ) -> None:
        self.retries = retries
        self.base_url = base_url.rstrip("/")
        #: The URL as errors name it: without any user or password it may carry.
        self.shown_url = str(URL(self.base_url).with_user(None))
        self._session = session
        self._owns_session = session is None
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    async def __aenter__(self) -> Self:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout, json_serialize=_json_text)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def _call(
        self, method: str, path: str, *, json: Any = None, params: dict[str, int] | None = None
    ) -> tuple[int, str, str]:
        """One call, retried after a 503 or 429 whose ``Retry-After`` is short (every POST of
        the protocol is idempotent, so a retry never does a thing twice)."""
        if self._session is None:
            raise RuntimeError("use LeagueClient in `async with`")
        for attempt in range(self.retries + 1):
            try:
                async with self._session.request(
                    method, self.base_url + path, json=json, params=params
                ) as response:
                    text = await _read_answer(response)
                    if response.status < 400:
                        return response.status, response.content_type, text
                    wait = retry_wait(response.status, response.headers, attempt, self.retries)
                    if wait is None:
                        raise self._problem(response.status, response.content_type, text)
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise unreachable(self.shown_url, exc, self._timeout.total) from None
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt never waits")

    @staticmethod
    def _problem(status: int, content_type: str, text: str) -> LedgerError:
        if content_type == PROBLEM_JSON:
            try:
                return LeagueProblem(Problem.model_validate_json(text))
            except ValidationError:
                pass
            try:  # the notary's 409 carries its conflicts as an extension member
                return NotaryConflict(FraudConflict.model_validate_json(text))
            except ValidationError:
                pass
        return SchemaError(f"the league answered {status} without a problem document")

    async def _json(self, model: type[M], method: str, path: str, **kwargs: Any) -> M:
        _, _, text = await self._call(method, path, **kwargs)
        try:
            return model.model_validate_json(text)
        except ValidationError as exc:
            raise SchemaError(
                f"the league's answer to {path} is not a {model.__name__}: {exc.errors()[0]['msg']}"
            ) from None

    # -- the mint --------------------------------------------------------------------------

    async def buy(self, request: BuyRequest) -> BuyAnswer:
        """Buy a single with notes (Book V.5): the print and exact change, a refund, or the
        payment rejected; 503 retry-later while the purchase waits for a service."""
        return await self._json(BuyAnswer, "POST", "/treasury/buy", json=request.to_wire())

    async def claim(self, request: ClaimRequest) -> ClaimAnswer:
        """Claim notes for unstamped marks (Book V.5's faucet; a replay answers the same)."""
        return await self._json(ClaimAnswer, "POST", "/treasury/claim", json=request.to_wire())

    async def order(self, order: MintOrder) -> OrderAnswer:
        """Send the treasury's signed order to the mint (the treasury's call; idempotent)."""
        return await self._json(OrderAnswer, "POST", "/mint/orders", json=order.to_wire())

    async def orders(self, orders: Sequence[MintOrder]) -> list[OrderAnswer | LeagueProblem]:
        """Send the treasury's signed orders to the mint in one request: each order's answer,
        or its refusal (the problem ``order`` would raise), in order."""
        body = {"orders": [order.to_wire() for order in orders]}
        answer = await self._json(OrdersAnswer, "POST", "/mint/orders/batch", json=body)
        if len(answer.outcomes) != len(orders):
            raise SchemaError(f"the mint answered {len(answer.outcomes)} of {len(orders)} orders")
        results: list[OrderAnswer | LeagueProblem] = []
        for outcome in answer.outcomes:
            if outcome.answer is not None:
                results.append(outcome.answer)
            elif outcome.problem is not None:  # the model holds one of the two
                results.append(LeagueProblem(outcome.problem))
        return results

    async def manifest(self, pinned_root: PublicKey | None = None) -> LeagueManifest:
        """The league manifest, its root signature checked (against ``pinned_root`` if given)."""
        _, _, text = await self._call("GET", "/mint/manifest")
        manifest = LeagueManifest.from_wire(text)
        manifest.verify_root(pinned_root)
        return manifest

    async def stamp(self, request: StampRequest) -> StampAnswer:
        """Present a signed stamp request (build one with :func:`stamp_request`)."""
        return await self._json(StampAnswer, "POST", "/mint/stamp", json=request.to_wire())

    async def stamp_prints(
        self, owner: SigningKey, manifest: LeagueManifest, prints: Sequence[tuple[str, str]]
    ) -> StampAnswer:
        """Stamp ``prints``, paying each print's proof of work at its run's price now (read
        from the census), the way an honest player's client does. Blocking CPU work (about
        one second of one core per print at the default price) runs in a worker thread."""
        return await self.stamp(await self.stamp_order(owner, manifest, prints))

    async def stamp_order(
        self,
        owner: SigningKey,
        manifest: LeagueManifest,
        prints: Sequence[tuple[str, str]],
        on_solved: Callable[[int], None] | None = None,
    ) -> StampRequest:
        """The signed request :meth:`stamp_prints` sends, its work paid at each run's price
        now (a wallet keeps it before sending, to replay it if the answer is lost)."""
        runs = (await self.census()).runs()
        policies = manifest.policies
        works = request_work(policies.stamp_work, policies.stamp_work_rise, runs, prints)
        return await asyncio.to_thread(
            stamp_request, owner, manifest, prints, works=works, on_solved=on_solved
        )

    async def census(self) -> Census:
        return await self._json(Census, "GET", "/ledger")

    async def owner(self, address: str) -> OwnerCensus:
        return await self._json(
            OwnerCensus, "GET", f"/ledger/owners/{segment(address, 'an address')}"
        )

    # -- the notary ------------------------------------------------------------------------

    async def notarize(
        self, chains: Sequence[Chain] | None = None, *, slip: str | None = None
    ) -> NotarizeAnswer:
        """Notarize whole chains (or an armored slip): a receipt per hop, in order; a conflict
        with a recorded hop raises :class:`NotaryConflict` with the fraud proofs. Check each
        receipt offline with ``Receipt.check(notary_key, endorsement)``."""
        if chains is None:
            return await self._json(
                NotarizeAnswer, "POST", "/notary/endorsements", json={"slip": slip}
            )
        # A request records at most MAX_NEW_HOPS_PER_CHAIN new hops of a chain (L-22): a
        # longer chain (a run of offline trades) goes in pieces, its first hops first. A hop
        # already recorded is answered with its receipt, so a piece sent twice moves nothing.
        longest = max((len(c.endorsements) for c in chains), default=0)
        for end in range(MAX_NEW_HOPS_PER_CHAIN, longest, MAX_NEW_HOPS_PER_CHAIN):
            await self.notarize_once(
                [
                    Chain(certificate=c.certificate, endorsements=c.endorsements[:end])
                    for c in chains
                    if len(c.endorsements) > end
                ]
            )
        return await self.notarize_once(chains)

    async def notarize_once(self, chains: Sequence[Chain]) -> NotarizeAnswer:
        """Notarize ``chains`` in one request, as they are (413 ``too-large`` for a chain
        bringing more new hops than a request records: :meth:`notarize` splits it)."""
        body = {"chains": [c.to_wire() for c in chains]}
        return await self._json(NotarizeAnswer, "POST", "/notary/endorsements", json=body)

    async def provenance(self, serial: str) -> Provenance:
        """One print's whole life as the notary knows it (Book V.8)."""
        return await self._json(Provenance, "GET", f"/provenance/{segment(serial, 'a serial')}")

    # -- the tables -------------------------------------------------------------------------

    async def open_table(self, request: TableOpen) -> TableView:
        """Open a witnessed table (the same request answers the same table)."""
        return await self._json(TableView, "POST", "/tables/open", json=request.to_wire())

    async def join_table(self, request: TableJoin) -> TableView:
        """Take a duel's second seat with its join code (the same join answers the same seat)."""
        return await self._json(TableView, "POST", "/tables/join", json=request.to_wire())

    async def seed_table(self, request: TableSeed) -> TableView:
        """Bring the player's half of the deal: the answer shows the deal."""
        return await self._json(TableView, "POST", "/tables/seed", json=request.to_wire())

    async def move_table(self, request: TableMove) -> TableView:
        """One signed move; the answer carries the opponent's replies (409 ``move-replayed``
        when its ply is played already: read the table)."""
        return await self._json(TableView, "POST", "/tables/move", json=request.to_wire())

    async def table(self, table: str) -> TableView:
        return await self._json(TableView, "GET", f"/tables/table/{segment(table, 'a table id')}")

    async def table_events(self, table: str) -> TableEvents:
        """The table's own events, signed (verify each with the manifest's tables key)."""
        return await self._json(
            TableEvents, "GET", f"/tables/table/{segment(table, 'a table id')}/events"
        )

    # -- every service's log ----------------------------------------------------------------

    async def events(self, after: int = -1, limit: int = 100, *, service: str = "mint") -> Feed:
        """A page of ``service``'s signed feed (verify each event with ``FeedEvent.verified``)."""
        return await self._json(
            Feed, "GET", f"/{service}/events", params={"after": after, "limit": limit}
        )

    async def checkpoint(self, *, service: str = "mint") -> str:
        """``service``'s latest signed checkpoint, as the note's text."""
        _, _, text = await self._call("GET", f"/{service}/checkpoint")
        return text

    async def signed_checkpoint(self, *, service: str = "mint") -> Checkpoint:
        """``service``'s latest checkpoint, parsed (verify it with the service's key)."""
        return Checkpoint.from_note(await self.checkpoint(service=service))

    async def inclusion_proof(
        self, index: int, size: int, *, service: str = "mint"
    ) -> InclusionProof:
        return await self._json(
            InclusionProof,
            "GET",
            f"/{service}/proof/inclusion",
            params={"index": index, "size": size},
        )

    async def consistency_proof(
        self, first: int, second: int, *, service: str = "mint"
    ) -> ConsistencyProof:
        return await self._json(
            ConsistencyProof,
            "GET",
            f"/{service}/proof/consistency",
            params={"first": first, "second": second},
        )
