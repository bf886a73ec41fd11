"""``league serve`` supervises the embedded PostgreSQL it started: killed, it is started
again without the operator, and the log says so (a real ``league serve`` process over an
embedded server in a temporary LEAGUE_HOME; every wait is a bounded guard)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.harness.served import COMMAND, GUARD_SECONDS, league

#: The longest the test waits for the server to come back (a guard, not a measurement).
RECOVERY_GUARD = 90.0


def status_of(url: str) -> int | None:
    """The status of one GET (None when nothing answers)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 (loopback)
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code
    except (urllib.error.URLError, OSError):
        return None


def wait_for(what: str, ready: object, guard: float = RECOVERY_GUARD) -> None:
    """Poll ``ready()`` every 0.2 s until it is true, at most ``guard`` seconds."""
    assert callable(ready)
    deadline = time.monotonic() + guard
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.2)


def test_serve_restarts_its_embedded_postgresql_after_a_crash(tmp_path: Path) -> None:
    """With no DATABASE_URL, `league serve` starts the embedded PostgreSQL; its postmaster
    is then SIGKILLed. The server notices, starts it again and logs that it did (JSON lines
    on stderr), and answers again (/health, the census) without anyone running `league db
    start`. Before, it answered 503 until the operator did."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_") and k != "DATABASE_URL"
    }
    env["LEAGUE_HOME"] = str(tmp_path / "home")
    log_path = tmp_path / "serve.log"
    with log_path.open("w", encoding="utf-8") as log_file:
        process = subprocess.Popen(
            [*COMMAND, "serve", "--port", "0"],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=log_file,
        )
        try:
            lines: queue.Queue[str] = queue.Queue()
            assert process.stdout is not None
            stdout = process.stdout
            threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
            first = lines.get(timeout=GUARD_SECONDS)
            assert first.startswith("serving on "), log_path.read_text(encoding="utf-8")
            url = first.removeprefix("serving on ").strip()
            wait_for("the server's first health", lambda: status_of(f"{url}/health") == 200)

            pidfile = Path(env["LEAGUE_HOME"]) / "pgdata" / "postmaster.pid"
            postmaster = int(pidfile.read_text(encoding="ascii").split()[0])
            os.kill(postmaster, signal.SIGKILL)

            def restarted() -> bool:
                text = log_path.read_text(encoding="utf-8")
                return "restarted after a crash" in text

            wait_for("the restart in the log", restarted)
            wait_for("health after the restart", lambda: status_of(f"{url}/health") == 200)
            wait_for("the census after the restart", lambda: status_of(f"{url}/ledger") == 200)
            assert int(pidfile.read_text(encoding="ascii").split()[0]) != postmaster
            said = [
                json.loads(line)
                for line in log_path.read_text(encoding="utf-8").splitlines()
                if line.startswith("{")
            ]
            (restart,) = [e for e in said if "restarted after a crash" in e["message"]]
            assert restart["logger"] == "services.kernel.database"
            assert any(f"pid {postmaster}" in e["message"] for e in said)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=GUARD_SECONDS)
            league(env, "db", "stop")
