"""Headless Chromium driven over the DevTools protocol, for the tests of pages people use (the
league's pages, ``cz web``): :func:`chromium` starts one (a fresh profile, its DevTools endpoint
read from its stderr) and hands a :class:`Browser`, one tab; screenshots go to
:func:`artifacts` (``$CZ_ARTIFACTS``, default ``test-artifacts/``). Tests that need it are
marked :data:`needs_chromium` and skip where no chromium is installed."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)"
)


def artifacts(kind: str = "pages") -> Path:
    """Where the screenshots of ``kind`` go: ``$CZ_ARTIFACTS/KIND``, else
    ``test-artifacts/KIND`` (git ignores it)."""
    root = Path(os.environ.get("CZ_ARTIFACTS") or Path(__file__).parents[2] / "test-artifacts")
    directory = root / kind
    directory.mkdir(parents=True, exist_ok=True)
    return directory


class Browser:
    """One headless Chromium tab, driven over the DevTools protocol."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, kind: str = "pages") -> None:
        self.socket = socket
        self.kind = kind
        self.ids = iter(range(1, 1_000_000))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self.ids)
        await self.socket.send_json({"id": ident, "method": method, "params": params})
        for _ in range(10_000):  # events interleave with answers; bounded
            message = await self.socket.receive_json(timeout=30)
            if message.get("id") == ident:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
        raise AssertionError(f"no answer to {method}")

    async def js(self, expression: str) -> Any:
        answer = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return answer["result"].get("value")

    async def settled(self, away_from: str | None = None) -> str:
        """The page's URL once a new document (not ``away_from``) has loaded; bounded."""
        for _ in range(300):
            with contextlib.suppress(AssertionError):
                href, state = await self.js("[location.href, document.readyState]")
                if href != away_from and state == "complete":
                    return str(href)
            await asyncio.sleep(0.05)
        raise AssertionError(f"the page did not load (still at {away_from})")

    async def open(self, url: str) -> str:
        before = await self.js("location.href")
        await self.call("Page.navigate", url=url)
        return await self.settled(before)

    async def screenshot(self, name: str) -> Path:
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path = artifacts(self.kind) / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


@contextlib.asynccontextmanager
async def chromium(kind: str = "pages") -> AsyncIterator[Browser]:
    """A headless Chromium's one tab, 1280×900, its screenshots kept under ``kind``."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory(prefix="cz-chromium-") as profile:
        process = await asyncio.create_subprocess_exec(
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "--window-size=1280,900",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert process.stderr is not None
            endpoint = None
            for _ in range(200):
                line = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
                found = re.search(r"DevTools listening on (ws://\S+)", line)
                if found or not line:
                    endpoint = found and found[1]
                    break
            assert endpoint, "chromium did not start its DevTools endpoint"
            port = re.search(r":(\d+)/", endpoint)
            assert port is not None
            async with aiohttp.ClientSession() as session:
                async with session.get(f"http://127.0.0.1:{port[1]}/json/list") as response:
                    targets = await response.json()
                (tab,) = [t for t in targets if t["type"] == "page"]
                async with session.ws_connect(
                    tab["webSocketDebuggerUrl"], max_msg_size=64 * 1024 * 1024
                ) as socket:
                    browser = Browser(socket, kind)
                    await browser.call("Page.enable")
                    await browser.call(
                        "Emulation.setDeviceMetricsOverride",
                        width=1280,
                        height=900,
                        deviceScaleFactor=1,
                        mobile=False,
                    )
                    yield browser
        finally:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
