"""Topbar → Set the league to another league than the one pinned: refused as the terminal's
``cz league set`` refuses it (a league's root key never changes: another root is another
league or an impostor), the pin unchanged, and the page says so before anything is sent or
signed; over real HTTP, two leagues served on the test PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from clients.cz_public import current
from clients.wallet import WalletHome
from clients.web.launch import Web
from services.kernel.database import scratch_database
from tests.clients.web.conftest import base, same_origin
from tests.harness.league import InProcessLeague, init_league, served_in_process

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def other_league(
    tmp_path: Path, server_url: str, template_database: str
) -> Iterator[InProcessLeague]:
    """A second league, its own keys and database."""
    with scratch_database(server_url, "cz_test", template=template_database) as url:
        env = init_league(tmp_path / "other-league", url)
        with served_in_process(env) as league:
            yield league


async def test_another_league_is_refused_and_the_pin_kept(
    launch: Web, http: aiohttp.ClientSession, served: InProcessLeague, other_league: InProcessLeague
) -> None:
    url, headers = base(launch.guard), same_origin(launch.guard)

    async def post(path: str, form: dict[str, str]) -> tuple[int, str]:
        async with http.post(url + path, data=form, headers=headers) as response:
            return response.status, await response.text()

    form = {"passphrase": PASSPHRASE, "again": PASSPHRASE}
    assert (await post("/exchange/strike", form))[0] == 200
    assert (await post("/topbar/league", {"url": served.url}))[0] == 200
    pinned = current(WalletHome.default())
    assert pinned is not None
    status, page = await post("/topbar/league", {"url": other_league.url})
    assert status == 409
    assert "REFUSED: the league at" in page
    assert "but this wallet pinned" in page
    after = current(WalletHome.default())
    assert after is not None
    assert after["collection"]["league"] == pinned["collection"]["league"]
