"""Composing services into one app, and running it.

``league serve`` and each service's ``create_app`` go through :func:`compose`: one app, one
shared pool, each service installed on it. Whether the mint runs alone or beside the treasury
and notary, it is the same code path.
"""

from __future__ import annotations

import asyncio
import faulthandler
import importlib.metadata
import logging
import signal
import socket
import sys
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence

from aiohttp import web

from ledger.manifest import LeagueManifest
from services.eventlog import StoreUnavailable
from services.eventlog.store import DATABASE_ERRORS
from services.http.apps import POOL, Service, new_app, pool_context
from services.http.metrics import Figure, add_figures, sql_figure
from services.http.openapi import openapi_document, render
from services.http.pages import Page, html_response, wants_html
from services.http.serving import serving, structured_logs, throttled_logs
from services.kernel.feeds import watch_feeds
from services.kernel.founding import load_manifest, read_passphrase
from services.kernel.settings import LeagueSettings

log = logging.getLogger(__name__)

PACKAGE = "the-window-league"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: What the server's log must never show (the passphrase, the database's password).
LOG_SECRETS = web.AppKey("log_secrets", list[str])


def compose(settings: LeagueSettings, services: Sequence[Service]) -> web.Application:
    """One app serving ``services`` over the database at ``settings.database_url``, with
    each service's OpenAPI document at ``/<service>/openapi.json``, an index at ``/`` (naming
    the league as its manifest does), a health check at ``/health``, and at ``/metrics``
    each service's figures, the events it appended and the lag of the feeds it follows (which
    ``/readyz`` checks too)."""
    app = new_app(
        [endpoint for service in services for endpoint in service.endpoints],
        max_body=max(service.max_body for service in services),
        trusted_proxies=settings.trusted_proxies,
    )
    app.cleanup_ctx.append(pool_context(settings.database, settings.database_read_url))
    version = package_version()
    manifest = load_manifest(settings)
    # The peers this app does not serve answer where the manifest says (unless a setting says
    # otherwise); those it serves, at its own address.
    settings = settings.with_peers(manifest, [service.name for service in services])
    for service in services:
        service.install(app, settings)
        app.router.add_get(f"/{service.name}/openapi.json", _document(service, version))
    app.router.add_get("/", _index(manifest, services, version))
    app.router.add_get("/health", health)
    for service in services:
        add_figures(app, (*service.figures, _events_appended(service.name)))
    watch_feeds(app, settings, {service.name: service.follows for service in services})
    app[LOG_SECRETS] = log_secrets(settings)
    return app


def _events_appended(service: str) -> Figure:
    return sql_figure(
        "league_events_appended",
        "Events appended to each service's log (its size: seqs are dense from 0)",
        ("service",),
        f"SELECT '{service}', coalesce(max(seq) + 1, 0) FROM {service}.events",  # noqa: S608 (a registered service's schema)
        kind="counter",
    )


def log_secrets(settings: LeagueSettings) -> list[str]:
    """The secrets ``settings`` lead to, which no log line may show."""
    found = [read_passphrase(settings) or ""]
    for url in (settings.database_url, settings.database_read_url):
        if url:
            found.append(urllib.parse.urlsplit(url).password or "")
    return [secret for secret in found if secret]


async def health(request: web.Request) -> web.Response:
    """200 when the server answers and its database does; a 503 problem otherwise."""
    try:
        await request.app[POOL].fetchval("SELECT 1")
    except DATABASE_ERRORS as exc:
        log.warning("health check: the database does not answer: %s: %s", type(exc).__name__, exc)
        raise StoreUnavailable("the service is unavailable: its database does not answer") from None
    return web.json_response({"status": "ok"})


def package_version() -> str:
    """The installed distribution's version (it versions the OpenAPI documents too)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _document(service: Service, version: str) -> Handler:
    text = render(openapi_document(service, version))

    async def openapi(request: web.Request) -> web.Response:
        return web.Response(text=text, content_type="application/json")

    return openapi


def _index(manifest: LeagueManifest, services: Sequence[Service], version: str) -> Handler:
    """``/``: the services this server runs, as JSON; to a browser, a landing page linking
    the ledger, the treasury and a serial search (each answered here or, behind the
    gateway, by the service serving it)."""
    league = manifest.name
    landing = Page("index.html", lambda request: manifest)
    index = {
        "name": league,
        "version": version,
        "services": [
            {
                "name": service.name,
                "title": service.title,
                "openapi": f"/{service.name}/openapi.json",
                "paths": sorted({endpoint.path for endpoint in service.endpoints}),
            }
            for service in services
        ],
    }

    async def describe(request: web.Request) -> web.Response:
        if wants_html(request):  # a browser: the landing page (docs/operations.md)
            response = html_response(
                request, landing, "index.html", services=index["services"], version=version
            )
        else:
            response = web.json_response(index)
        response.headers["Vary"] = "Accept"
        return response

    return describe


async def run_until_stopped(
    app: web.Application,
    host: str,
    port: int,
    *,
    internal: socket.socket | None = None,
    listener: socket.socket | None = None,
    ready: Callable[[], None] | None = None,
) -> None:
    """Serve ``app`` until SIGINT or SIGTERM; print the address actually bound (port 0 works).
    With ``internal`` (:func:`services.http.serving.internal_listener`) it is also served
    there, for the server's calls to itself (:meth:`LeagueSettings.with_internal`). With
    ``listener`` (a worker's: services/kernel/workers.py) it serves that socket, bound and
    announced by the process that started the workers, prints nothing and calls ``ready``
    once it serves.

    The signal handlers are installed before anything else, so a signal at any moment after
    start-up (even right after the ``serving on`` line, or before it) stops the server
    cleanly. The server's log is throttled while it serves.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    secrets: list[str] = app.get(LOG_SECRETS, [])
    stopping: asyncio.Task[None] | None = None
    try:
        with structured_logs(secrets):
            async with (
                throttled_logs(),
                serving(app, host, port, internal=internal, listener=listener) as runner,
            ):
                if listener is None:
                    for bound in runner.public_addresses:
                        print(f"serving on http://{bound[0]}:{bound[1]}", flush=True)
                if ready is not None:
                    ready()
                await stop.wait()
                if listener is None:
                    print("stopping", file=sys.stderr, flush=True)
                stopping = asyncio.create_task(report_slow_stop(SLOW_STOP))
                faulthandler.dump_traceback_later(SLOW_STOP + 1, exit=False)
    finally:
        if stopping is not None:
            stopping.cancel()
            faulthandler.cancel_dump_traceback_later()
        for signum in signals:
            loop.remove_signal_handler(signum)


#: Seconds a stop may take before the server says what it is still waiting for: more than
#: the connections' shutdown grace (services/http/limits.py), well under the workers'
#: STOP_GRACE (services/kernel/workers.py), after which a worker is killed unexplained.
SLOW_STOP = 15.0


async def report_slow_stop(after: float) -> None:
    """After ``after`` seconds of stopping, log every task still pending with its stack
    (and, a second later, every thread's stack on stderr, in case the event loop itself is
    stuck): a stop that hangs says where."""
    await asyncio.sleep(after)
    me = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not me]
    lines = [f"still stopping after {after:g} s; {len(pending)} tasks pending:"]
    for task in pending:
        frames = task.get_stack(limit=8)
        where = " <- ".join(
            f"{frame.f_code.co_qualname} ({frame.f_code.co_filename}:{frame.f_lineno})"
            for frame in reversed(frames)
        )
        lines.append(f"  {task.get_name()}: {where or task.get_coro()!r}")
    log.error("\n".join(lines))
