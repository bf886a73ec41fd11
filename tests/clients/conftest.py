"""``cz`` as a player runs it, each player a data directory, against a real all-in-one league
on the test PostgreSQL.

By default ``cz`` runs in this process (:func:`tests.harness.cz.run_cz`: its own environment,
working directory, stdin and captured output) and the league is served in this process too
(:class:`tests.harness.league.InProcessLeague`, what `league serve` serves, on a background
event loop). Real processes stay where the process is the point: ``Player.process`` runs the
console script (the README's commands), ``on_terminal`` runs it on a pseudo-terminal (the
prompts, the progress bars, colour, Ctrl-C)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from clients.wallet import Wallet
from game.window.economy.prints import Print
from ledger.savecode import MINIMUM_KDF, seal_save_code
from tests.harness.cz import run_cz
from tests.harness.league import InProcessLeague, clean_env, init_league
from tests.harness.league import served_in_process as serving

#: The console script pyproject declares (``cz = "clients.cz:main"``), beside this Python.
CZ = Path(sys.executable).parent / "cz"
#: A guard against a hung child, not a timing assertion.
GUARD_SECONDS = 120
PASSPHRASE = "correct horse battery staple"


@dataclass
class Player:
    """One device: a wallet home, and ``cz`` run in it."""

    home: Path
    passphrase: str = PASSPHRASE
    extra: dict[str, str] = field(default_factory=dict)
    #: The directory ``cz`` runs in (files named on its command line are relative to it).
    workdir: Path | None = None

    def env(self, passphrase: str | None = None) -> dict[str, str]:
        env = {
            **clean_env(os.environ),
            "CZ_HOME": str(self.home),
            "CZ_KDF": "minimum",
            **self.extra,
        }
        env["CZ_PASSPHRASE"] = self.passphrase if passphrase is None else passphrase
        return env

    def run(
        self, *args: str, passphrase: str | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``cz ARGS`` in this process (what a subprocess would answer)."""
        return run_cz(args, env=self.env(passphrase), cwd=self.workdir, stdin=stdin)

    def process(
        self, *args: str, passphrase: str | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``cz ARGS`` as a real process: the console script."""
        return subprocess.run(
            [str(CZ), *args],
            env=self.env(passphrase),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GUARD_SECONDS,
            check=False,
            cwd=self.workdir,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        result = self.run(*args, stdin=stdin)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str, stdin: str | None = None) -> Any:
        return json.loads(self.ok(*args, "--json", stdin=stdin))

    @property
    def wallet_file(self) -> Path:
        return self.home / "wallet.czsave"

    def strike(self, url: str | None = None) -> str:
        """A new key and wallet (pinned to ``url`` if given); returns the address."""
        address: str = self.json("key", "strike")["address"]
        if url is not None:
            self.ok("league", "set", url)
        return address


def one_line_failure(result: subprocess.CompletedProcess[str]) -> str:
    """A refusal as the CLI promises it: exit status 2, one line on stderr, no traceback."""
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def wallet_with(
    path: Path, prints: Sequence[Print], *, marks: int = 0, passphrase: str = PASSPHRASE
) -> Path:
    """A save code of a fresh wallet holding ``prints`` unstamped (as tables would pay them)."""
    wallet = Wallet.new()
    wallet.give(marks=marks, prints=prints)
    code = seal_save_code(wallet.to_payload(), passphrase, MINIMUM_KDF)
    path.write_text(code, encoding="ascii")
    return path


def on_terminal(
    args: Sequence[str], env: dict[str, str], answers: Sequence[tuple[str, str | None]] = ()
) -> tuple[int, str]:
    """Run ``cz`` on a pseudo-terminal, typing each answer once its prompt has appeared (an
    answer None is Ctrl-C: SIGINT to cz); returns the exit status and everything the terminal
    showed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(CZ), *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    shown = b""
    seen = 0

    def read() -> bytes:
        ready, _, _ = select.select([master], [], [], GUARD_SECONDS)
        if not ready:
            process.kill()
            raise AssertionError(f"cz on a terminal went quiet; it showed {shown!r}")
        try:
            return os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            return b""

    try:
        for prompt, answer in answers:
            while (at := shown.find(prompt.encode(), seen)) < 0:
                chunk = read()
                if not chunk:
                    raise AssertionError(f"no prompt {prompt!r}; the terminal showed {shown!r}")
                shown += chunk
            seen = at + len(prompt)
            if answer is None:
                process.send_signal(signal.SIGINT)
            else:
                os.write(master, answer.encode() + b"\n")
        while chunk := read():
            shown += chunk
        return process.wait(timeout=GUARD_SECONDS), shown.decode("utf-8", "replace")
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()


@pytest.fixture
def league_env(tmp_path: Path, database_url: str) -> dict[str, str]:
    return init_league(tmp_path / "league", database_url)


@pytest.fixture
def served(league_env: dict[str, str]) -> Iterator[InProcessLeague]:
    with serving(league_env) as server:
        yield server


@pytest.fixture
def players(tmp_path: Path) -> dict[str, Player]:
    return {name: Player(tmp_path / f"player-{name}") for name in ("A", "B", "C", "B2", "D")}
