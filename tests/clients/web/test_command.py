"""``cz web``'s command: its help teaches the booths and the safety, and costs nothing to
show (no aiohttp, no pages, no engine: the server is imported only when it runs); a bad port
is one line and exit status 2; the browser is handed a 0600 file, never the secret."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.harness.imports import modules_loaded_after
from tests.harness.league import clean_env

CZ = Path(sys.executable).parent / "cz"


def test_help_teaches_and_loads_no_server() -> None:
    shown = subprocess.run(
        [str(CZ), "web", "--help"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    for words in (
        "Topbar",
        "Exchange",
        "Vault",
        "Provenance",
        "No-Go drill",
        "127.0.0.1",
        "--no-browser",
        "secret",
        "names what is signed",
    ):
        assert words in " ".join(shown.split()), words
    loaded = modules_loaded_after(
        "clients.cz", ["web", "--help"], ("aiohttp", "jinja2", "game"), ("clients.web.",)
    )
    assert loaded == ["clients.web.command"]


def test_a_bad_port_is_one_line() -> None:
    done = subprocess.run(
        [str(CZ), "web", "--port", "70000"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "a port is from 0" in done.stderr


def web_with_browser(tmp_path: Path, script: str) -> subprocess.Popen[str]:
    """``cz web`` started with a wallet home in ``tmp_path`` and, as its BROWSER, a shell
    script of ``script``'s lines."""
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\n{script}")
    browser.chmod(0o700)
    env = {
        **clean_env(os.environ),
        "CZ_HOME": str(tmp_path / "home"),
        "BROWSER": str(browser),
        "DISPLAY": "",
    }
    return subprocess.Popen(
        [str(CZ), "web"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_the_browser_is_handed_a_file_never_the_secret(tmp_path: Path) -> None:
    """``cz web`` opens the browser at a launch file, 0600 in the wallet's home, that leads to
    the pages: the browser's command line (what ``ps`` shows any local user) holds the file's
    name, never the launch's secret; the file goes when the server stops (Ctrl-C)."""
    record = tmp_path / "browser-args"
    process = web_with_browser(tmp_path, f'printf "%s\\n" "$0" "$@" >> {record}\n')
    try:
        assert process.stdout is not None
        shown = process.stdout.readline().strip()
        args = record.read_text().splitlines()
        assert args[1:] == [shown], args
        opened = Path(shown.removeprefix("file://"))
        assert shown.startswith("file://"), shown
        assert opened.is_file()
        assert stat.S_IMODE(opened.stat().st_mode) == 0o600
        assert opened.is_relative_to(tmp_path / "home")
        url = re.search(r'url=(http://127\.0\.0\.1:\d+/([A-Za-z0-9_-]{43})/)"', opened.read_text())
        assert url is not None, opened.read_text()
        secret = url[2]
        assert all(secret not in arg for arg in args)
        with urllib.request.urlopen(url[1]) as answer:  # noqa: S310 (http: the file's target)
            assert answer.status == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert not opened.exists()


def test_a_browser_in_the_foreground_holds_nothing_and_sigterm_cleans_up(
    tmp_path: Path,
) -> None:
    """A browser command that stays in the foreground until it exits (a BROWSER that is not a
    known browser) does not hold the pages: they answer while it runs; SIGTERM stops cz web
    as Ctrl-C does, the launch file removed."""
    record = tmp_path / "browser-args"
    # It stays until it exits, its output its own (not cz web's pipes, which the test reads).
    process = web_with_browser(
        tmp_path, f'printf "%s\\n" "$@" >> {record}\nexec >/dev/null 2>&1\nsleep 20\n'
    )
    try:
        for _ in range(600):  # a guard against a hung child, not a timing assertion
            if record.exists() and record.read_text().strip():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        opened = Path(record.read_text().split()[0].removeprefix("file://"))
        url = re.search(r'url=(http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{43}/)"', opened.read_text())
        assert url is not None
        with urllib.request.urlopen(url[1], timeout=30) as answer:  # noqa: S310
            assert answer.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    assert process.returncode == 0
    assert not opened.exists()
