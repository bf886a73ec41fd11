"""``league`` run as a subprocess: one command's result, a ``league serve`` child and its URL,
a league initialised in a fresh LEAGUE_HOME, a faucet claim over HTTP, and an environment
where the server's dependencies cannot be imported (an auditor's install)."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp

from apiclient.league import LeagueClient
from ledger.api.treasury import ClaimAnswer, claim_request
from ledger.certificates import NoteCertificate
from ledger.keys import SigningKey
from services.kernel.settings import LeagueSettings

SCRIPT = Path(sys.executable).parent / "league"


COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "services.league.cli"]


#: A guard against a hung child, not a timing assertion.
GUARD_SECONDS = 120


def league(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )


def without_server(env: dict[str, str], modules: Path) -> dict[str, str]:
    """``env`` as an install without the ``server`` extra sees it: each of the extra's modules
    (``services.league.cli.SERVER_MODULES``) shadowed in ``modules`` by one that cannot be
    imported, ahead of site-packages on the path."""
    from services.league.cli import SERVER_MODULES

    modules.mkdir(parents=True, exist_ok=True)
    for name in SERVER_MODULES:
        (modules / f"{name}.py").write_text(
            f"raise ModuleNotFoundError('not installed: {name}', name={name!r})\n",
            encoding="utf-8",
        )
    path = os.pathsep.join(p for p in (str(modules), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path}


def one_line_failure(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


class Served:
    """A `league serve` child: its URL once it says where it listens."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.process = subprocess.Popen(
            [*COMMAND, "serve", "--port", "0", *args],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None
        stdout = self.process.stdout

        def read() -> None:
            for line in stdout:
                lines.put(line)
            lines.put("")  # end of output: the child exited

        threading.Thread(target=read, daemon=True).start()
        try:
            first = lines.get(timeout=GUARD_SECONDS)
        except queue.Empty:
            self.process.kill()
            raise AssertionError("league serve never said where it listens") from None
        if not first:
            assert self.process.stderr is not None
            raise AssertionError(f"league serve exited: {self.process.stderr.read()}")
        assert first.startswith("serving on "), first
        self.url = first.removeprefix("serving on ").strip()

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=GUARD_SECONDS)
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


async def serve_child(
    settings: LeagueSettings, service: str, **env: str
) -> tuple[asyncio.subprocess.Process, str]:
    """``league serve SERVICE`` in a child process over the league's home and database, with
    ``env`` besides (e.g. MINT_URL) and no other LEAGUE_ variable of this process: the child,
    and the URL it says it serves on."""
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("LEAGUE_")}
    child_env.update(LEAGUE_HOME=str(settings.data_dir), DATABASE_URL=settings.database, **env)
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        "serve",
        service,
        "--port",
        "0",
        env=child_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), GUARD_SECONDS)).decode()
    assert line.startswith("serving on "), line
    return process, line.removeprefix("serving on ").strip()


async def claim_notes(
    url: str, owner: SigningKey, marks: int, request_id: str
) -> list[NoteCertificate]:
    """A faucet claim over HTTP (Book V.5); the notes it issued."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
    request = claim_request(owner, manifest, marks, request_id=request_id, at=int(time.time()))
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}/treasury/claim", json=request.to_wire()) as response,
    ):
        assert response.status == 200, await response.text()
        answer = ClaimAnswer.model_validate_json(await response.text())
        return list(answer.notes)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("LEAGUE_", "CZ_"))}


def init_league(home: Path, database_url: str, *policies: str) -> dict[str, str]:
    """A league in a fresh LEAGUE_HOME: no proof of work to speak of, frequent checkpoints,
    and ``policies`` (NAME=VALUE) besides."""
    env = {**clean_env(), "LEAGUE_HOME": str(home), "DATABASE_URL": database_url}
    options = [
        arg
        for p in ("stamp_work=1", "checkpoint_interval_ms=50", *policies)
        for arg in ("--policy", p)
    ]
    made = league(env, "init", *options)
    assert made.returncode == 0, made.stderr
    return env
