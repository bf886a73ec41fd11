"""Every service a league runs, by name: ``league serve`` mounts them, ``league openapi``
documents them. The treasury and notary join here the way the mint does."""

from __future__ import annotations

from services.http.apps import Service
from services.mint.app import SERVICE as MINT

SERVICES: dict[str, Service] = {service.name: service for service in (MINT,)}
