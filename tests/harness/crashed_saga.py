"""A purchase taken across a crash of the treasury, in this process, with no switch in
production code: the mint, the treasury and the notary run as three apps on three ports over
one database (:class:`tests.reliability.crashing.Trio`), and the treasury dies at one named
step of its saga by a hook installed here, then a fresh treasury app is started on the same
database and the purchase is asked again until answered.

Each named step of the saga (services/treasury/buying.py) is a hook point:

================  =============================================================================
step              where the treasury dies
================  =============================================================================
opened            after the commit of the purchase's write appending ``purchase-opened``
notary-answered   once the notary answered its ``POST /notary/endorsements`` (receipts, or a
                  409 conflict on the rejected path), before the treasury reads the answer
notarized         after the commit of ``payment-notarized`` (with ``order-signed``)
mint-answered     once the mint answered its ``POST /mint/orders/batch`` (stamped, or refused)
closed            after the commit of ``purchase-closed`` on the delivered path (with
                  ``print-delivered``, ``payment-returned`` and the change)
refunded          after the commit of ``purchase-closed`` on the refunded path (with
                  ``order-refused`` and the refund)
rejected          after the commit of ``purchase-closed`` on the rejected path (with
                  ``payment-rejected``)
================  =============================================================================

A purchase is three commits of the treasury (:data:`COMMITS`), so "the commit of ``event``" is
the treasury's k-th write since the purchase was sent, k the place in its path of the commit
that appends the event. The points once between ``payment-notarized`` and ``order-signed``,
between ``print-delivered``, ``payment-returned`` and ``purchase-closed``, between
``order-refused`` and the refund, and between ``payment-rejected`` and ``purchase-closed`` are
gone: those steps share a commit. A peer's answer is any answer but a 503 retry-later (which
the treasury takes for no answer). The crash is :class:`tests.reliability.crashing.Crash`: the
treasury's app is abandoned as a dead process would be, and the supervisor starts a fresh one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import aiohttp
import pytest

from apiclient.league import LeagueClient, LeagueProblem
from ledger.api.treasury import BuyAnswer, BuyRequest
from ledger.events import MINT_EVENTS, EventBody, parse_event
from ledger.manifest import LeagueManifest
from services.eventlog import EventStore
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.notary.app import NOTARY_LOG
from services.treasury.app import TREASURY_LOG
from tests.harness.ports import free_port
from tests.harness.saga import DELIVERED, REFUNDED, REJECTED
from tests.harness.treasury import Faucet, check_supply
from tests.reliability.crashing import APP, Killer, KillPoint, Trio, answered

#: The steps of each path of a purchase, in its stream.
PATHS = {"delivered": DELIVERED, "refunded": REFUNDED, "rejected": REJECTED}
#: The steps of each path, commit by commit.
COMMITS = {
    "delivered": [DELIVERED[:1], DELIVERED[1:3], DELIVERED[3:]],
    "refunded": [REFUNDED[:1], REFUNDED[1:3], REFUNDED[3:]],
    "rejected": [REJECTED[:1], REJECTED[1:]],
}
NOTARIZE = "/notary/endorsements"
ORDER = "/mint/orders/batch"
#: Each named step: the event whose write's commit it follows, or the peer's path answered.
STEPS: dict[str, tuple[str, str]] = {
    "opened": ("write", "purchase-opened"),
    "notary-answered": ("answer", NOTARIZE),
    "notarized": ("write", "payment-notarized"),
    "mint-answered": ("answer", ORDER),
    "closed": ("write", "purchase-closed"),
    "refunded": ("write", "purchase-closed"),
    "rejected": ("write", "purchase-closed"),
}
#: Every named step, with the path of the purchase that passes it.
CASES = [
    *[
        (step, "delivered")
        for step in (
            "opened",
            "notary-answered",
            "notarized",
            "mint-answered",
            "closed",
        )
    ],
    ("mint-answered", "refunded"),
    ("refunded", "refunded"),
    ("notary-answered", "rejected"),
    ("rejected", "rejected"),
]


def commit_of(path: str, event: str) -> int:
    """The place (from 1) on ``path`` of the commit that appends ``event``."""
    return next(k for k, steps in enumerate(COMMITS[path], 1) if event in steps)


@dataclass
class League:
    """The three services as a wallet reaches them (each call sent once: no crash is due
    before the purchase)."""

    manifest: LeagueManifest
    trio: Trio
    session: aiohttp.ClientSession
    mint: LeagueClient
    treasury: LeagueClient
    notary: LeagueClient

    @property
    def faucet(self) -> Faucet:
        return Faucet(self.session, self.trio.url("treasury"), self.manifest)

    def log(self, service: str) -> EventStore:
        """The service's log, as its live app holds it."""
        key = {"mint": MINT_LOG, "treasury": TREASURY_LOG, "notary": NOTARY_LOG}[service]
        store: EventStore = self.trio.instances[service].server.app[key]
        return store

    async def mint_events(self) -> list[EventBody]:
        return [parse_event(e, MINT_EVENTS) for e in await self.log("mint").read(-1, 10_000)]

    async def steps(self, pid: str) -> list[str]:
        """The purchase's steps in its stream, the supply invariant checked first."""
        treasury = self.log("treasury")
        await check_supply(self.faucet, treasury)
        return [e.type for e in await treasury.read_stream(f"purchase/{pid}")]


@asynccontextmanager
async def running(settings: LeagueSettings, killer: Killer) -> AsyncIterator[League]:
    """The trio on free ports with ``killer``'s hooks (installed by the caller), and a wallet's
    clients of each service."""
    ports = {service: free_port() for service in ("mint", "treasury", "notary")}
    async with (
        Trio(settings, ports, killer) as trio,
        aiohttp.ClientSession() as session,
        LeagueClient(trio.url("mint"), timeout=60) as mint,
        LeagueClient(trio.url("treasury"), timeout=60) as treasury,
        LeagueClient(trio.url("notary"), timeout=60) as notary,
    ):
        yield League(load_manifest(settings), trio, session, mint, treasury, notary)


Hook = Callable[..., Awaitable[tuple[int, str, str]]]


def install_around_calls(
    monkeypatch: pytest.MonkeyPatch,
    service: str,
    path: str,
    before: Callable[[], Awaitable[object]] | None = None,
    answered_then: Callable[[], None] | None = None,
) -> None:
    """Around ``service``'s calls to ``path`` of a peer (over a :class:`Killer`'s hooks when
    installed after them): ``before`` awaited before each is sent, ``answered_then`` called
    once the peer answered it (anything but a 503 retry-later, a refusal included)."""
    inner: Hook = LeagueClient._call

    async def call(
        client: LeagueClient, method: str, to: str, **kwargs: Any
    ) -> tuple[int, str, str]:
        instance = APP.get()
        ours = instance is not None and instance.service == service and to == path
        if ours and before is not None:
            await before()
        try:
            answer = await inner(client, method, to, **kwargs)
        except LeagueProblem as problem:
            if ours and answered_then is not None and problem.status != 503:
                answered_then()
            raise
        if ours and answered_then is not None:
            answered_then()
        return answer

    monkeypatch.setattr(LeagueClient, "_call", call)


def crash_once_answered(killer: Killer, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """The treasury dies the first time a peer answers its call to ``path``."""

    def die() -> None:
        instance = APP.get()
        if killer.victim is None and instance is not None:
            killer.point = KillPoint("treasury", f"{path} answered", 1)
            killer.die(instance)

    install_around_calls(monkeypatch, "treasury", path, answered_then=die)


def crash_after_commit(killer: Killer, path: str, event: str) -> None:
    """The treasury dies just after the commit of the purchase's write appending ``event``
    on the way to ``path``: its k-th write from now (a purchase's steps are the treasury's only
    writes once it is sent)."""
    k = killer.writes["treasury"] + commit_of(path, event)
    killer.point = KillPoint("treasury", "after-commit", k)


@dataclass
class Crossed:
    """A purchase taken across a crash: its answer and steps, and the mint's events after."""

    answer: BuyAnswer
    steps: list[str]
    mint_events: list[EventBody]


async def bought_across_a_crash(
    settings: LeagueSettings,
    monkeypatch: pytest.MonkeyPatch,
    step: str,
    path: str,
    prepare: Callable[[League], Awaitable[BuyRequest]],
) -> Crossed:
    """The purchase ``prepare`` makes sent to a treasury that dies at ``step`` (see the module's
    table) on the way to ``path``, resent until a fresh treasury on the same database answers:
    its answer (the same when asked again), its steps with the supply invariant checked, and
    the mint's events. Fails unless the treasury died there, once."""
    kind, what = STEPS[step]
    killer = Killer(None)
    killer.install(monkeypatch)
    if kind == "answer":
        crash_once_answered(killer, monkeypatch, what)
    async with running(settings, killer) as league:
        request = await prepare(league)
        if kind == "write":
            crash_after_commit(killer, path, what)
        answer = await answered(partial(league.treasury.buy, request))
        await league.trio.settled()
        assert killer.victim is not None, f"the treasury never reached {step}"
        assert (killer.victim.service, league.trio.restarts) == ("treasury", 1)
        assert await league.treasury.buy(request) == answer
        steps = await league.steps(request.purchase_id)
        return Crossed(answer, steps, await league.mint_events())
