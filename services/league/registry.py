"""Every service a league runs, by name: ``league serve`` mounts them, ``league openapi``
documents them, ``league verify`` and ``league rebuild`` fold their logs through their
projections."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledger.manifest import LeagueManifest
from services.http.apps import Service
from services.kernel.projections import Projection
from services.mint.app import SERVICE as MINT
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.app import SERVICE as NOTARY
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.tables.app import SERVICE as TABLES
from services.tables.projection import PROJECTION as TABLES_PROJECTION
from services.treasury.app import SERVICE as TREASURY
from services.treasury.projection import PROJECTION as TREASURY_PROJECTION

SERVICES: dict[str, Service] = {
    service.name: service for service in (MINT, TREASURY, NOTARY, TABLES)
}

#: Each service's projection, by service name (its log lives in the schema of that name).
PROJECTIONS: dict[str, Projection[Any]] = {
    "mint": MINT_PROJECTION,
    "treasury": TREASURY_PROJECTION,
    "notary": NOTARY_PROJECTION,
    "tables": TABLES_PROJECTION,
}


def keyed(manifest: LeagueManifest, names: Iterable[str] | None = None) -> list[str]:
    """Those of ``names`` (default: every service) whose key ``manifest`` names: a league
    founded before the tables service runs without it until ``league tables enroll``."""
    return [name for name in names or SERVICES if getattr(manifest, name, None) is not None]
