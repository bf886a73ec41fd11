"""The client stands on the protocol alone (docs/architecture.md §2): importing it loads no database
driver, no server and no service (import-linter checks the same statically)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_client_loads_no_server_code() -> None:
    """A fresh interpreter importing apiclient.league and clients.cz, and building cz's whole
    parser (which imports every command group's module), has neither asyncpg, aiohttp's
    server nor any services module loaded."""
    probe = (
        "import sys, apiclient.league, clients.cz\n"
        "clients.cz.build_parser()\n"
        "loaded = [m for m in sys.modules if m == 'asyncpg' or m.startswith('asyncpg.')\n"
        "          or m == 'aiohttp.web' or m.startswith('services')]\n"
        "print(','.join(sorted(loaded)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""
