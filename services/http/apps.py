"""The app factory every service starts from, and the services' shared objects.

Each service is a :class:`Service`: a name, its endpoints and an ``install`` step that adds its
own state to an app. One service alone and all of them in one process are the same
composition, so there is one way to run either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import asyncpg
from aiohttp import web

from ledger.api.problems import ProblemType
from services.http.endpoints import Endpoint, add_endpoints
from services.http.limits import LIMITS, ServerLimits
from services.http.problems import neutral_server_header, problem_middleware, problem_types

#: The connection pool every service of an app shares (one process, one pool).
POOL = web.AppKey("pool", asyncpg.Pool)
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


async def describe_problem(request: web.Request) -> ProblemType:
    """What a problem type means (the ``type`` URI of every problem answer points here)."""
    slug = request.match_info["slug"]
    found = request.app[PROBLEM_TYPES].get(slug)
    if found is None:
        raise web.HTTPNotFound(text=f"no problem type is called {slug!r}")
    return found


PROBLEM_ENDPOINTS = (
    Endpoint(
        "GET", "/problems/{slug}", "What a problem type means", describe_problem, ProblemType
    ),
)


def new_app(endpoints: Iterable[Endpoint], *, max_body: int = DEFAULT_MAX_BODY) -> web.Application:
    """An app serving ``endpoints`` with the problem middleware, the body bound, the
    published limits (``app[LIMITS]``, which a test may replace before serving), a neutral
    ``Server`` header, and ``/problems/{slug}`` describing exactly the problem types those
    endpoints can answer."""
    served = (*endpoints, *PROBLEM_ENDPOINTS)
    app = web.Application(client_max_size=max_body, middlewares=[problem_middleware])
    app[PROBLEM_TYPES] = catalog_of(served)
    app[LIMITS] = ServerLimits()
    app.on_response_prepare.append(neutral_server_header)
    add_endpoints(app, served)
    return app


def catalog_of(endpoints: Iterable[Endpoint]) -> dict[str, ProblemType]:
    """The problem types ``endpoints`` can answer, by slug."""
    return problem_types(error for endpoint in endpoints for error in endpoint.refusals)


#: A cleanup context: code before its ``yield`` runs at start-up, after it at shutdown.
CleanupContext = Callable[[web.Application], AsyncIterator[None]]

#: Connections the shared pool keeps open at most.
POOL_MAX_SIZE = 10


def pool_context(database_url: str) -> CleanupContext:
    """A cleanup context that opens ``app[POOL]`` at start-up and closes it at shutdown."""

    async def open_pool(app: web.Application) -> AsyncIterator[None]:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=POOL_MAX_SIZE)
        app[POOL] = pool
        try:
            yield
        finally:
            await pool.close()

    return open_pool
