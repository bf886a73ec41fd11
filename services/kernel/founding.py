"""Creating a league, and loading the one a data directory holds.

``league init`` strikes the root key and one key per service, writes them 0600, and writes the
league manifest signed by the root key: the service keys, the print-run table, the note set
and the published policies (docs/architecture.md §5), and where the services answer when the
operator names it (``--url``). It never overwrites a league. A service's database is bound to
the league it first served (:func:`bind_league`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import LedgerError
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import (
    DEFAULT_POLICIES,
    SERVICE_NAMES,
    LeagueManifest,
    Policies,
    ServiceUrls,
    build_manifest,
)
from ledger.note_set import DEFAULT_NOTE_SET, NoteSet
from ledger.print_runs import DEFAULT_PRINT_RUNS, PrintRunTable
from ledger.savecode import DEFAULT_KDF, KdfParams
from services.eventlog import EventStore, StoreTransaction
from services.kernel.errors import LeagueError, LeagueExistsError, NoLeagueError
from services.kernel.keyring import ROLES, key_path, read_key, read_private_text, write_key
from services.kernel.settings import LeagueSettings

DEFAULT_NAME = "THE WINDOW league"
MANIFEST_MODE = 0o644


def league_id_of(name: str) -> str:
    """The manifest's league id from a display name: lower case, words joined by hyphens."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    if not slug:
        raise LeagueError(f"the league name {name!r} has no letters or digits to make an id from")
    return slug


def league_exists(settings: LeagueSettings) -> bool:
    """Whether the data directory already holds a league (a manifest or any key)."""
    return settings.manifest_path.exists() or any(
        key_path(settings.keys_dir, role).exists() for role in ROLES
    )


@dataclass(frozen=True, slots=True)
class NewLeague:
    """What ``league init`` made: the manifest and where it is."""

    manifest: LeagueManifest
    manifest_path: Path


def create_league(
    settings: LeagueSettings,
    *,
    name: str = DEFAULT_NAME,
    passphrase: str | None = None,
    kdf: KdfParams = DEFAULT_KDF,
    print_runs: PrintRunTable = DEFAULT_PRINT_RUNS,
    note_set: NoteSet = DEFAULT_NOTE_SET,
    policies: Policies = DEFAULT_POLICIES,
    urls: ServiceUrls | None = None,
) -> NewLeague:
    """Strike the league's keys and sign its manifest into ``settings.data_dir`` (naming
    where the services answer when ``urls`` is given)."""
    if league_exists(settings):
        raise LeagueExistsError(
            f"a league already exists in {settings.data_dir}; it is never overwritten "
            f"(set LEAGUE_HOME to create another elsewhere)"
        )
    keys = {role: SigningKey.generate() for role in ROLES}
    try:
        manifest = build_manifest(
            keys["root"],
            league=league_id_of(name),
            name=name,
            mint=keys["mint"].public,
            treasury=keys["treasury"].public,
            notary=keys["notary"].public,
            tables=keys["tables"].public,
            print_runs=print_runs,
            note_set=note_set,
            policies=policies,
            urls=urls,
        )
    except LedgerError as exc:
        raise LeagueError(f"cannot make the manifest: {exc.diagnostics()}") from None
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    for role, key in keys.items():
        write_key(settings.keys_dir, role, key, passphrase, kdf)
    _write_manifest(settings.manifest_path, manifest)
    return NewLeague(manifest, settings.manifest_path)


def parse_service_urls(given: Sequence[str]) -> ServiceUrls | None:
    """The service URLs ``league init --url`` names: each ``SERVICE=URL`` (one of mint,
    treasury, notary), or a bare ``URL`` for every service not named otherwise (a gateway
    serving the whole league). None when nothing is given; every service must end up named."""
    if not given:
        return None
    base: str | None = None
    named: dict[str, str] = {}
    for entry in given:
        name, sep, url = entry.partition("=")
        if sep and name in SERVICE_NAMES:
            if name in named:
                raise LeagueError(f"--url names the {name}'s URL twice")
            named[name] = url
        elif base is None:
            base = entry
        else:
            raise LeagueError("--url gives more than one URL for the whole league")
    urls = {name: named.get(name, base) for name in SERVICE_NAMES}
    missing = [name for name, url in urls.items() if url is None]
    if missing:
        raise LeagueError(
            f"--url names no URL for the {', '.join(missing)}: give SERVICE=URL for each "
            f"service, or one URL serving them all"
        )
    try:
        return ServiceUrls.from_wire(urls)
    except LedgerError as exc:
        raise LeagueError(f"--url: {exc.diagnostics()}") from None


def _write_manifest(path: Path, manifest: LeagueManifest) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MANIFEST_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(manifest.to_wire(), indent=2, ensure_ascii=False) + "\n")


def load_manifest(settings: LeagueSettings) -> LeagueManifest:
    """The data directory's manifest, its root signature checked."""
    path = settings.manifest_path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NoLeagueError(
            f"no league in {settings.data_dir}: run `league init` (or `league serve`, which "
            f"creates one)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LeagueError(f"cannot read {path}: {exc}") from None
    try:
        manifest = LeagueManifest.from_wire(text)
        manifest.verify_root()
    except LedgerError as exc:
        raise LeagueError(f"{path} is not a valid league manifest: {exc.diagnostics()}") from None
    return manifest


async def bind_league(
    store: EventStore,
    manifest: LeagueManifest,
    first: Callable[[StoreTransaction], Awaitable[None]],
) -> None:
    """On a service's first start, record in its schema's ``league`` table the league it
    serves, and (``first``, in the same transaction) what the manifest fixes for it;
    afterwards, refuse any other league."""
    s = store.schema
    async with store.transaction() as tx:
        # Under the log's lock: workers starting together bind it once (the first), and
        # the others find it bound (FOR UPDATE locks no row that is not there yet).
        await tx.lock()
        row = await tx.fetchrow(f"SELECT league, manifest FROM {s}.league FOR UPDATE")  # noqa: S608
        if row is None:
            await tx.execute(
                f"INSERT INTO {s}.league (league, manifest) VALUES ($1, $2)",  # noqa: S608
                manifest.league,
                manifest.hash_text(),
            )
            await first(tx)
            return
        if (row["league"], row["manifest"]) != (manifest.league, manifest.hash_text()):
            raise LeagueError(
                f"this database holds the {s} of league {row['league']} (manifest "
                f"{row['manifest']}), not {manifest.league} ({manifest.hash_text()})"
            )


def load_service_key(
    settings: LeagueSettings, manifest: LeagueManifest, role: str, passphrase: str | None
) -> SigningKey:
    """``role``'s signing key, checked against the key the manifest names for it."""
    text = getattr(manifest, role)
    if text is None:
        raise LeagueError(
            f"the league manifest names no {role} key: a league founded before the {role} "
            f"service adds it with `league {role} enroll` (docs/operations.md)"
        )
    key = read_key(settings.keys_dir, role, passphrase)
    named = PublicKey.from_text(text)
    if key.public != named:
        raise LeagueError(
            f"the {role} key in {settings.keys_dir} is not the {role} key the manifest names"
        )
    return key


def read_passphrase(settings: LeagueSettings) -> str | None:
    """The passphrase from ``settings.passphrase_file`` (its last newline dropped), if any.

    The file is a secret like a key file: refused unless only its owner may read it (0600).
    """
    if settings.passphrase_file is None:
        return None
    try:
        text = read_private_text(settings.passphrase_file, encoding="utf-8")
    except FileNotFoundError:
        raise LeagueError(f"no passphrase file at {settings.passphrase_file}") from None
    passphrase = text.removesuffix("\n")
    if not passphrase:
        raise LeagueError(f"the passphrase file {settings.passphrase_file} is empty")
    return passphrase
