"""The composed app: each service's OpenAPI document and an index, over real HTTP."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp

from services.kernel.settings import LeagueSettings
from services.league.cli import OPENAPI_DIR
from tests.harness.mint import serve


async def test_index_and_published_openapi(make_settings: Callable[..., LeagueSettings]) -> None:
    """`/` names every service and its document; `/mint/openapi.json` is the committed one;
    `/health` answers 200 while the database does."""
    server = await serve(make_settings())
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.make_url("/")) as response:
                index = await response.json()
            async with session.get(server.make_url("/mint/openapi.json")) as response:
                published = await response.text()
            async with session.get(server.make_url("/health")) as response:
                health = (response.status, await response.json())
    finally:
        await server.close()
    (mint,) = index["services"]
    assert mint["name"] == "mint"
    assert mint["openapi"] == "/mint/openapi.json"
    assert "/mint/stamp" in mint["paths"]
    assert published == (OPENAPI_DIR / "mint.json").read_text(encoding="utf-8")
    assert health == (200, {"status": "ok"})
