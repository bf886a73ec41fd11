"""Behind the gateway (docs/operations.md "Running in containers"): a request from a trusted proxy
counts as from the client
its X-Forwarded-For names, so the mint's per-source limit counts clients, not the gateway.
Over real HTTP, with the mint's real limit of one print a minute per source network."""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import ip_network

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.keys import SigningKey
from services.kernel.settings import LeagueSettings
from services.mint.app import create_app
from tests.harness.founding import TEST_POLICIES, make_settings

__all__ = ["make_settings"]  # fixtures

ONE_A_MINUTE = TEST_POLICIES.model_copy(
    update={"source_prints_per_minute": 1, "source_prints_burst": 1}
)


async def stamp_from(league: LeagueClient, forwarded_for: str | None) -> int:
    """The status of one print's stamp request, sent with ``X-Forwarded-For``."""
    manifest = await league.manifest()
    request = stamp_request(SigningKey.generate(), manifest, [("Model-A", "standard")])
    session = league._session
    assert session is not None
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    async with session.post(
        league.base_url + "/mint/stamp", json=request.to_wire(), headers=headers
    ) as response:
        return response.status


async def serve(settings: LeagueSettings) -> tuple[TestServer, LeagueClient]:
    server = TestServer(create_app(settings), host="127.0.0.1")
    await server.start_server()
    return server, LeagueClient(str(server.make_url("")))


@pytest.mark.parametrize("trusted", [True, False])
async def test_the_limit_counts_the_forwarded_client_only_behind_a_trusted_proxy(
    make_settings: Callable[..., LeagueSettings], trusted: bool
) -> None:
    settings = make_settings(policies=ONE_A_MINUTE)
    if trusted:
        settings = settings.model_copy(update={"trusted_proxies": (ip_network("127.0.0.0/8"),)})
    server, client = await serve(settings)
    try:
        async with client as league:
            assert await stamp_from(league, "203.0.113.7") == 200
            assert await stamp_from(league, "203.0.113.99") == 429  # the same /24
            # Another client behind the same gateway: its own source only if trusted.
            assert await stamp_from(league, "198.51.100.9") == (200 if trusted else 429)
            # What is not an address is not believed: the peer (loopback) counts.
            assert await stamp_from(league, "unknown, not-an-ip") == (200 if trusted else 429)
            assert await stamp_from(league, None) == 429
    finally:
        await server.close()
