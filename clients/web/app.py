"""The application: the guard's middleware, the booths' and the tables' routes, the static
files, and the server on 127.0.0.1 (never another address)."""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import signal
import threading
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
    """The application of one launch, its pages under its secret (its guard's port is set
    once the server listens); the static files public."""
    app = web.Application(
        middlewares=[guarded(launch.guard), booths.checked], client_max_size=1 << 20
    )
    app[WEB] = launch
    root = launch.guard.root  # every page under this launch's secret
    for table in (booths.routes, tables.routes):
        for route in table:
            assert isinstance(route, web.RouteDef)
            web.RouteDef(route.method, root + route.path, route.handler, route.kwargs).register(
                app.router
            )
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    return app


async def serve(port: int, ready: Callable[[str], None], stop: asyncio.Event | None = None) -> None:
    """Serve on 127.0.0.1:``port`` (0: a free one) until ``stop`` is set (or forever);
    ``ready`` is handed the launch URL once the server listens."""
    launch = Web()
    stop = stop or asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
        # SIGTERM stops it as Ctrl-C does: the caller's clean-up (the launch file) runs.
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    runner = web.AppRunner(make_app(launch), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    try:
        await site.start()
        launch.guard.port = runner.addresses[0][1]
        # In a thread of its own, left behind at the stop: a browser command that stays in
        # the foreground until it exits must hold neither the pages it opens nor the stop.
        threading.Thread(target=ready, args=(launch.guard.url(),), daemon=True).start()
        await stop.wait()
    finally:
        await runner.cleanup()


#: The launch files' folder, in the wallet's home (mode 0700).
LAUNCH_DIR = "web"


def launch_file(url: str, port: int) -> Path:
    """A page that sends the browser on to ``url`` (this launch's pages, the secret in its
    path), written 0600 in the wallet's home: the browser is handed this file's name, so the
    secret never appears in a process's arguments (``ps``), as a notebook server does."""
    from clients.wallet import WalletHome

    directory = WalletHome.default().directory / LAUNCH_DIR
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f"open-{port}.html"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a launch before this one on the same port, stopped unclean
    target = html.escape(url, quote=True)
    text = (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        '<meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0;url={target}">'
        "<title>cz web</title></head>\n"
        f'<body><p><a href="{target}">Open cz web</a></p></body></html>\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def open_browser(path: Path) -> bool:
    """Open the launch file ``path`` in the player's browser; whether one was found."""
    with contextlib.suppress(webbrowser.Error):
        return webbrowser.open(path.as_uri())
    return False
