"""The in-process ``cz`` runner (tests/harness/cz.py) answers what the console script answers
(exit status, stdout, stderr) and leaves the test's process as it found it: its environment,
working directory and standard streams. The tests of tests/clients rely on both."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.cz import run_cz

CZ = Path(sys.executable).parent / "cz"
#: A guard against a hung child, not a timing assertion.
GUARD_SECONDS = 60


def as_process(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CZ), *args],
        env=env,
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["--help"], None),
        (["table", "new", "--kind", "market", "--seed", "7"], None),
        (["table", "replay", "-"], "{not json"),
        (["bogus"], None),
        (["key", "show"], None),
        (["key", "strike", "--json"], None),
        (["collection"], None),
    ],
)
def test_the_same_answer_as_the_console_script(
    args: list[str], stdin: str | None, tmp_path: Path
) -> None:
    """A success, a usage error, a refusal and a wallet made in CZ_HOME (whose address is
    new each time, so only its shape is compared): the same exit status, stdout and stderr
    in this process as from ``cz`` run as a process, with the same environment and
    working directory."""
    answers = []
    for run, home in ((run_cz, "home-inside"), (as_process, "home-outside")):
        env = {
            **os.environ,
            "CZ_HOME": str(tmp_path / home),
            "CZ_PASSPHRASE": "p",
            "CZ_KDF": "minimum",
        }
        if run is run_cz:
            done = run_cz(args, env=env, cwd=tmp_path, stdin=stdin)
        else:
            done = as_process(args, env, tmp_path, stdin)
        answers.append(
            (done.returncode, done.stdout.replace(home, "HOME"), done.stderr.replace(home, "HOME"))
        )
    inside, outside = answers
    if args[:2] == ["key", "strike"]:
        assert inside[0] == outside[0] == 0
        assert inside[1].count("CZ-") == outside[1].count("CZ-") > 0
        return
    assert inside == outside


def test_the_process_is_left_as_it_was(tmp_path: Path) -> None:
    """The environment cz ran with, its working directory and the captured streams are this
    process's own again after the call (also after a SystemExit)."""
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr)
    env = {"PATH": os.environ.get("PATH", ""), "CZ_HOME": str(tmp_path / "h"), "ONLY_HERE": "1"}
    assert run_cz(["bogus"], env=env, cwd=tmp_path).returncode == 2  # a SystemExit
    assert run_cz(["table", "replay", "no-such-file"], env=env, cwd=tmp_path).returncode == 2
    assert (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr) == before
    assert "ONLY_HERE" not in os.environ


async def test_inside_a_running_event_loop() -> None:
    """From an async test (a loop running in this thread) cz's own asyncio.run still runs
    (on a worker thread) and answers."""
    asyncio.get_running_loop()
    done = run_cz(["table", "new", "--kind", "base", "--seed", "1"], env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert '"table": "base"' in done.stdout
