"""``league`` imports what the command it runs uses: ``league --help`` loads neither alembic,
sqlalchemy, asyncpg nor aiohttp, nor any service; the names its help lists without the
registry are the registry's."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from ledger.manifest import SERVICE_NAMES
from services.kernel import founding
from services.league import cli
from services.league.registry import PROJECTIONS, SERVICES

HEAVY = ("aiohttp", "alembic", "sqlalchemy", "asyncpg", "game", "clients")
SERVICE_CODE = ("services.mint", "services.treasury", "services.notary", "services.http",
                "services.eventlog", "services.league.registry", "services.league.audit",
                "services.kernel.compose", "services.kernel.database")


def loaded_after(argv: Sequence[str]) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after ``services.league.cli.main``."""
    probe = (
        "import contextlib, io, sys\n"
        "import services.league.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    services.league.cli.main({list(argv)!r})\n"
        f"heavy, code = {HEAVY!r}, {SERVICE_CODE!r}\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "    or m.startswith(code))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.split()


def test_help_loads_no_database_driver_nor_service() -> None:
    """``league --help`` and ``league serve --help`` import no database library (alembic,
    sqlalchemy, asyncpg), no HTTP library and no service."""
    for argv in (["--help"], ["serve", "--help"], ["audit", "--help"]):
        assert loaded_after(argv) == [], argv


def test_the_listed_services_are_the_registry() -> None:
    """The names the parser lists (``ledger.manifest.SERVICE_NAMES``, for serve, rebuild and
    openapi) are the services the registry serves and the projections it rebuilds."""
    assert tuple(SERVICES) == SERVICE_NAMES
    assert tuple(PROJECTIONS) == SERVICE_NAMES


def test_the_default_name_is_founding_s() -> None:
    """``league init --name``'s default (written in the CLI so its help loads no database
    driver) is the name founding gives a league made without one (``league serve``)."""
    assert cli.DEFAULT_NAME == founding.DEFAULT_NAME
