"""The composed league app's answers to bad input and to a lost database, over real HTTP."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp
from aiohttp.test_utils import TestServer

from ledger.api.problems import PROBLEM_JSON
from services.http.apps import POOL
from services.kernel.settings import LeagueSettings
from tests.harness.mint import serve

INT64_MAX = 2**63 - 1


async def test_a_query_integer_beyond_64_bits_is_422(server: TestServer) -> None:
    """`after`, `index`, `size`, `first`, `second` beyond int64 are 422 `invalid-object`,
    never a 503 naming the driver; int64's largest value itself is answered."""
    # Regression: GET /mint/events?after=9223372036854775808 gave 503 naming DataError
    async with aiohttp.ClientSession() as session:
        for path in (
            f"/mint/events?after={INT64_MAX + 1}",
            f"/mint/proof/inclusion?index=0&size={INT64_MAX + 1}",
            f"/mint/proof/consistency?first=0&second={2**64}",
        ):
            async with session.get(server.make_url(path)) as response:
                assert response.status == 422, path
                assert response.content_type == PROBLEM_JSON
                problem = await response.json(content_type=PROBLEM_JSON)
                assert problem["type"] == "/problems/invalid-object"
                assert "DataError" not in problem["detail"]
        async with session.get(server.make_url(f"/mint/events?after={INT64_MAX}")) as response:
            assert response.status == 200
            assert (await response.json())["events"] == []


async def test_a_lost_database_is_503_with_retry_after_and_no_internals(
    server: TestServer,
) -> None:
    """With the database gone, the feed and /health answer 503 `store-unavailable` with
    Retry-After, and the detail says the service is unavailable, naming no exception."""
    # Regression: 503 details named internals (FileNotFoundError: [Errno 2]); killed
    # PostgreSQL gave 500s
    await server.app[POOL].close()
    async with aiohttp.ClientSession() as session:
        for path in ("/mint/events", "/health"):
            async with session.get(server.make_url(path)) as response:
                assert response.status == 503, path
                assert int(response.headers["Retry-After"]) >= 1
                problem = await response.json(content_type=PROBLEM_JSON)
                assert problem["type"] == "/problems/store-unavailable"
                assert "unavailable" in problem["detail"]
                for internal in ("Error", "Errno", "pool", "asyncpg"):
                    assert internal not in problem["detail"], (path, problem["detail"])


async def test_head_on_every_get_route(server: TestServer) -> None:
    """Every GET route of the composed app answers HEAD with GET's status and no body."""
    # Regression: HEAD was refused on /ledger but allowed on /health
    paths = [
        "/",
        "/health",
        "/ledger",
        "/mint/manifest",
        "/mint/events",
        "/mint/checkpoint",
        "/mint/openapi.json",
        "/problems/malformed",
    ]
    async with aiohttp.ClientSession() as session:
        for path in paths:
            async with session.head(server.make_url(path)) as response:
                assert response.status == 200, path
                assert await response.read() == b""


async def test_the_index_names_the_league(make_settings: Callable[..., LeagueSettings]) -> None:
    """`GET /` names the league as its manifest does, not the game."""
    # Regression: GET / said "THE WINDOW league" for a league named "Friday Night League"
    server = await serve(make_settings(name="Friday Night League"))
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(server.make_url("/")) as response,
        ):
            index = await response.json()
    finally:
        await server.close()
    assert index["name"] == "Friday Night League"
