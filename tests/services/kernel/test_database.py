"""The test database fixture and the league's database resolution."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path

import asyncpg
import pytest

from migrations import SCHEMAS
from services.eventlog.migrate import head_revision
from services.kernel.database import (
    EmbeddedSupervisor,
    embedded_status,
    scratch_database,
    start_embedded,
    stop_embedded,
)


def _fetch(url: str, sql: str) -> object:
    async def fetch() -> object:
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetchval(sql)
        finally:
            await conn.close()

    return asyncio.run(fetch())


def test_each_test_has_a_real_database_of_its_own_at_the_newest_migration(
    server_url: str, template_database: str, database_url: str, empty_database_url: str
) -> None:
    """Every database test talks to a real PostgreSQL, in a database of its own already at
    the newest migration: a copy of the session's template, so the code under test that
    migrates (`league serve`, `league migrate`) finds nothing to do. What a test writes stays
    in its copy, never in the template; the tests of the migrations get an empty database."""
    assert int(str(_fetch(database_url, "SHOW server_version_num"))) >= 140000
    assert _fetch(database_url, "SELECT version_num FROM alembic_version") == head_revision()
    for schema in SCHEMAS:
        assert _fetch(database_url, f"SELECT size FROM {schema}.log_head") == 0  # noqa: S608
    _fetch(database_url, "CREATE TABLE scribbled (x int)")
    with scratch_database(server_url, "cz_probe", template=template_database) as another:
        assert _fetch(another, "SELECT to_regclass('scribbled')::text") is None
        assert _fetch(another, "SELECT version_num FROM alembic_version") == head_revision()
    assert (
        _fetch(
            empty_database_url,
            "SELECT count(*) FROM information_schema.tables WHERE table_schema <> ALL"
            "('{pg_catalog,information_schema}')",
        )
        == 0
    )


def test_the_supervisor_restarts_a_crashed_server_and_leaves_a_stopped_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An embedded server whose postmaster was SIGKILLed is started again by one look of the
    supervisor (within a bounded number of looks while its dead process is reaped), and the
    log says so; one stopped cleanly (`league db stop`) is left stopped: that was the
    operator's choice."""
    pgdata = tmp_path / "pgdata"
    server = start_embedded(pgdata)
    try:
        supervisor = EmbeddedSupervisor(pgdata)
        supervisor.check()
        assert supervisor.restarts == 0
        postmaster = int((pgdata / "postmaster.pid").read_text(encoding="ascii").split()[0])
        os.kill(postmaster, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="services.kernel.database"):
            for _ in range(120):  # a guard: each look may wait for the dead one to be reaped
                supervisor.check()
                if supervisor.restarts:
                    break
                time.sleep(0.5)
        assert supervisor.restarts == 1
        assert embedded_status(pgdata) == server.url
        assert f"pid {postmaster}" in caplog.text
        assert "restarted after a crash" in caplog.text

        assert stop_embedded(pgdata)
        supervisor.check()
        assert supervisor.restarts == 1
        assert embedded_status(pgdata) is None
    finally:
        stop_embedded(pgdata)
