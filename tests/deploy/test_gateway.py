"""The gateway for real (docs/operations.md "Running in containers"): nginx with deploy/nginx.conf
in front of the mint and
the notary, each served alone on its own port as their containers serve them, the treasury's
upstream a port nothing answers on until the treasury is registered. One URL serves the whole
league, and `league audit` passes through it. Skipped where nginx is not installed (Debian:
apt-get install nginx-light)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.api.mint import Stamped
from ledger.api.problems import PROBLEM_JSON
from ledger.keys import SigningKey
from services.http.apps import OPERATOR_ENDPOINTS, PROBLEM_TYPES
from services.kernel.compose import compose
from services.kernel.settings import LeagueSettings
from services.league.registry import SERVICES
from tests.harness.deploy import NGINX, running_gateway
from tests.harness.founding import make_settings
from tests.harness.mint import checkpoint_covering
from tests.harness.ports import free_port

__all__ = ["make_settings"]  # fixtures

pytestmark = pytest.mark.skipif(NGINX is None, reason="no nginx (apt-get install nginx-light)")
SCRIPT = Path(sys.executable).parent / "league"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "services.league.cli"]
#: Guards against a hung child, not timing assertions.
GUARD_SECONDS = 120


@pytest.fixture
async def services(
    make_settings: Callable[..., LeagueSettings],
) -> AsyncIterator[dict[str, TestServer]]:
    """Each registered service served alone on its own port, over one database (each in its
    own schema), the notary following the mint at the mint's address."""
    settings = make_settings()
    ports = {name: free_port() for name in SERVICES}
    served: dict[str, TestServer] = {}
    try:
        for name in ("mint", *[n for n in SERVICES if n != "mint"]):
            own = settings.model_copy(
                update={"port": ports[name], "mint_url": f"http://127.0.0.1:{ports['mint']}"}
            )
            server = TestServer(compose(own, [SERVICES[name]]), host="127.0.0.1", port=own.port)
            await server.start_server()
            served[name] = server
        yield served
    finally:
        for server in served.values():
            await server.close()


@pytest.fixture
def gateway(services: dict[str, TestServer], tmp_path: Path) -> Iterator[str]:
    with running_gateway({n: s.port for n, s in services.items() if s.port}, tmp_path) as url:
        yield url


async def fetch(
    session: aiohttp.ClientSession, url: str, **headers: str
) -> tuple[int, str, str, str | None]:
    async with session.get(url, headers=headers) as response:
        return (
            response.status,
            response.content_type,
            await response.text(),
            response.headers.get("X-Request-Id"),
        )


async def test_one_url_serves_the_whole_league(
    gateway: str, services: dict[str, TestServer]
) -> None:
    owner = SigningKey.generate()
    async with LeagueClient(gateway) as league:
        manifest = await league.manifest()
        answer = await league.stamp(stamp_request(owner, manifest, [("Model-A", "standard")]))
        (item,) = answer.items
        assert isinstance(item, Stamped)
        await checkpoint_covering(league, 1)
        assert (await league.provenance(item.certificate.serial)).serial == (
            item.certificate.serial
        )
        assert (await league.census()).league == manifest.league
    async with aiohttp.ClientSession() as session:
        # A client's request id goes through to the service and back.
        status, _, _, echoed = await fetch(session, gateway + "/ledger", **{"X-Request-Id": "gw-1"})
        assert (status, echoed) == (200, "gw-1")
        # Every problem type any service describes is found through the one URL.
        for name, server in services.items():
            for slug in server.app[PROBLEM_TYPES]:
                status, kind, _, _ = await fetch(session, f"{gateway}/problems/{slug}")
                assert (status, kind) == (200, "application/json"), (name, slug)
        status, kind, _, _ = await fetch(session, gateway + "/problems/no-such-type")
        assert (status, kind) == (404, PROBLEM_JSON)
        # The operator's endpoints are not proxied; what no service serves is nginx's 404.
        for endpoint in OPERATOR_ENDPOINTS:
            status, kind, _, _ = await fetch(session, gateway + endpoint.path)
            assert (status, kind) == (404, PROBLEM_JSON), endpoint.path
        status, kind, body, _ = await fetch(session, gateway + "/no/such/path")
        assert (status, kind) == (404, PROBLEM_JSON)
        assert '"type":"/problems/not-found"' in body


async def test_a_service_down_is_a_problem_and_the_others_still_answer(
    services: dict[str, TestServer], tmp_path: Path
) -> None:
    """The treasury (asked second for a problem type) answers nothing: its paths are a 503
    problem, not nginx's HTML page, and the notary's problem types are still found."""
    up = {n: s.port for n, s in services.items() if n != "treasury" and s.port}
    with running_gateway(up, tmp_path) as gateway:
        async with aiohttp.ClientSession() as session:
            for path in ("/treasury", "/treasury/events"):
                status, kind, body, _ = await fetch(session, gateway + path)
                assert (status, kind) == (503, PROBLEM_JSON)
                assert '"type":"/problems/retry-later"' in body
            for slug in services["notary"].app[PROBLEM_TYPES]:
                status, _, _, _ = await fetch(session, f"{gateway}/problems/{slug}")
                assert status == 200, slug
            assert (await fetch(session, gateway + "/ledger"))[0] == 200


async def test_league_audit_passes_through_the_gateway(gateway: str, tmp_path: Path) -> None:
    async with LeagueClient(gateway) as league:
        manifest = await league.manifest()
        await league.stamp(stamp_request(SigningKey.generate(), manifest, [("Model-A", "gilt")]))
        await checkpoint_covering(league, 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEAGUE_", "DATABASE_"))}
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        "audit",
        gateway,
        "--state",
        str(tmp_path / "audit"),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), GUARD_SECONDS)
    assert process.returncode == 0, err.decode()
    assert "passed" in out.decode()
