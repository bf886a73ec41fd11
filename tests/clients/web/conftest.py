"""``cz web``'s application served in this process on 127.0.0.1 (a wallet home of its own,
empty), and an HTTP client to it that asks for the launch's pages under its secret and sends
the page's Origin, as the browser does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from clients.web.app import make_app
from clients.web.launch import Web
from clients.web.security import Guard


@pytest.fixture
async def launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Web]:
    """One launch's application on 127.0.0.1, its wallet home empty."""
    monkeypatch.setenv("CZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CZ_KDF", "minimum")
    monkeypatch.delenv("CZ_PASSPHRASE", raising=False)
    web = Web()
    server = TestServer(make_app(web), host="127.0.0.1")
    await server.start_server()
    web.guard.port = server.port or 0
    try:
        yield web
    finally:
        await server.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def origin(guard: Guard) -> str:
    """The server's origin (no path: no secret)."""
    return f"http://127.0.0.1:{guard.port}"


def base(guard: Guard) -> str:
    """Where the launch's pages are: the origin and the secret."""
    return origin(guard) + guard.root


def same_origin(guard: Guard) -> dict[str, str]:
    """What the page's own form sends: its Origin, same-origin."""
    return {"Origin": origin(guard), "Sec-Fetch-Site": "same-origin"}
