"""Safe by construction: what every request to ``cz web`` passes before a page answers.

The server binds 127.0.0.1 only (:mod:`clients.web.app`). Each launch draws a secret; the URL
``cz web`` opens carries it once (``/?key=SECRET``), and the answer to that URL sets it as a
cookie (HttpOnly, SameSite=Strict, for this port's cookie name) and sends the browser to the
same page without it. Every other request must carry the cookie. The Host header must name
this server (127.0.0.1 or localhost at its port): a page of another site that rebinds its DNS
name to 127.0.0.1 is refused, whatever it sends. Every request that is not a GET or HEAD must
come with an Origin of this server itself: a form another site (or another port of this
machine) posts here is refused before it is read, and nothing is ever done by a GET. Every
answer carries a strict Content-Security-Policy (scripts and styles from this server's
``/static/`` only, nothing inline, no frames, forms posting only here), and is never cached.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.typedefs import Middleware

#: The query parameter of the launch URL that carries the secret.
KEY_PARAM = "key"

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
    def cookie(self) -> str:
        """The cookie's name: one per port, so two launches never read each other's."""
        return f"cz_web_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def url(self, path: str = "/") -> str:
        """The launch URL: this server's address with the secret."""
        return f"http://127.0.0.1:{self.port}{path}?{KEY_PARAM}={self.secret}"

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
        presented = request.query.get(KEY_PARAM)
        if presented is not None:
            if request.method not in SAFE_METHODS or not guard.holds(presented):
                return refused(403, "this is not the key cz web printed at its launch")
            clean = request.rel_url.with_query(
                [(k, v) for k, v in request.query.items() if k != KEY_PARAM]
            )
            answer = web.Response(status=303, headers={**HEADERS, "Location": str(clean)})
            answer.set_cookie(
                guard.cookie,
                guard.secret,
                httponly=True,
                samesite="Strict",
                path="/",
            )
            return answer
        if not guard.holds(request.cookies.get(guard.cookie)):
            return refused(
                403, "open the URL cz web printed (it carries this launch's key) in this browser"
            )
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(HEADERS)
            raise
        response.headers.update(HEADERS)
        return response

    return middleware
