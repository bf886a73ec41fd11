"""The application: the guard's middleware, the booths' and the tables' routes, the static
files, and the server on 127.0.0.1 (never another address)."""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from clients.web import booths, tables
from clients.web.launch import WEB, Web
from clients.web.security import guarded

#: The only address ``cz web`` listens on.
HOST = "127.0.0.1"
STATIC = Path(__file__).parent / "static"


def make_app(launch: Web) -> web.Application:
    """The application of one launch (its guard's port is set once the server listens)."""
    app = web.Application(middlewares=[guarded(launch.guard)], client_max_size=1 << 20)
    app[WEB] = launch
    app.router.add_routes(booths.routes)
    app.router.add_routes(tables.routes)
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    return app


async def serve(port: int, ready: Callable[[str], None], stop: asyncio.Event | None = None) -> None:
    """Serve on 127.0.0.1:``port`` (0: a free one) until ``stop`` is set (or forever);
    ``ready`` is handed the launch URL once the server listens."""
    launch = Web()
    runner = web.AppRunner(make_app(launch), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    try:
        await site.start()
        launch.guard.port = runner.addresses[0][1]
        ready(launch.guard.url())
        await (stop or asyncio.Event()).wait()
    finally:
        await runner.cleanup()


def open_browser(url: str) -> bool:
    """Open ``url`` in the player's browser; whether one was found."""
    with contextlib.suppress(webbrowser.Error):
        return webbrowser.open(url)
    return False
