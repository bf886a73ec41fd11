"""``league`` imports what the command it runs uses: ``league --help`` loads neither alembic,
sqlalchemy, asyncpg nor aiohttp, nor any service; the names its help lists without the
registry are the registry's."""

from __future__ import annotations

from collections.abc import Sequence

from ledger.manifest import LEAGUE_SERVICES
from services.kernel import founding
from services.league import cli
from services.league.registry import PROJECTIONS, SERVICES
from tests.harness.imports import modules_loaded_after

HEAVY = ("aiohttp", "alembic", "sqlalchemy", "asyncpg", "game", "clients")
SERVICE_CODE = (
    "services.mint",
    "services.treasury",
    "services.notary",
    "services.http",
    "services.eventlog",
    "services.league.registry",
    "auditor",
    "services.kernel.compose",
    "services.kernel.database",
)


def loaded_after(argv: Sequence[str]) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after ``services.league.cli.main``."""
    return modules_loaded_after("services.league.cli", argv, HEAVY, SERVICE_CODE)


def test_help_loads_no_database_driver_nor_service() -> None:
    """``league --help`` and ``league serve --help`` import no database library (alembic,
    sqlalchemy, asyncpg), no HTTP library and no service."""
    for argv in (["--help"], ["serve", "--help"], ["audit", "--help"]):
        assert loaded_after(argv) == [], argv


def test_the_listed_services_are_the_registry() -> None:
    """The names the parser lists (``ledger.manifest.LEAGUE_SERVICES``, for serve, rebuild and
    openapi) are the services the registry serves and the projections it rebuilds."""
    assert tuple(SERVICES) == LEAGUE_SERVICES
    assert tuple(PROJECTIONS) == LEAGUE_SERVICES


def test_the_default_name_is_founding_s() -> None:
    """``league init --name``'s default (written in the CLI so its help loads no database
    driver) is the name founding gives a league made without one (``league serve``)."""
    assert cli.DEFAULT_NAME == founding.DEFAULT_NAME
