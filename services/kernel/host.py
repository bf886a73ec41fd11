"""The host of a log service: the shell every league service has, written once.

A service of the league is a :class:`ServiceSpec`: its name and endpoints, the peers it calls
and the feeds it follows, and how it opens (:data:`Open`): given the :class:`Shell` the host
has built, it puts its own state on the app and says what it runs (:class:`Running`). The
host builds the rest the same way for every service:

1. at install (before serving, so a bad league fails at once): the manifest, the service's
   key and the checkpoint file kept outside the database;
2. at start-up: the service's signed event log on the shared pool, the checkpointer (the
   database checked against the kept checkpoint, one checkpoint signed), the witness of the
   other services' logs and the submitter of this log's checkpoints to theirs, a league
   client for each peer, then the service's own state;
3. while serving: the election of the log's leader (:mod:`services.kernel.leadership`); the
   worker that leads runs the checkpointer's beat, the witness submissions and the service's
   leader tasks (following feeds, resuming sagas);
4. at shutdown, in reverse: the leader's work cancelled, the service's writers closed (the
   groups already waiting are answered), the peers' clients, the witnessing, the checkpointer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from aiohttp import web

from apiclient.league import LeagueClient
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from services.eventlog import EventStore, PostgresEventStore
from services.eventlog.turns import Turnstile
from services.http.apps import DEFAULT_MAX_BODY, POOL, Service
from services.http.endpoints import Endpoint
from services.http.logs import log_endpoints
from services.http.metrics import Figure
from services.kernel.checkpoints import Checkpointer, CheckpointFile
from services.kernel.founding import load_manifest, load_service_key, read_passphrase
from services.kernel.leadership import Leadership, LeaderTask
from services.kernel.ratelimit import SourceBuckets, forget_full, source_buckets
from services.kernel.settings import LeagueSettings
from services.kernel.witness_client import Witnessing, witness_urls, witnessing
from services.kernel.witness_server import witness_endpoints

log = logging.getLogger(__name__)

#: Seconds the leader's work is given to stop at shutdown.
STOP_WAIT = 10.0


@dataclass(frozen=True, slots=True)
class Shell:
    """What the host has opened for a service when the service opens its own state."""

    app: web.Application
    settings: LeagueSettings
    manifest: LeagueManifest
    key: SigningKey
    store: PostgresEventStore
    checkpointer: Checkpointer
    witnessing: Witnessing
    #: A client of each peer the spec names (None: where it answers is not known).
    peers: Mapping[str, LeagueClient | None]
    leadership: Leadership

    def buckets(self, name: str, what: str) -> SourceBuckets:
        """The service's per-source buckets ``name`` of ``what``, at the published
        ``source_prints_per_minute`` in bursts of ``source_prints_burst``: shared by the
        workers through the database when there are several, else in memory."""
        policies = self.manifest.policies
        return source_buckets(
            self.store,
            name,
            what=what,
            shared=self.settings.workers > 1,
            per_minute=policies.source_prints_per_minute,
            burst=policies.source_prints_burst,
        )


@dataclass(frozen=True, slots=True)
class Running:
    """What an opened service runs: work only the log's leader does, and what to close (in
    order) at shutdown, after the leader's work has stopped."""

    leader: tuple[LeaderTask, ...] = ()
    close: tuple[Callable[[], Awaitable[None]], ...] = ()


#: Opens a service's own state on ``shell.app`` (its writers, its links to peers).
Open = Callable[[Shell], Awaitable[Running]]


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """A league service: what it serves, whom it calls, and how it opens."""

    name: str
    title: str
    description: str
    #: The service's own endpoints (the host adds its log's and its witness's).
    endpoints: tuple[Endpoint, ...]
    #: The app key its event log is kept under (its log endpoints read it).
    log_key: web.AppKey[EventStore]
    open: Open
    #: The services it calls (a league client for each is in :attr:`Shell.peers`).
    peers: tuple[str, ...] = ()
    #: The services whose feeds it follows: it is not ready before it has read each.
    follows: tuple[str, ...] = ()
    max_body: int = DEFAULT_MAX_BODY
    figures: tuple[Figure, ...] = field(default=())
    #: Whether its log's writers take turns across the workers (services/eventlog/turns.py):
    #: where a group's transaction costs more than a turn's two round trips save.
    turns: bool = False

    def service(self) -> Service:
        """The service as an app composes it (:func:`services.kernel.compose.compose`)."""
        return Service(
            name=self.name,
            title=self.title,
            description=self.description,
            endpoints=(
                self.endpoints
                + log_endpoints(self.name, self.log_key)
                + witness_endpoints(self.name)
            ),
            install=lambda app, settings: install(self, app, settings),
            max_body=self.max_body,
            figures=self.figures,
            follows=self.follows,
        )


def install(spec: ServiceSpec, app: web.Application, settings: LeagueSettings) -> None:
    """Load the manifest and the service's key now (a bad league fails before serving) and
    open the service when the app starts."""
    manifest = load_manifest(settings)
    key = load_service_key(settings, manifest, spec.name, read_passphrase(settings))
    kept = CheckpointFile(
        settings.checkpoint_path(spec.name), f"{manifest.league}/{spec.name}", key.public
    )
    peers = {name: settings.service_url(name) for name in spec.peers}
    for name, url in peers.items():
        if url is None:
            log.warning("the %s does not know where the %s answers", spec.name, name)

    async def hosted(app: web.Application) -> AsyncIterator[None]:
        async with _opened(spec, app, settings, manifest, key, kept, peers):
            yield

    app.cleanup_ctx.append(hosted)


@contextlib.asynccontextmanager
async def _opened(
    spec: ServiceSpec,
    app: web.Application,
    settings: LeagueSettings,
    manifest: LeagueManifest,
    key: SigningKey,
    kept: CheckpointFile,
    peer_urls: Mapping[str, str | None],
) -> AsyncIterator[None]:
    # Several workers append to the log: a service whose spec says so has its writers take turns.
    turnstile = (
        Turnstile(settings.database, spec.name) if spec.turns and settings.workers > 1 else None
    )
    store = PostgresEventStore(
        app[POOL],
        schema=spec.name,
        origin=f"{manifest.league}/{spec.name}",
        key=key,
        turnstile=turnstile,
    )
    app[spec.log_key] = store
    leadership = Leadership(settings.database, spec.name)
    async with contextlib.AsyncExitStack() as stack:
        if turnstile is not None:
            stack.callback(turnstile.close)
        checkpointer = await stack.enter_async_context(
            Checkpointer(store, manifest.policies, kept, leadership=leadership).running()
        )
        submitter = await stack.enter_async_context(
            witnessing(
                app,
                spec.name,
                manifest,
                key,
                store,
                checkpointer,
                witness_urls(settings, spec.name, manifest),
            )
        )
        peers: dict[str, LeagueClient | None] = {}
        for name, url in peer_urls.items():
            peers[name] = (
                None if url is None else await stack.enter_async_context(LeagueClient(url))
            )
        shell = Shell(
            app, settings, manifest, key, store, checkpointer, submitter, peers, leadership
        )
        running = await spec.open(shell)
        for close in reversed(running.close):
            stack.push_async_callback(close)
        leader = (submitter.run, *running.leader)
        if settings.workers > 1:
            leader += (partial(forget_full, store),)
        await stack.enter_async_context(_task(leadership.run(leader), f"election {spec.name}"))
        yield


@contextlib.asynccontextmanager
async def _task(work: Awaitable[None], name: str) -> AsyncIterator[None]:
    """Run ``work`` as a task for the block's duration; cancel it on the way out, waiting
    at most :data:`STOP_WAIT` seconds for it to end (a stuck piece of it is logged and left
    behind rather than holding the whole shutdown)."""
    task = asyncio.ensure_future(work)
    task.set_name(name)
    try:
        yield
    finally:
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_WAIT)
        if not done:
            log.error("%s did not stop within %g s of being cancelled", name, STOP_WAIT)
        elif not task.cancelled() and task.exception() is not None:
            log.error("%s ended with %r", name, task.exception())
