"""The app factory every service starts from, and the services' shared objects.

Each service is a :class:`Service`: a name, its endpoints and an ``install`` step that adds its
own state to an app. One service alone and all of them in one process are the same
composition, so there is one way to run either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
from aiohttp import web

from services.http.endpoints import Endpoint, add_endpoints
from services.http.problems import ProblemType, problem_catalog, problem_middleware

#: The connection pool every service of an app shares (one process, one pool).
POOL = web.AppKey("pool", asyncpg.Pool)

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
    found = problem_catalog().get(slug)
    if found is None:
        raise web.HTTPNotFound(text=f"no problem type is called {slug!r}")
    return found


PROBLEM_ENDPOINTS = (
    Endpoint(
        "GET", "/problems/{slug}", "What a problem type means", describe_problem, ProblemType
    ),
)


def new_app(*, max_body: int = DEFAULT_MAX_BODY) -> web.Application:
    """An empty app with the problem middleware, the body bound and ``/problems/{slug}``."""
    app = web.Application(client_max_size=max_body, middlewares=[problem_middleware])
    add_endpoints(app, PROBLEM_ENDPOINTS)
    return app


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
