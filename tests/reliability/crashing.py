"""Crashing a service in this process, at a kill point the test chooses, with no switch in
production code: the hooks are installed by the test, around the event store's commit and the
league client's calls between services.

The three services run as three apps (``compose`` of one service each) on three ports over one
database, each with its own pool, as three processes would. Each app is started with
:data:`APP` set to its :class:`Instance`, so every task it ever makes (handlers, writers,
followers, the resumer) carries it: a hook knows which service, and which life of it, is
writing or calling.

A kill point is ``(service, where, k)``:

- ``before-commit`` / ``after-commit``: the service's k-th durable write (a transaction that
  appended events to its log), the crash raised just before its commit (rolled back) or just
  after it (committed, its answer never given);
- ``call-unsent`` / ``call-answered``: the service's k-th call to another service for a
  wallet's request (the treasury's payments to the notary and orders to the mint), the
  caller dying before it sends, or after the callee has answered (the callee did it; the
  caller never learned).

The crash is :class:`Crash`, a ``BaseException``: no ``except Exception`` of the services
catches it, so it leaves the handler or task that hit it, as a process's death would. The
instance is then dead: every later write or call of it dies the same way (nothing more of it
reaches the database), the supervisor abandons it (its pool terminated, its server closed
abruptly) and starts a fresh app of the service on the same port and database. Wallets resend
what they got no answer to (:func:`answered`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable
from services.eventlog import PostgresEventStore
from services.eventlog.store import PostgresTransaction
from services.http.apps import POOL
from services.kernel.compose import compose
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY

T = TypeVar("T")
log = logging.getLogger(__name__)

SERVICES = {"mint": MINT, "treasury": TREASURY, "notary": NOTARY}
WRITES = ("before-commit", "after-commit")
CALLS = ("call-unsent", "call-answered")
#: The calls a request of a wallet makes a service send another (the treasury's payments to
#: the notary, its orders to the mint); feeds and witnessing are the services' own rounds.
PEER_CALLS = {("POST", "/notary/endorsements"), ("POST", "/mint/orders/batch")}
#: A guard against a hung scenario (resends of one request), not a timing assertion.
GUARD_SECONDS = 120
RESEND_PAUSE = 0.05
#: Requests resent by :func:`answered` (no answer, or 503), for the figures.
RESENT: Counter[str] = Counter()


class Crash(BaseException):
    """A service's process dying at a kill point (never caught by the services' handlers)."""


@dataclass(eq=False)
class Instance:
    """One life of one service: its app's server; dead once it crashed."""

    service: str
    server: TestServer
    dead: bool = False


#: The instance whose code is running (unset in the test's own tasks).
APP: contextvars.ContextVar[Instance | None] = contextvars.ContextVar("APP", default=None)


@dataclass(frozen=True)
class KillPoint:
    service: str
    where: str
    k: int

    def __str__(self) -> str:
        return f"{self.service}-{self.where}-{self.k}"


@dataclass
class Killer:
    """Counts each service's durable writes and calls; crashes the one at its point, once."""

    point: KillPoint | None
    writes: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    fired: asyncio.Event = field(default_factory=asyncio.Event)
    victim: Instance | None = None
    #: Set at each durable write counted (a test waiting for writes clears it and waits).
    wrote: asyncio.Event = field(default_factory=asyncio.Event)

    def _due(self, instance: Instance, where: str, count: int) -> bool:
        point = self.point
        return (
            point is not None
            and self.victim is None
            and point.service == instance.service
            and point.where == where
            and point.k == count
        )

    def die(self, instance: Instance) -> None:
        """Kill ``instance`` here (the supervisor is woken to restart its service)."""
        instance.dead = True
        self.victim = instance
        self.fired.set()
        raise Crash(str(self.point))

    @staticmethod
    def check_alive(instance: Instance | None) -> None:
        if instance is not None and instance.dead:
            raise Crash(f"{instance.service} is dead")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The hooks, around ``PostgresEventStore.transaction`` and ``LeagueClient._call``."""
        transaction = PostgresEventStore.transaction
        call = LeagueClient._call
        killer = self

        @contextlib.asynccontextmanager
        async def crashing_transaction(
            store: PostgresEventStore,
        ) -> AsyncIterator[PostgresTransaction]:
            instance = APP.get()
            killer.check_alive(instance)
            count = 0
            async with transaction(store) as tx:
                yield tx
                if instance is not None and tx.appended:
                    killer.check_alive(instance)  # died meanwhile: this never commits
                    killer.writes[instance.service] += 1
                    count = killer.writes[instance.service]
                    killer.wrote.set()
                    if killer._due(instance, "before-commit", count):
                        killer.die(instance)
            if instance is not None and count and killer._due(instance, "after-commit", count):
                killer.die(instance)

        async def crashing_call(
            client: LeagueClient, method: str, path: str, **kwargs: Any
        ) -> tuple[int, str, str]:
            instance = APP.get()
            if instance is None or (method, path) not in PEER_CALLS:
                killer.check_alive(instance)
                return await call(client, method, path, **kwargs)
            killer.check_alive(instance)
            killer.calls[instance.service] += 1
            count = killer.calls[instance.service]
            if killer._due(instance, "call-unsent", count):
                killer.die(instance)
            answer = await call(client, method, path, **kwargs)
            killer.check_alive(instance)
            if killer._due(instance, "call-answered", count):
                killer.die(instance)
            return answer

        monkeypatch.setattr(PostgresEventStore, "transaction", crashing_transaction)
        monkeypatch.setattr(LeagueClient, "_call", crashing_call)


@dataclass
class Trio:
    """The mint, the treasury and the notary, each its own app on its own port."""

    settings: LeagueSettings
    ports: dict[str, int]
    killer: Killer
    instances: dict[str, Instance] = field(default_factory=dict)
    restarts: int = 0
    _supervisor: asyncio.Task[None] | None = None
    _recovered: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.ports[service]}"

    def _settings(self, service: str) -> LeagueSettings:
        return self.settings.model_copy(
            update={
                "port": self.ports[service],
                "mint_url": self.url("mint"),
                "treasury_url": self.url("treasury"),
                "notary_url": self.url("notary"),
            }
        )

    async def start(self, service: str) -> Instance:
        """A fresh app of ``service`` on its port (a crash while it starts: started again)."""
        for _ in range(3):
            server = TestServer(
                compose(self._settings(service), [SERVICES[service]]),
                host="127.0.0.1",
                port=self.ports[service],
            )
            instance = Instance(service, server)
            token = APP.set(instance)  # every task of the app is made under it
            try:
                await server.start_server(shutdown_timeout=0.2)
            except Crash:
                await self.abandon(instance)
                continue
            finally:
                APP.reset(token)
            self.instances[service] = instance
            return instance
        raise AssertionError(f"the {service} never started")

    async def abandon(self, instance: Instance) -> None:
        """Drop a dead instance as its process's death would: connections cut, tasks gone."""
        instance.dead = True
        app = instance.server.app
        if POOL in app:
            app[POOL].terminate()
        # Its tasks that died of the crash re-raise it where the cleanup awaits them.
        with contextlib.suppress(Crash, Exception):
            await instance.server.close()

    async def __aenter__(self) -> Trio:
        asyncio.get_running_loop().set_exception_handler(_quiet_about_crashes)
        for service in ("mint", "treasury", "notary"):
            await self.start(service)
        self._supervisor = asyncio.create_task(self._supervise())
        return self

    async def _supervise(self) -> None:
        await self.killer.fired.wait()
        victim = self.killer.victim
        assert victim is not None
        await self.abandon(victim)
        await self.start(victim.service)
        self.restarts += 1
        self._recovered.set()

    async def settled(self) -> None:
        """Once the crash (if any) has been recovered from."""
        if self.killer.fired.is_set():
            await asyncio.wait_for(self._recovered.wait(), GUARD_SECONDS)

    async def __aexit__(self, *exc: object) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        for instance in self.instances.values():
            with contextlib.suppress(Crash, Exception):
                await instance.server.close()


def _quiet_about_crashes(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The tasks of a crashed instance end with the crash, which nobody retrieves (a dead
    process's tasks are gone): not worth a line; anything else is reported as usual."""
    if not isinstance(context.get("exception"), Crash):
        loop.default_exception_handler(context)


async def answered(call: Callable[[], Awaitable[T]]) -> T:
    """A wallet's request, resent until it is answered: while its service is down (no
    connection, a cut connection) or busy with a peer down (503 retry-later)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_SECONDS
    while True:
        try:
            return await call()
        except LeagueUnreachable:
            pass
        except LeagueProblem as problem:
            if problem.status != 503:
                raise
        if loop.time() > deadline:
            raise AssertionError("a request was never answered")
        RESENT["unanswered"] += 1
        await asyncio.sleep(RESEND_PAUSE)
