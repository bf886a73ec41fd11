"""A man in the middle of a plain-HTTP league: a proxy served on its own event loop in a thread
that forwards every request to the league and answers as the league does, except the requests
a test tells it to forge an answer to (without forwarding them, or after forwarding them, so
the league records what the client is told it refused)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import aiohttp
from aiohttp import web

from tests.harness.served import GUARD_SECONDS

#: What the proxy does with one request: pass it on, answer it with the forged problem without
#: passing it on, or pass it on and answer the forged problem instead of the league's answer.
Forgery = Literal["pass", "forge", "forward-then-forge"]


@dataclass
class Forger:
    """The proxy in front of ``upstream``; ``decide(method, path)`` says what to do with each
    request, and ``problem`` is the problem+json it forges (status, body)."""

    upstream: str
    decide: Callable[[str, str], Forgery]
    problem: tuple[int, dict[str, object]]
    #: The requests forged so far, as (method, path).
    forged: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.url: str = self._call(self._start())

    def _call(self, coroutine: object) -> str:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)  # type: ignore[arg-type]
        result: str = future.result(GUARD_SECONDS)
        return result

    async def _start(self) -> str:
        self._session = aiohttp.ClientSession()
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        what = self.decide(request.method, request.path)
        body = await request.read()
        status, forged = self.problem
        forged_answer = web.Response(
            status=status,
            text=json.dumps(forged),
            content_type="application/problem+json",
        )
        if what == "forge":
            self.forged.append((request.method, request.path))
            return forged_answer
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type",)}
        async with self._session.request(
            request.method, self.upstream + request.path_qs, data=body, headers=headers
        ) as answer:
            data = await answer.read()
            if what == "forward-then-forge":
                self.forged.append((request.method, request.path))
                return forged_answer
            return web.Response(
                status=answer.status,
                body=data,
                headers={"Content-Type": answer.headers.get("Content-Type", "application/json")},
            )

    async def _stop(self) -> str:
        await self._session.close()
        await self._runner.cleanup()
        return ""

    def stop(self) -> None:
        try:
            self._call(self._stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(GUARD_SECONDS)
            self._loop.close()
