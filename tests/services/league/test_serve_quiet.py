"""The first ``league serve`` is quiet about its own services: none of them logs a WARNING for
another of the league's own services not yet listening while the league starts (the
witnesses, the followers and the treasury dial the league's own server)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.harness.served import Served


def test_a_first_start_logs_no_warning(tmp_path: Path, database_url: str) -> None:
    """``league serve`` over a fresh LEAGUE_HOME (it initialises the league) and stopped: its
    stderr (JSON lines, ``"level": "warning"``) has no warning."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_")}
    env = {**clean, "LEAGUE_HOME": str(tmp_path / "home"), "DATABASE_URL": database_url}
    server = Served(env)
    code, stderr = server.stop()
    assert code == 0, stderr
    warnings = [line for line in stderr.splitlines() if "warning" in line.lower()]
    assert warnings == [], stderr
