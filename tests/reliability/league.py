"""A real league for the reliability tests: the mint, the treasury and the notary each served
by its own aiohttp server on its own port in this process, over one migrated PostgreSQL
database, each told the others' URLs (as ``league serve NAME`` with MINT_URL, TREASURY_URL
and NOTARY_URL). Any one service can be killed (its server closed at once, handlers in flight
cancelled, no grace) and started again on the same database and port.

Not a test module: the reliability tests import it (they import no test module).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.catalog import PLAYING
from ledger.manifest import Policies
from ledger.print_runs import PrintRun, PrintRunTable
from ledger.savecode import MINIMUM_KDF
from services.eventlog.migrate import upgrade
from services.kernel.compose import compose
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY

T = TypeVar("T")

NAMES = ("mint", "treasury", "notary")
SERVICES = {"mint": MINT, "treasury": TREASURY, "notary": NOTARY}

#: A guard against a hung league, not a timing assertion: how many times a call is asked
#: again while a service is down or waits for another (at :data:`PAUSE` apart).
ATTEMPTS = 1200
PAUSE = 0.05

#: Cheap proof of work and allowances no test run reaches, checkpoints every 20 ms (so an
#: audit waits little for checkpoints covering the logs), no source limit to speak of.
POLICIES = Policies(
    faucet_marks_per_day=1_000_000,
    stamp_allowance_per_day=100_000,
    stamp_batch_limit=10,
    checkpoint_interval_ms=20,
    stamp_work=1,
    stamp_work_rise=1,
    source_prints_per_minute=1_000_000,
    source_prints_burst=1_000_000,
)

#: Runs of every size: Tally never runs out, Pairing and Torsor (uncommon) after a while,
#: Escrow at once (3 standard, 1 gilt, 1 holofoil), so refunds and refused stamps happen.
RUNS = {
    "Tally": (6_000, 2_000, 1_000),
    "Pairing": (40, 4, 2),
    "Torsor": (20, 3, 1),
    "Escrow": (3, 1, 1),
}
PRINT_RUNS = PrintRunTable(
    runs=tuple(
        PrintRun(
            title=c.name,
            set=c.card_set.value,
            standard=RUNS.get(c.name, (3, 2, 1))[0],
            gilt=RUNS.get(c.name, (3, 2, 1))[1],
            holofoil=RUNS.get(c.name, (3, 2, 1))[2],
        )
        for c in PLAYING
    )
)


#: How long a killed service's handlers in flight may still run (seconds).
KILL_GRACE = 0.001


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def found(home: Path, database_url: str) -> LeagueSettings:
    """A new league in ``home`` over ``database_url`` (migrated here)."""
    upgrade(database_url)
    settings = LeagueSettings(data_dir=home, database_url=database_url)
    create_league(settings, print_runs=PRINT_RUNS, policies=POLICIES, kdf=MINIMUM_KDF)
    return settings


class League:
    """The three services, each its own server on its own port."""

    def __init__(self, settings: LeagueSettings) -> None:
        self.ports = {name: free_port() for name in NAMES}
        self.urls = {name: f"http://127.0.0.1:{port}" for name, port in self.ports.items()}
        self.settings = {
            name: settings.model_copy(
                update={
                    "port": self.ports[name],
                    "mint_url": self.urls["mint"],
                    "treasury_url": self.urls["treasury"],
                    "notary_url": self.urls["notary"],
                }
            )
            for name in NAMES
        }
        self.servers: dict[str, TestServer] = {}

    async def start(self, name: str) -> None:
        """Serve ``name`` on its port (on its database, as it was left)."""
        server = TestServer(
            compose(self.settings[name], [SERVICES[name]]), host="127.0.0.1", port=self.ports[name]
        )
        # No grace at shutdown: closing the server cancels every handler still running after
        # a millisecond (aiohttp reads a timeout of 0 as none: it would wait for them all).
        await server.start_server(shutdown_timeout=KILL_GRACE)
        self.servers[name] = server

    async def kill(self, name: str) -> None:
        """Close ``name`` at once: handlers in flight cancelled, its background work (the
        notary's following, the treasury's resumer, checkpointers) stopped where it was."""
        await self.servers.pop(name).close()

    async def start_all(self) -> None:
        for name in ("mint", "notary", "treasury"):
            await self.start(name)

    async def kill_all(self) -> None:
        for name in list(self.servers):
            await self.kill(name)


async def asked(call: Callable[[], Awaitable[T]]) -> T:
    """``call``'s answer, asked again while a service is unreachable or answers 503
    (retry-later: a purchase waiting for a service, the notary not yet following an issue)
    or ``not-stamped`` (the notary has not followed the mint's stamp yet). Every protocol
    POST is idempotent, so asking again never does a thing twice."""
    for _ in range(ATTEMPTS):
        try:
            return await call()
        except LeagueUnreachable:
            pass
        except LeagueProblem as problem:
            if problem.status != 503 and problem.slug != "not-stamped":
                raise
        await asyncio.sleep(PAUSE)
    raise AssertionError("the league never answered")


def client(url: str) -> LeagueClient:
    return LeagueClient(url, timeout=60.0)
