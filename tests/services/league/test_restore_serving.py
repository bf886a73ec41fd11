"""``league db restore`` refuses while the league is serving: a running ``league serve`` of
the league's home holds its serving lock, so the restore says so in one line (exit 2) and
touches nothing; once the server is stopped the same restore runs. A serve never starts in
the middle of a restore either (the same lock, held exclusive by the restore)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.harness.served import Served, league, one_line_failure


def test_restore_is_refused_while_serving(tmp_path: Path, database_url: str) -> None:
    """Served: a dump is taken, its restore refused in one line naming the league's home and
    what to do; stopped: the same restore succeeds."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_")}
    home = tmp_path / "home"
    env = {**clean, "LEAGUE_HOME": str(home), "DATABASE_URL": database_url}
    dump = tmp_path / "league.dump"
    server = Served(env)
    try:
        assert league(env, "db", "dump", str(dump)).returncode == 0
        line = one_line_failure(league(env, "db", "restore", str(dump)))
        assert f"the league in {home} is serving" in line
        assert "stop it, then restore" in line
    finally:
        code, stderr = server.stop()
    assert code == 0, stderr
    restored = league(env, "db", "restore", str(dump))
    assert restored.returncode == 0, restored.stderr
