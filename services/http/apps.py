"""The app factory every service starts from, and the services' shared objects.

Each service is a :class:`Service`: a name, its endpoints and an ``install`` step that adds its
own state to an app. One service alone and all of them in one process are the same
composition, so there is one way to run either.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ledger.api.problems import ProblemType
from services.http.endpoints import Endpoint, add_endpoints
from services.http.health import HEALTH_ENDPOINTS
from services.http.limits import LIMITS, TRUSTED_PROXIES, ServerLimits
from services.http.metrics import METRICS, METRICS_ENDPOINTS, Figure, Metrics, route_of
from services.http.pool import POOL as POOL
from services.http.pool import CleanupContext as CleanupContext
from services.http.pool import pool_context as pool_context
from services.http.problems import (
    client_gone,
    neutral_server_header,
    problem_middleware,
    problem_types,
)
from services.http.serving import REQUEST_ID, REQUEST_ID_HEADER, access_log, request_id_of

#: A network of trusted reverse proxies.
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: The problem types the app's endpoints can answer, by slug (served at /problems/{slug}).
PROBLEM_TYPES = web.AppKey("problem_types", dict[str, ProblemType])

#: Default bound on a request body (bytes) when no service asks for more.
DEFAULT_MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class Service:
    """A league service: what it serves and how it joins an app."""

    name: str
    title: str
    description: str
    endpoints: tuple[Endpoint, ...]
    #: Adds the service's state (keys, event log, cleanup contexts) to an app.
    install: Callable[[web.Application, Any], None]
    max_body: int = DEFAULT_MAX_BODY
    #: What the service publishes at ``/metrics`` beyond requests (e.g. the mint's runs).
    figures: tuple[Figure, ...] = ()
    #: The services whose feeds it follows: it is not ready before it has read each.
    follows: tuple[str, ...] = ()


async def describe_problem(request: web.Request) -> ProblemType:
    """What a problem type means (the ``type`` URI of every problem answer points here)."""
    slug = request.match_info["slug"]
    found = request.app[PROBLEM_TYPES].get(slug)
    if found is None:
        raise web.HTTPNotFound(text=f"no problem type is called {slug!r}")
    return found


PROBLEM_ENDPOINTS = (
    Endpoint("GET", "/problems/{slug}", "What a problem type means", describe_problem, ProblemType),
)


#: The operator's endpoints every app serves (not in any service's OpenAPI document).
OPERATOR_ENDPOINTS = (*HEALTH_ENDPOINTS, *METRICS_ENDPOINTS)


def new_app(
    endpoints: Iterable[Endpoint],
    *,
    max_body: int = DEFAULT_MAX_BODY,
    trusted_proxies: Sequence[Network] = (),
) -> web.Application:
    """An app serving ``endpoints`` with the problem middleware, the body bound, the
    published limits (``app[LIMITS]``, which a test may replace before serving), a neutral
    ``Server`` header, ``/problems/{slug}`` describing exactly the problem types those
    endpoints can answer, and the operator's endpoints (``/healthz``, ``/readyz``,
    ``/metrics``): every answer carries a request id and is counted and timed. A request
    from one of ``trusted_proxies`` counts as from the client its ``X-Forwarded-For`` names."""
    served = (*endpoints, *PROBLEM_ENDPOINTS, *OPERATOR_ENDPOINTS)
    middlewares: list[Middleware] = [observe_middleware, problem_middleware]
    if trusted_proxies:
        middlewares.insert(0, forwarded_middleware(tuple(trusted_proxies)))
    app = web.Application(client_max_size=max_body, middlewares=middlewares)
    app[PROBLEM_TYPES] = catalog_of(served)
    app[LIMITS] = ServerLimits()
    app[TRUSTED_PROXIES] = tuple(trusted_proxies)
    app[METRICS] = Metrics()
    app.on_response_prepare.append(neutral_server_header)
    add_endpoints(app, served)
    return app


def catalog_of(endpoints: Iterable[Endpoint]) -> dict[str, ProblemType]:
    """The problem types ``endpoints`` can answer, by slug."""
    return problem_types(error for endpoint in endpoints for error in endpoint.refusals)


@web.middleware
async def observe_middleware(
    request: web.Request, handler: Callable[[web.Request], Any]
) -> web.StreamResponse:
    """Give the request its id (the client's ``X-Request-Id`` when well-formed, else a new
    one), echoed in the answer and on every log line written while answering; count and time
    the answer by its route's template; one access line in the log (info)."""
    request_id = request_id_of(request.headers.get(REQUEST_ID_HEADER))
    token = REQUEST_ID.set(request_id)
    started = time.perf_counter()
    status = 500
    try:
        response: web.StreamResponse = await handler(request)
        status = response.status
        response.headers[REQUEST_ID_HEADER] = request_id
        return response
    except web.HTTPException as exc:  # a redirect (the problem middleware answers the rest)
        status = exc.status
        exc.headers[REQUEST_ID_HEADER] = request_id
        raise
    finally:
        elapsed = time.perf_counter() - started
        route = route_of(request)
        request.app[METRICS].observe(request.method, route, status, elapsed)
        access_log(request.method, request.path, route, status, elapsed, gone=client_gone(request))
        REQUEST_ID.reset(token)


def forwarded_middleware(trusted: tuple[Network, ...]) -> Middleware:
    """A request whose peer is in ``trusted`` (the gateway) is answered as from the address
    the last ``X-Forwarded-For`` entry names (the one that proxy saw), so per-source limits
    count clients, not the proxy. A peer elsewhere, or a header that is not an address,
    changes nothing."""

    @web.middleware
    async def forwarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        named = request.headers.get("X-Forwarded-For")
        if named and _within(request.remote, trusted):
            client = named.rsplit(",", 1)[-1].strip()
            try:
                ipaddress.ip_address(client)
            except ValueError:
                pass
            else:
                request = request.clone(remote=client)
        return await handler(request)

    return forwarded


def _within(address: str | None, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)
