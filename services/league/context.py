"""What every ``league`` command reads: its settings (the environment and its options), a
service's event store over a pool, and the checkpoint a service keeps outside the database."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the command that uses them (``league --help`` loads none)
    import asyncpg

    from ledger.keys import SigningKey
    from ledger.manifest import LeagueManifest
    from services.eventlog import PostgresEventStore
    from services.kernel.checkpoints import CheckpointFile
    from services.kernel.settings import LeagueSettings


def settings_of(args: argparse.Namespace) -> LeagueSettings:
    """The league's settings: the environment, with the command's own options over it."""
    from services.kernel.settings import LeagueSettings

    return LeagueSettings.from_env(
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
        workers=getattr(args, "workers", None),
        passphrase_file=getattr(args, "passphrase_file", None),
    )


def store_of(
    pool: asyncpg.Pool, manifest: LeagueManifest, name: str, key: SigningKey
) -> PostgresEventStore:
    """Service ``name``'s event log in its schema of the database behind ``pool``."""
    from services.eventlog import PostgresEventStore

    return PostgresEventStore(pool, schema=name, origin=f"{manifest.league}/{name}", key=key)


def kept_checkpoint(
    settings: LeagueSettings, name: str, key: SigningKey, manifest: LeagueManifest
) -> CheckpointFile:
    """The checkpoint service ``name`` keeps outside the database (a restore must extend it)."""
    from services.kernel.checkpoints import CheckpointFile

    return CheckpointFile(settings.checkpoint_path(name), f"{manifest.league}/{name}", key.public)
