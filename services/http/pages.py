"""Pages for people: an endpoint's answer rendered as HTML to a browser (docs/operations.md,
"Pages for people").

An :class:`~services.http.endpoints.Endpoint` may declare a :class:`Page`: a Jinja2
template (in ``services/http/templates/``, autoescaped) given the answer model, the league's
name and whatever the page's ``extra`` adds. A request whose ``Accept`` prefers ``text/html``
over ``application/json`` (as a browser's does) gets the page; every other request, ``*/*``
and no ``Accept`` included, the JSON as before. A refusal to a browser is a page too (the
problem rendered, with its status). Pages load nothing from elsewhere: inline CSS, no script,
and a ``Content-Security-Policy`` that forbids any other load.
"""

from __future__ import annotations

import datetime
import functools
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
from aiohttp import web

from ledger.address import address_of
from ledger.errors import LedgerError, RetryLater, SerialError
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from services.http.problems import problem_of, title_of

HTML = "text/html"
#: Nothing but this page's own inline style; forms post back here only; no frames.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
#: Longest search text read from a query (a serial is far shorter).
MAX_SEARCH_CHARS = 64

PageContext = Callable[[web.Request, Any], Awaitable[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class Search:
    """A GET form for one path parameter: ``GET <collection>?<param>=X`` redirects to the
    endpoint's own path with ``X`` checked by ``check`` (which returns it normalised, or
    raises a :class:`LedgerError`)."""

    param: str
    check: Callable[[web.Request, str], str]


@dataclass(frozen=True, slots=True)
class Page:
    """How an endpoint's answer reads as a page."""

    template: str
    #: The league the page is of (for its name in the heading and title).
    manifest: Callable[[web.Request], LeagueManifest]
    #: More for the template, computed only for a page (e.g. every proof checked).
    context: PageContext | None = None
    search: Search | None = None


def _quality(accept: str) -> dict[str, float]:
    """Each media range of an ``Accept`` header with its q (malformed q: 0)."""
    found: dict[str, float] = {}
    for item in accept.split(",")[:64]:
        media, *params = (part.strip() for part in item.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = max(0.0, min(1.0, float(value)))
                except ValueError:
                    q = 0.0
        if media:
            found.setdefault(media.lower(), q)
    return found


def wants_html(request: web.BaseRequest) -> bool:
    """Whether ``Accept`` names ``text/html`` itself and prefers it to JSON (JSON's q is
    that of its most specific range: ``application/json``, ``application/*`` or ``*/*``).
    A tie, a wildcard alone or no header: JSON."""
    q = _quality(request.headers.get("Accept", ""))
    html = q.get(HTML, 0.0)
    json = next((q[r] for r in ("application/json", "application/*", "*/*") if r in q), 0.0)
    return html > json


@functools.cache
def environment() -> jinja2.Environment:
    """The templates, autoescaped (every value is text unless a template says otherwise)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("services.http", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["address"] = _address
    env.filters["when"] = _when
    return env


def _address(key: str) -> str:
    """A key as people read it (its address); a key that does not parse, as given."""
    try:
        return address_of(PublicKey.from_text(key))
    except LedgerError:
        return key


def _when(seconds: int) -> str:
    """Unix seconds as a UTC time."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def html_response(
    request: web.Request, page: Page, template: str, status: int = 200, **context: Any
) -> web.Response:
    manifest = page.manifest(request)
    text = (
        environment()
        .get_template(template)
        .render(league=manifest.name, league_id=manifest.league, path=request.path, **context)
    )
    response = web.Response(status=status, text=text, content_type=HTML, charset="utf-8")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def problem_page(request: web.Request, page: Page, error: LedgerError) -> web.Response:
    """A refusal to a browser: the problem as a page, with its status (and Retry-After)."""
    slug, status = problem_of(type(error))
    response = html_response(
        request,
        page,
        "problem.html",
        status,
        problem={
            "slug": slug,
            "title": title_of(slug),
            "status": status,
            "detail": error.diagnostics(),
        },
    )
    if isinstance(error, RetryLater):
        response.headers["Retry-After"] = str(error.retry_after)
    return response


async def render_page(
    request: web.Request, page: Page, answer: Callable[[], Awaitable[Any]]
) -> web.Response:
    """The page of the endpoint's answer, or of its refusal."""
    try:
        result = await answer()
        more = await page.context(request, result) if page.context is not None else {}
    except LedgerError as error:
        return problem_page(request, page, error)
    return html_response(request, page, page.template, answer=result, **more)


def add_search(app: web.Application, path: str, page: Page) -> None:
    """``GET <path without its last segment>?<param>=X``: a redirect to ``path`` at ``X``
    (303), when ``page`` declares a search; a missing or refused ``X`` is a 400 (a page to a
    browser, problem+json otherwise)."""
    search = page.search
    if search is None:
        return
    collection, _, last = path.rpartition("/")
    if last != "{" + search.param + "}":
        raise ValueError(f"{path} does not end in {{{search.param}}}")

    async def find(request: web.Request) -> web.StreamResponse:
        try:
            text = request.query.get(search.param, "").strip()
            if not text or len(text) > MAX_SEARCH_CHARS:
                raise SerialError(f"give ?{search.param}= (1 to {MAX_SEARCH_CHARS} characters)")
            found = search.check(request, text)
        except LedgerError as error:
            if wants_html(request):
                return problem_page(request, page, error)
            raise
        raise web.HTTPSeeOther(
            path.replace("{" + search.param + "}", urllib.parse.quote(found, safe=""))
        )

    find.__name__ = f"search_{search.param}"
    app.router.add_get(collection, find, allow_head=True)
