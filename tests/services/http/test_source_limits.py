"""One client holding many idle connections: it is held to its source's share, other clients
are still served, and the server's own calls between its services never wait behind it
(they go to a loopback listener reserved for them, as ``league serve`` sets up).

Over real sockets on 127.0.0.0/8 (127.0.0.2 and the like are loopback too), a bounded number
of them (under 40), every wait a bounded guard, never a timing assertion.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import aiohttp
import pytest

from apiclient.league import LeagueClient, stamp_request
from ledger.api.problems import PROBLEM_JSON
from ledger.errors import RetryLater
from ledger.keys import SigningKey
from services.http.limits import LIMITS, ServerLimits
from services.http.serving import (
    GuardedServer,
    LeagueRunner,
    connection_source,
    internal_listener,
    serving,
)
from services.kernel.compose import compose
from services.kernel.feeds import feed_lags
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import NOTARY
from services.notary.app import SERVICE as NOTARY_SERVICE
from tests.harness.founding import make_settings
from tests.harness.sockets import GUARD, read_answer

__all__ = ["make_settings"]

#: 12 outside connections at once, 8 of them from one source; idle ones kept a minute.
SMALL = ServerLimits(head_timeout=60, body_timeout=60, max_connections=12, max_per_source=8)
HOST = "127.0.0.1"


async def hold(port: int, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An idle connection from ``source`` (it sends nothing)."""
    return await asyncio.wait_for(
        asyncio.open_connection(HOST, port, local_addr=(source, 0)), GUARD
    )


async def settle(runner: LeagueRunner, outside: int) -> None:
    """Wait (a bounded number of short sleeps) until the server counts ``outside``
    connections from outside."""
    server = runner.server
    assert isinstance(server, GuardedServer)
    for _ in range(1000):
        if server.outside == outside:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the server counts {server.outside} connections, not {outside}")


@asynccontextmanager
async def client_from(url: str, source: str) -> AsyncIterator[LeagueClient]:
    """A league client whose connections come from ``source``."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        LeagueClient(url, session=session) as client,
    ):
        yield client


async def refused(port: int, source: str) -> tuple[int, dict[str, Any]]:
    reader, writer = await hold(port, source)
    status, headers, body = await read_answer(reader)
    writer.close()
    assert headers["content-type"] == PROBLEM_JSON
    return status, json.loads(body)


async def test_one_source_holding_idle_connections_starves_no_one(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """The all-in-one league (mint and notary) served with 12 connections at most, 8 per
    source. One client opening 12 idle connections holds 8; the others are answered 429
    `rate-limited` at once. A client from another address still gets a print's provenance,
    whose answer needs the notary's own call to the mint. With every outside slot then
    taken (a second source), an outside client is refused 503, yet the notary still reads
    the mint's feed: its calls go to the internal listener, never to the outside slots."""
    settings = make_settings().model_copy(update={"port": 0})
    internal = internal_listener()
    at = internal.getsockname()
    settings = settings.with_internal(f"http://{at[0]}:{at[1]}", ["mint", "notary"])
    app = compose(settings, [MINT, NOTARY_SERVICE])
    app[LIMITS] = SMALL
    async with AsyncExitStack() as stack:
        stack.callback(internal.close)
        runner = await stack.enter_async_context(serving(app, HOST, 0, internal=internal))
        (public,) = runner.public_addresses
        port = public[1]
        url = f"http://{HOST}:{port}"
        owner = SigningKey.generate()
        async with client_from(url, "127.0.0.2") as player:
            manifest = await player.manifest()
            stamped = await player.stamp(stamp_request(owner, manifest, [("Model-A", "standard")]))
        serial = stamped.items[0].certificate.serial  # type: ignore[union-attr]
        await settle(runner, 0)

        held = [await hold(port, "127.0.0.1") for _ in range(8)]
        await settle(runner, 8)
        for _ in range(4):
            status, problem = await refused(port, "127.0.0.1")
            assert (status, problem["type"]) == (429, "/problems/rate-limited")
        async with client_from(url, "127.0.0.2") as player:
            life = await player.provenance(serial)
        assert life.holder == owner.public.to_text()
        await settle(runner, 8)

        held += [await hold(port, "127.0.0.3") for _ in range(4)]
        await settle(runner, 12)
        status, problem = await refused(port, "127.0.0.4")
        assert (status, problem["type"]) == (503, "/problems/overloaded")
        # The readiness check's reading of the mint's checkpoint: a fresh connection, as a
        # witness looking at a log makes one.
        (lag,) = await feed_lags(app, settings, {"notary": ("mint",)})
        assert lag.lag is not None, "the notary's own call to the mint found no slot"
        try:
            await app[NOTARY].mint.catch_up()
        except RetryLater as exc:  # pragma: no cover - the failure this test exists for
            pytest.fail(f"the notary's own call to the mint failed: {exc.diagnostics()}")
        for _, writer in held:
            writer.close()
        await settle(runner, 0)


def test_what_a_connection_counts_against() -> None:
    """An IPv4 peer counts against its address, an IPv6 peer against its /64 (an IPv4-mapped
    one as IPv4); a trusted reverse proxy, or a peer that is not IP, against no source."""
    proxies = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("2001:db8:1::5/128"))
    assert connection_source(("127.0.0.2", 5000)) == "127.0.0.2"
    assert connection_source(("2001:db8::1", 5000, 0, 0)) == "2001:db8::/64"
    assert connection_source(("::ffff:192.0.2.7", 5000, 0, 0)) == "192.0.2.7"
    assert connection_source(("10.1.2.3", 5000), proxies) is None
    assert connection_source(("2001:db8:1::5", 5000, 0, 0), proxies) is None
    assert connection_source(("2001:db8:1::6", 5000, 0, 0), proxies) == "2001:db8:1::/64"
    assert connection_source("") is None
