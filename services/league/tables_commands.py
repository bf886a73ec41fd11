"""``league tables enroll``: the tables service's key added to a league founded before the
service existed (docs/operations.md "The tables service").

A league founded now names the tables key in its manifest from the start. An older league's
manifest names none, and every certificate and request it made names that manifest's id; the
tables key is outside the id (``ledger.manifest.LeagueManifest.hash_text``), so the root key
signs the same manifest again naming a new tables key, and everything made under the old one
stays good. Run it where the root key is (the key ceremony's offline machine), then give the
league's servers the new manifest and the tables server its key.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.kernel.errors import LeagueError
from services.league.context import settings_of

if TYPE_CHECKING:
    from ledger.manifest import LeagueManifest

MANIFEST_MODE = 0o644


def cmd_tables_enroll(args: argparse.Namespace) -> None:
    from ledger.address import address_of
    from ledger.keys import SigningKey
    from ledger.manifest import with_tables
    from services.kernel.founding import load_manifest, read_passphrase
    from services.kernel.keyring import key_path, read_key, write_key

    settings = settings_of(args)
    manifest = load_manifest(settings)
    if manifest.tables is not None:
        raise LeagueError(
            f"the manifest of league {manifest.league} names a tables key already "
            f"({manifest.tables}): nothing to enroll"
        )
    passphrase = read_passphrase(settings)
    root = read_key(settings.keys_dir, "root", passphrase)
    if key_path(settings.keys_dir, "tables").exists():  # a run stopped before the manifest
        tables = read_key(settings.keys_dir, "tables", passphrase)
    else:
        tables = SigningKey.generate()
        write_key(settings.keys_dir, "tables", tables, passphrase)
    enrolled = with_tables(manifest, root, tables.public)
    replace_manifest(settings.manifest_path, enrolled)
    print(
        f"the manifest of league {enrolled.league} names the tables key "
        f"{address_of(tables.public)} ({enrolled.tables}); its id is unchanged: "
        f"{enrolled.hash_text()}"
    )
    print(
        f"  wrote {settings.manifest_path} and {key_path(settings.keys_dir, 'tables')} "
        f"(mode 0600): give every server the new manifest and the tables server its key, "
        f"then start them again"
    )


def replace_manifest(path: Path, manifest: LeagueManifest) -> None:
    """Write ``manifest`` over the one at ``path`` in one step (a reader sees the old or the
    new, never half of either)."""
    text = json.dumps(manifest.to_wire(), indent=2, ensure_ascii=False) + "\n"
    fresh = path.with_name(path.name + ".new")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MANIFEST_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(fresh, path)


def add_parser(
    commands: argparse._SubParsersAction[Any],
    parser_class: type[argparse.ArgumentParser],
) -> None:
    """``league tables ...`` (its subcommands' parsers of ``parser_class``)."""
    tables = commands.add_parser("tables", help="the tables service (witnessed play)")
    tables_commands = tables.add_subparsers(
        dest="tables_command", required=True, metavar="ACTION", parser_class=parser_class
    )
    enroll = tables_commands.add_parser(
        "enroll",
        help="add the tables service's key to a league founded before it (the root key signs "
        "the manifest again; its id, and every certificate, unchanged)",
    )
    enroll.add_argument(
        "--passphrase-file",
        type=Path,
        metavar="FILE",
        help="the passphrase of armored keys, which armors the new key too (or "
        "LEAGUE_PASSPHRASE_FILE); its final newline is ignored",
    )
    enroll.set_defaults(run=cmd_tables_enroll)
