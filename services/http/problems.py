"""RFC 9457 problem details: every error a service answers, in one shape, from one table.

:data:`PROBLEMS` maps each refusal class to its problem slug and HTTP status; an error answers
as the nearest class of its MRO that the table names. aiohttp's own HTTP errors (routing,
methods, limits) map by status; anything else is a 500 whose detail says nothing about the
cause (the traceback goes to the server log, never to the client). The ``type`` member is the
relative URI ``/problems/<slug>``; each app serves the meaning of exactly the slugs its
services can answer there, and each service's OpenAPI document lists the same set.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from http import HTTPStatus
from typing import NamedTuple

from aiohttp import web

from ledger import errors as e
from ledger.api.problems import PROBLEM_JSON, PROBLEM_PREFIX, Problem, ProblemType
from services.eventlog import errors as store

log = logging.getLogger(__name__)


class ProblemSpec(NamedTuple):
    """How one refusal class answers over HTTP."""

    slug: str
    status: int


#: The one table from refusal class to problem slug and status (no HTTP lives in ledger/).
PROBLEMS: dict[type[e.LedgerError], ProblemSpec] = {
    e.LedgerError: ProblemSpec("ledger-error", 400),
    e.DecodeError: ProblemSpec("malformed", 400),
    e.ArmorError: ProblemSpec("malformed-armor", 400),
    e.SizeLimitError: ProblemSpec("too-large", 413),
    e.SchemaError: ProblemSpec("invalid-object", 422),
    e.UnknownKindError: ProblemSpec("unknown-kind", 400),
    e.KeyFormatError: ProblemSpec("bad-key", 400),
    e.AddressError: ProblemSpec("bad-address", 400),
    e.SerialError: ProblemSpec("bad-serial", 400),
    e.UnsupportedMediaType: ProblemSpec("unsupported-media-type", 415),
    e.UnknownTitle: ProblemSpec("unknown-title", 422),
    e.VerificationError: ProblemSpec("verification-failed", 422),
    e.BadSignatureError: ProblemSpec("bad-signature", 422),
    e.ChainError: ProblemSpec("broken-chain", 422),
    e.StaleIssueError: ProblemSpec("stale-issue", 409),
    e.ProofError: ProblemSpec("bad-proof", 422),
    e.FraudDetected: ProblemSpec("fraud", 409),
    e.InvalidFraudProofError: ProblemSpec("invalid-fraud-proof", 422),
    e.WrongLeague: ProblemSpec("wrong-league", 422),
    e.StaleRequest: ProblemSpec("stale-request", 422),
    e.RunExhaustedError: ProblemSpec("run-exhausted", 409),
    e.InsufficientWork: ProblemSpec("insufficient-work", 422),
    e.NotStamped: ProblemSpec("not-stamped", 422),
    e.UnknownSerial: ProblemSpec("unknown-serial", 404),
    e.UnknownLog: ProblemSpec("unknown-log", 404),
    e.UntrustedCheckpoint: ProblemSpec("untrusted-checkpoint", 403),
    e.RequestIdReused: ProblemSpec("request-id-reused", 409),
    e.WrongPassphraseError: ProblemSpec("wrong-passphrase", 401),
    e.RetryLater: ProblemSpec("retry-later", 503),
    e.RateLimited: ProblemSpec("rate-limited", 429),
    e.AllowanceExhausted: ProblemSpec("allowance-exhausted", 429),
    e.Overloaded: ProblemSpec("overloaded", 503),
    e.UnknownTable: ProblemSpec("unknown-table", 404),
    e.OutOfTurn: ProblemSpec("out-of-turn", 409),
    e.MoveReplayed: ProblemSpec("move-replayed", 409),
    e.TimedOut: ProblemSpec("timed-out", 409),
    e.IllegalMove: ProblemSpec("illegal-move", 422),
    e.MisprintGone: ProblemSpec("misprint-gone", 409),
    e.BadPortfolio: ProblemSpec("bad-portfolio", 422),
    e.NotHolder: ProblemSpec("not-holder", 409),
    store.EventLogError: ProblemSpec("event-log", 500),
    store.StreamConflict: ProblemSpec("stream-conflict", 409),
    store.StoreUnavailable: ProblemSpec("store-unavailable", 503),
    store.StoreIntegrityError: ProblemSpec("store-integrity", 409),
    store.CheckpointRefused: ProblemSpec("checkpoint-refused", 500),
    store.TamperedLog: ProblemSpec("tampered-log", 500),
}

#: Problem slugs of plain HTTP errors (routing, methods, limits) that are not LedgerErrors.
HTTP_SLUGS: dict[int, str] = {
    400: "bad-request",
    404: "not-found",
    405: "method-not-allowed",
    408: "request-timeout",
    413: "too-large",
    415: "unsupported-media-type",
    500: "internal",
}

#: What the HTTP-only problem types mean (refusal classes describe themselves).
HTTP_DESCRIPTIONS: dict[str, str] = {
    "bad-request": "A request the server could not read as HTTP.",
    "not-found": "Nothing is served at this path.",
    "method-not-allowed": "This path does not answer this method; the detail names those it does.",
    "request-timeout": "The request's body did not arrive within the server's published read "
    "timeout; the connection is closed.",
    "internal": "The server failed to answer; the cause is in the operator's log, never here.",
}

#: What the server says it is, in every answer's ``Server`` header (never a version).
SERVER_NAME = "league"

#: What any endpoint may answer: the store unavailable, every connection the server serves at
#: once taken (``overloaded``), or the client's source holding its share of them
#: (``rate-limited``), both answered as the connection opens.
EVERY_ENDPOINT: tuple[type[e.LedgerError], ...] = (
    store.StoreUnavailable,
    e.Overloaded,
    e.RateLimited,
)
#: What an endpoint with a JSON body may answer besides.
BODY_REFUSALS: tuple[type[e.LedgerError], ...] = (
    e.DecodeError,
    e.SizeLimitError,
    e.SchemaError,
    e.UnsupportedMediaType,
)
#: What an endpoint with query parameters may answer besides.
QUERY_REFUSALS: tuple[type[e.LedgerError], ...] = (e.SchemaError,)


def problem_of(error: type[e.LedgerError]) -> ProblemSpec:
    """The slug and status of ``error``: its nearest ancestor that :data:`PROBLEMS` names."""
    for cls in error.__mro__:
        spec = _BY_CLASS.get(cls)
        if spec is not None:
            return spec
    raise TypeError(f"{error.__name__} is not a LedgerError")


_BY_CLASS: dict[type, ProblemSpec] = dict(PROBLEMS)


def title_of(slug: str) -> str:
    """The title of a problem slug: ``bad-signature`` reads ``Bad signature``."""
    return slug.replace("-", " ").capitalize()


def _description(error: type[e.LedgerError]) -> str:
    doc = (error.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())


def problem_types(errors: Iterable[type[e.LedgerError]]) -> dict[str, ProblemType]:
    """The problem types an app answers with ``errors`` among its refusals, by slug: those
    errors' slugs and the plain HTTP ones."""
    catalog: dict[str, ProblemType] = {}
    for status, slug in HTTP_SLUGS.items():
        if slug in HTTP_DESCRIPTIONS:
            catalog[slug] = ProblemType(
                slug=slug, title=title_of(slug), status=status, description=HTTP_DESCRIPTIONS[slug]
            )
    for error in errors:
        slug, status = problem_of(error)
        canonical = next(cls for cls in PROBLEMS if PROBLEMS[cls].slug == slug)
        catalog[slug] = ProblemType(
            slug=slug, title=title_of(slug), status=status, description=_description(canonical)
        )
    return dict(sorted(catalog.items()))


def problem_response(
    slug: str,
    status: int,
    detail: str,
    request: web.BaseRequest,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """A problem+json answer for ``request`` (``headers`` such as Retry-After added)."""
    problem = Problem(
        type=PROBLEM_PREFIX + slug,
        title=title_of(slug),
        status=status,
        detail=detail,
        instance=request.path,
    )
    response = web.Response(
        status=status, text=problem.model_dump_json(), content_type=PROBLEM_JSON, headers=headers
    )
    response.headers["Server"] = SERVER_NAME
    return response


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every refusal into problem+json; never a traceback, never a secret. A client
    that vanished mid-request is no error: one debug line, and nothing to answer."""
    try:
        return await handler(request)
    except e.LedgerError as exc:
        slug, status = problem_of(type(exc))
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, e.RetryLater) else None
        return problem_response(slug, status, exc.diagnostics(), request, headers)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        slug = HTTP_SLUGS.get(exc.status, "bad-request" if exc.status < 500 else "internal")
        headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        answer = problem_response(slug, exc.status, _http_detail(exc, request), request, headers)
        if exc.status == 408:
            answer.force_close()
        return answer
    except ConnectionResetError:
        if not client_gone(request):
            log.exception("unhandled error answering %s %s", request.method, request.path)
            return _internal(request)
        log.debug("client went away during %s %s", request.method, request.path)
        # Never delivered (the connection is gone); aiohttp drops it quietly.
        return problem_response("bad-request", 400, "the client closed the connection", request)
    except Exception:
        log.exception("unhandled error answering %s %s", request.method, request.path)
        return _internal(request)


def client_gone(request: web.BaseRequest) -> bool:
    """Whether the client's connection is closed (it disconnected, or was timed out)."""
    transport = request.transport
    return transport is None or transport.is_closing()


def _internal(request: web.Request) -> web.Response:
    return problem_response(
        "internal", 500, "the server failed to answer; the operator's log has the cause", request
    )


async def neutral_server_header(request: web.Request, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: the ``Server`` header never names aiohttp's version."""
    response.headers["Server"] = SERVER_NAME


def _http_detail(exc: web.HTTPException, request: web.Request) -> str:
    """A sentence for an aiohttp error; its default texts ("404: Not Found") say too little."""
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods))
        return f"{request.method} is not allowed at {request.path}; use {allowed}"
    text = " ".join((exc.text or "").split())
    if exc.status >= 500 or not text or text == f"{exc.status}: {exc.reason}":
        if exc.status == 404:
            return f"nothing is served at {request.path}"
        return HTTPStatus(exc.status).phrase
    return text
