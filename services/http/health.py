"""The operator's probes: ``GET /healthz`` (liveness) and ``GET /readyz`` (readiness).

``/healthz`` answers 200 while the process serves requests; it touches nothing else (a
container runtime restarts a process that stops answering it). ``/readyz`` answers 200 when
the service can do its work: its database answers, the schema is at the migrations' head, and
every check a service registered passes (the kernel registers the feeds' lag: a follower far
behind, or stopped on a refused feed, is not ready). Otherwise it is a 503 problem+json with
``Retry-After`` whose detail names each check that failed and why: ``store-unavailable`` when
the database is among them, else ``retry-later`` (the service's own state is sound; it waits
on something that comes by itself, such as a followed feed it has not caught up with).

These are operator endpoints: they are not in the services' OpenAPI documents and the gateway
does not proxy them (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg
from aiohttp import web
from pydantic import BaseModel, Field

from ledger.errors import RetryLater
from services.eventlog import StoreUnavailable
from services.eventlog.migrate import head_revision
from services.eventlog.store import DATABASE_ERRORS
from services.http.endpoints import Endpoint
from services.http.pool import POOL

#: A readiness check: None when ready, else one sentence saying what is not.
Check = Callable[[web.Application], Awaitable[str | None]]
#: Seconds one check may take before it counts as failed.
CHECK_TIMEOUT = 3.0
#: Seconds a client should wait before asking again when not ready.
NOT_READY_RETRY = 5


@dataclass(frozen=True, slots=True)
class Readiness:
    """A named readiness check."""

    name: str
    check: Check


#: The app's readiness checks beyond the database's own, in the order they are reported.
READINESS = web.AppKey("readiness", list[Readiness])


class Alive(BaseModel):
    status: str = Field(description="Always 'alive'")


class Ready(BaseModel):
    status: str = Field(description="Always 'ready' (a service not ready answers 503)")
    checks: list[str] = Field(description="The checks that passed")


def add_readiness(app: web.Application, name: str, check: Check) -> None:
    """Make ``/readyz`` also require ``check`` (registered before the app starts)."""
    app.setdefault(READINESS, []).append(Readiness(name, check))


async def alive(request: web.Request) -> Alive:
    """200 while the process answers; nothing else is consulted."""
    return Alive(status="alive")


async def ready(request: web.Request) -> Ready:
    """200 when the database answers at the migrations' head and every registered check
    passes; otherwise a 503 naming each failure: ``store-unavailable`` when the database's
    check failed, ``retry-later`` when only the others did (a feed not caught up)."""
    app = request.app
    checks = [Readiness("database", database_ready), *app.get(READINESS, [])]
    results = await asyncio.gather(*(_run(check, app) for check in checks))
    failed = [f"{check.name}: {why}" for check, why in zip(checks, results, strict=True) if why]
    if failed:
        detail = "not ready: " + "; ".join(failed)
        if results[0]:
            raise StoreUnavailable(detail, NOT_READY_RETRY)
        raise RetryLater(detail, NOT_READY_RETRY)
    return Ready(status="ready", checks=[check.name for check in checks])


async def _run(readiness: Readiness, app: web.Application) -> str | None:
    try:
        return await asyncio.wait_for(readiness.check(app), CHECK_TIMEOUT)
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT:g} s"
    except (*DATABASE_ERRORS, StoreUnavailable) as exc:
        return f"the database does not answer ({type(exc).__name__})"


async def database_ready(app: web.Application) -> str | None:
    """The database answers and its schema is at the head of the shipped migrations."""
    try:
        found = await app[POOL].fetchval("SELECT version_num FROM alembic_version")
    except asyncpg.UndefinedTableError:  # never migrated (other failures: see _run)
        found = None
    head = _head()
    if found != head:
        return f"the schema is at migration {found or 'none'}, not {head}: run `league migrate`"
    return None


@functools.cache
def _head() -> str:
    """The migrations' head revision (read from the shipped scripts once)."""
    return head_revision()


HEALTH_ENDPOINTS = (
    Endpoint("GET", "/healthz", "Liveness: the process answers", alive, Alive),
    Endpoint("GET", "/readyz", "Readiness: database, schema and feeds", ready, Ready),
)
