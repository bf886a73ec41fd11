"""``league db`` and ``league migrate``: the embedded PostgreSQL, backups and their checked
restore, the schema brought up to date, and the lock that keeps a restore and a serve apart."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from services.kernel.errors import LeagueError
from services.league.context import kept_checkpoint, settings_of, store_of

if TYPE_CHECKING:
    from ledger.keys import SigningKey
    from ledger.manifest import LeagueManifest
    from services.kernel.settings import LeagueSettings


def cmd_db_path(args: argparse.Namespace) -> None:
    print(settings_of(args).pgdata)


def cmd_db_start(args: argparse.Namespace) -> None:
    from services.kernel import database

    server = database.start_embedded(settings_of(args).pgdata)
    print(f"running: {server.url}")


def cmd_db_stop(args: argparse.Namespace) -> None:
    from services.kernel import database

    stopped = database.stop_embedded(settings_of(args).pgdata)
    print("stopped" if stopped else "was not running")


#: ``league db status``'s exit status when the embedded server is stopped (as an init
#: script's "status" says "not running").
NOT_RUNNING = 3


def cmd_db_status(args: argparse.Namespace) -> int:
    from services.kernel import database

    settings = settings_of(args)
    url = database.embedded_status(settings.pgdata)
    print(f"running: {url}" if url else f"stopped ({settings.pgdata})")
    if settings.database_url:
        print("note: DATABASE_URL is set, so the league uses that database, not this one")
    return 0 if url else NOT_RUNNING


def split_password(database_url: str) -> tuple[str, str | None]:
    """``database_url`` without its password, and the password.

    A child process gets the password in its environment (PGPASSWORD), never on its command
    line, where any local user could read it with ps.
    """
    url = urllib.parse.urlsplit(database_url)
    if url.password is None:
        return database_url, None
    userinfo, host = url.netloc.rsplit("@", 1)
    user = userinfo.split(":", 1)[0]
    netloc = f"{user}@{host}" if user else host
    # Rebuilt by hand: urlunsplit drops the "//" of an empty host (a Unix-socket URL).
    query = f"?{url.query}" if url.query else ""
    stripped = f"{url.scheme}://{netloc}{url.path}{query}"
    return stripped, urllib.parse.unquote(url.password)


def cmd_db_dump(args: argparse.Namespace) -> None:
    if args.file.exists() and not args.force:
        raise LeagueError(f"{args.file} exists: choose a new file name, or pass --force")
    settings = settings_of(args).with_database()
    _pg_tool("pg_dump", ["--format=custom", "--file", str(args.file)], settings.database)
    print(
        f"dumped the database to {args.file} (restore with `league db restore`; see "
        f"docs/operations.md)"
    )


def _pg_tool(tool: str, arguments: list[str], database_url: str) -> None:
    """Run the embedded server's own ``tool`` (its version reads its own dumps) on
    ``database_url``, the password in the child's environment; one line on failure."""
    from services.kernel import database

    dbname, password = split_password(database_url)
    env = dict(os.environ)
    if password is not None:
        env["PGPASSWORD"] = password
    command = [str(database.embedded_tool(tool)), *arguments, "--dbname", dbname]
    # A fixed program with an argument list (no shell): nothing here is parsed by a shell.
    done = subprocess.run(  # noqa: S603
        command, capture_output=True, text=True, check=False, env=env
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise LeagueError(f"{tool} failed: {last}")


#: A file in the league's home that every ``league serve`` of it holds locked shared while it
#: serves, and ``league db restore`` exclusive while it restores: neither runs while the
#: other does (a lock of this host's processes: a server on another host, over the same
#: DATABASE_URL, is not seen).
SERVING_LOCK = "serving.lock"


@contextlib.contextmanager
def home_lock(data_dir: Path, *, restoring: bool) -> Iterator[None]:
    """Hold the league home's serving lock (exclusive to restore, shared to serve) for the
    block, or refuse in one line naming who holds it."""
    import fcntl

    try:
        fd = os.open(data_dir / SERVING_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a read-only home (a container's): nothing to hold, nothing refused
        yield
        return
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if restoring else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            if restoring:
                raise LeagueError(
                    f"the league in {data_dir} is serving (a `league serve` of it runs): "
                    "stop it, then restore; nothing was restored"
                ) from None
            raise LeagueError(
                f"`league db restore` is restoring the league in {data_dir}: serve once it is done"
            ) from None
        yield
    finally:
        os.close(fd)  # the lock goes with it


def cmd_db_restore(args: argparse.Namespace) -> None:
    if not args.file.is_file():
        raise LeagueError(f"{args.file}: no such dump file")
    settings = settings_of(args)
    with home_lock(settings.data_dir, restoring=True):
        _restore(settings.with_database(), args.file)


def _restore(settings: LeagueSettings, file: Path) -> None:
    from services.kernel import database
    from services.kernel.founding import load_manifest, load_service_key, read_passphrase
    from services.league.registry import PROJECTIONS

    manifest = load_manifest(settings)
    passphrase = read_passphrase(settings)
    keys = {name: load_service_key(settings, manifest, name, passphrase) for name in PROJECTIONS}
    # Restored first into a scratch database and checked there: the league's own database is
    # touched only once the dump is known to extend every checkpoint the services published.
    with database.scratch_database(settings.database, "cz_restore") as scratch:
        _pg_tool("pg_restore", ["--no-owner", str(file)], scratch)
        migrate(scratch)
        asyncio.run(_check_kept(settings, manifest, keys, scratch))
    _pg_tool("pg_restore", ["--clean", "--if-exists", "--no-owner", str(file)], settings.database)
    print(f"restored {file}: every service's log extends its last published checkpoint")


async def _check_kept(
    settings: LeagueSettings, manifest: LeagueManifest, keys: dict[str, SigningKey], url: str
) -> None:
    """Every service's log in the database at ``url`` extends the checkpoint it keeps
    outside the database (raises ForkedDatabase naming both otherwise)."""
    import asyncpg

    async with asyncpg.create_pool(url, min_size=1, max_size=2) as pool:
        for name, key in keys.items():
            await kept_checkpoint(settings, name, key, manifest).check(
                store_of(pool, manifest, name, key)
            )


def migrate(database_url: str) -> None:
    """Apply the migrations; a database that cannot be reached or used is one sentence."""
    import sqlalchemy.exc

    from services.eventlog.migrate import upgrade

    try:
        upgrade(database_url)
    except ValueError as exc:
        raise LeagueError(f"DATABASE_URL: {exc}") from None
    except sqlalchemy.exc.SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise LeagueError(f"cannot migrate the database: {cause}") from None


def cmd_migrate(args: argparse.Namespace) -> None:
    settings = settings_of(args).with_database()
    migrate(settings.database)
    print("database schema is up to date")
