"""Safe by construction: what every request to ``cz web`` passes before a page answers.

The server binds 127.0.0.1 only (:mod:`clients.web.app`). Each launch draws a secret, and
every page, form and redirect lives under it: ``http://127.0.0.1:PORT/SECRET/…`` (a
capability in the path, as a notebook server's token). A request whose path does not begin
with this launch's secret is refused, whatever else it carries: no cookie is ever set or
read (a browser sends 127.0.0.1's cookies to every port of it, so a cookie would hand the
secret to any listener on another port), and a secret in a query is refused. The pages say
``Referrer-Policy: same-origin``, so no request to another origin carries the path (not
no-referrer: under it a browser sends ``Origin: null`` with the page's own forms). Only the
static files (``/static/``, the script and the stylesheet, nothing of the player's) answer
without it. The Host header must name this server (127.0.0.1 or localhost at its port): a
page of another site that rebinds its DNS name to 127.0.0.1 is refused, whatever it sends.
Every request that is not a GET or HEAD must come with an Origin of this server itself: a
form another site (or another port of this machine) posts here is refused before it is
read, and nothing is ever done by a GET. Every answer carries a strict
Content-Security-Policy (scripts and styles from this server only, nothing inline, no
frames, forms posting only here), and is never cached.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.typedefs import Middleware

#: The query parameter that carried the secret before it moved into the path: refused.
KEY_PARAM = "key"
#: The public files, served without the secret (nothing of the player's in them).
PUBLIC = "/static/"

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Not no-referrer: under it a browser sends "Origin: null" with the page's own forms.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
SAFE_METHODS = frozenset({"GET", "HEAD"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class Guard:
    """This launch's secret, and the port the server answers on (set once it listens)."""

    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    port: int = 0

    @property
    def root(self) -> str:
        """The path every page of this launch lives under (no trailing slash)."""
        return f"/{self.secret}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def url(self, path: str = "/") -> str:
        """The launch URL: this server's address, the secret as the path's first segment."""
        return f"http://127.0.0.1:{self.port}{self.root}{path}"

    def admits(self, path: str) -> bool:
        """Whether ``path`` lies under this launch's secret (``/SECRET`` or ``/SECRET/…``)."""
        first, _, _ = path.removeprefix("/").partition("/")
        return path.startswith("/") and self.holds(first)

    def holds(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(
            presented.encode("utf-8", "replace"), self.secret.encode()
        )


def refused(status: int, why: str) -> web.Response:
    """A refusal page: plain text, one line, the headers of every answer."""
    return web.Response(
        status=status, text=f"cz web refused this request: {why}\n", headers=HEADERS
    )


def guarded(guard: Guard) -> Middleware:
    """The middleware that makes every request pass the checks above, in that order."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.host not in guard.hosts:  # DNS rebinding: another name for this address
            return refused(421, f"this server answers to 127.0.0.1:{guard.port} only")
        if request.method not in SAFE_METHODS:
            origin = request.headers.get("Origin")
            if origin not in guard.origins:  # a cross-site form, or no browser's request
                return refused(403, "a request that changes anything must come from this page")
            if request.headers.get("Sec-Fetch-Site", "same-origin") != "same-origin":
                return refused(403, "a request that changes anything must come from this page")
        if KEY_PARAM in request.query:  # the old launch URL's key: never taken from a query
            return refused(403, "a key in the query is not taken: open the URL cz web printed")
        public = request.method in SAFE_METHODS and request.path.startswith(PUBLIC)
        if not public and not guard.admits(request.raw_path):
            return refused(403, "open the URL cz web printed (its path carries this launch's key)")
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(HEADERS)
            raise
        response.headers.update(HEADERS)
        return response

    return middleware
