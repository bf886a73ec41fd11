"""The test database fixture and the league's database resolution."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import asyncpg
import pytest

from services.kernel.database import (
    EmbeddedSupervisor,
    embedded_status,
    start_embedded,
    stop_embedded,
)


async def test_fresh_database_is_real_postgres(database_url: str) -> None:
    """Every database test talks to a real PostgreSQL, in a database of its own."""
    conn = await asyncpg.connect(database_url)
    try:
        version = await conn.fetchval("SHOW server_version_num")
        tables = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        )
    finally:
        await conn.close()
    assert int(version) >= 140000
    assert tables == 0


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
