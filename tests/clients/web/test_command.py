"""``cz web``'s command: its help teaches the booths and the safety, and costs nothing to
show (no aiohttp, no pages, no engine: the server is imported only when it runs); a bad port
is one line and exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.harness.imports import modules_loaded_after

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
