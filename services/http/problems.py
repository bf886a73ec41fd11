"""RFC 9457 problem details: every error a service answers, in one shape.

A :class:`~ledger.errors.LedgerError` carries its own ``problem_type`` and ``http_status``;
aiohttp's HTTP errors map by status; anything else is a 500 whose detail says nothing about
the cause (the traceback goes to the server log, never to the client). The ``type`` member is
the relative URI ``/problems/<slug>``, which every service serves as a short description.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from http import HTTPStatus

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ledger.errors import LedgerError

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
PROBLEM_PREFIX = "/problems/"

#: Problem slugs of plain HTTP errors (routing, methods, limits) that are not LedgerErrors.
HTTP_SLUGS: dict[int, str] = {
    400: "bad-request",
    404: "not-found",
    405: "method-not-allowed",
    413: "too-large",
    415: "unsupported-media-type",
    500: "internal",
}

#: What the HTTP-only problem types mean (LedgerErrors describe themselves).
HTTP_DESCRIPTIONS: dict[str, str] = {
    "bad-request": "A request the server could not read as HTTP.",
    "not-found": "Nothing is served at this path.",
    "method-not-allowed": "This path does not answer this method; the detail names those it does.",
    "too-large": "A request body larger than the endpoint accepts.",
    "unsupported-media-type": "A request body that is not declared as application/json.",
    "internal": "The server failed to answer; the cause is in the operator's log, never here.",
}


class Problem(BaseModel):
    """An RFC 9457 problem details object."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="URI reference naming the problem type: /problems/<slug>")
    title: str = Field(description="Short summary of the problem type")
    status: int = Field(description="The HTTP status code of this answer")
    detail: str = Field(description="What went wrong with this request, for a person")
    instance: str = Field(description="The request path this problem occurred at")


class ProblemType(BaseModel):
    """What one problem type means: served at ``/problems/<slug>``."""

    slug: str
    title: str
    status: int
    description: str


def title_of(slug: str) -> str:
    """The title of a problem slug: ``bad-signature`` reads ``Bad signature``."""
    return slug.replace("-", " ").capitalize()


def problem_response(
    slug: str,
    status: int,
    detail: str,
    request: web.Request,
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
    return web.Response(
        status=status, text=problem.model_dump_json(), content_type=PROBLEM_JSON, headers=headers
    )


def _ledger_error_classes(root: type[LedgerError] = LedgerError) -> Iterator[type[LedgerError]]:
    yield root
    for sub in root.__subclasses__():
        yield from _ledger_error_classes(sub)


def problem_catalog() -> dict[str, ProblemType]:
    """Every problem type a service can answer with, by slug.

    LedgerError subclasses are included as soon as their module is imported, so a service's
    own errors (defined beside it) appear here with no registration step.
    """
    catalog: dict[str, ProblemType] = {}
    for status, slug in HTTP_SLUGS.items():
        catalog[slug] = ProblemType(
            slug=slug, title=title_of(slug), status=status, description=HTTP_DESCRIPTIONS[slug]
        )
    for cls in _ledger_error_classes():
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        catalog[cls.problem_type] = ProblemType(
            slug=cls.problem_type,
            title=title_of(cls.problem_type),
            status=cls.http_status,
            description=" ".join(doc.split()),
        )
    return catalog


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every refusal into problem+json; never a traceback, never a secret."""
    try:
        return await handler(request)
    except LedgerError as exc:
        # An error may carry response headers (a 429's Retry-After) as ``http_headers``.
        headers = getattr(exc, "http_headers", None)
        return problem_response(
            exc.problem_type, exc.http_status, exc.diagnostics(), request, headers
        )
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        slug = HTTP_SLUGS.get(exc.status, "bad-request" if exc.status < 500 else "internal")
        return problem_response(slug, exc.status, _http_detail(exc, request), request)
    except Exception:
        log.exception("unhandled error answering %s %s", request.method, request.path)
        return problem_response(
            "internal", 500, "the server failed to answer; the operator's log has the cause",
            request,
        )


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
