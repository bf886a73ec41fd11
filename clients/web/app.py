"""The application: the guard's middleware, the booths' and the tables' routes, the static
files, and the server on 127.0.0.1 (never another address)."""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from clients.web.security import Guard, guarded

if TYPE_CHECKING:
    from clients.web.booths import Confirm, Job
    from clients.web.tables import Drill, Sitting

#: The only address ``cz web`` listens on.
HOST = "127.0.0.1"
STATIC = Path(__file__).parent / "static"


@dataclass(slots=True)
class Web:
    """One launch's state, in this process only: the guard, the passphrase once unlocked,
    the confirmations shown and not yet clicked, the signings under way, the table being
    played, the drills shown."""

    guard: Guard = field(default_factory=Guard)
    passphrase: str = ""
    confirms: dict[str, Confirm] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    sitting: Sitting | None = None
    drills: dict[str, Drill] = field(default_factory=dict)
    #: One move at the table at a time (two tabs, or a double click, never interleave).
    at_the_table: asyncio.Lock = field(default_factory=asyncio.Lock)


WEB = web.AppKey("cz_web", Web)


def state(request: web.Request) -> Web:
    return request.app[WEB]


def make_app(launch: Web) -> web.Application:
    """The application of one launch (its guard's port is set once the server listens)."""
    from clients.web import booths, tables

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
