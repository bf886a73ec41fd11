"""The mint of one league: its manifest, its key and its event log (the root object every
piece of the mint's work is given: stamping, orders, the census)."""

from __future__ import annotations

from dataclasses import dataclass

from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from services.eventlog import EventStore


@dataclass(frozen=True, slots=True)
class Mint:
    """The mint of one league: its manifest, its key and its event log."""

    manifest: LeagueManifest
    key: SigningKey
    store: EventStore

    @property
    def manifest_hash(self) -> str:
        return self.manifest.hash_text()
