"""The league's private keys on disk: one file per role, mode 0600, in a 0700 directory.

A key file holds either the plain key (JSON: role, public key, seed; protected by file
permissions only) or the key armored under a passphrase (the ledger's ``CZ KEY`` armor). The
public half is always checked against the secret on load, so a swapped or edited file is
refused rather than silently signing with a key nobody expects.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ledger.armor import KEY as ARMOR_LABEL
from ledger.encoding import decode_b64url, encode_b64url
from ledger.errors import LedgerError
from ledger.keys import SEED_SIZE, SigningKey
from ledger.savecode import DEFAULT_KDF, KdfParams, open_private_key, seal_private_key
from services.kernel.errors import LeagueError

#: The roles that hold a key: the root signs the manifest, each service signs its own log.
ROLES = ("root", "mint", "treasury", "notary", "tables")

_ARMOR_BEGIN = f"-----BEGIN {ARMOR_LABEL}-----"

KEY_FILE_MODE = 0o600
KEYS_DIR_MODE = 0o700


def key_path(keys_dir: Path, role: str) -> Path:
    return keys_dir / f"{role}.key"


def _plain_text(role: str, key: SigningKey) -> str:
    return (
        json.dumps(
            {"role": role, "public": key.public.to_text(), "seed": encode_b64url(key.seed)},
            indent=2,
        )
        + "\n"
    )


def _parse_plain(role: str, text: str, path: Path) -> SigningKey:
    try:
        data = json.loads(text)
        key = SigningKey(decode_b64url(data["seed"], length=SEED_SIZE, what="seed"))
        public = data["public"]
        stated_role = data["role"]
    except (ValueError, KeyError, TypeError, LedgerError) as exc:
        raise LeagueError(f"{path} is not a league key file: {exc}") from None
    if stated_role != role:
        raise LeagueError(f"{path} holds the {stated_role} key, not the {role} key")
    if public != key.public.to_text():
        raise LeagueError(f"{path}: its public key does not match its secret")
    return key


def write_key(
    keys_dir: Path,
    role: str,
    key: SigningKey,
    passphrase: str | None = None,
    kdf: KdfParams = DEFAULT_KDF,
) -> Path:
    """Write ``role``'s key, created 0600 from the start (never world-readable, even briefly);
    armored under ``passphrase`` when one is given."""
    text = _plain_text(role, key) if passphrase is None else seal_private_key(key, passphrase, kdf)
    keys_dir.mkdir(mode=KEYS_DIR_MODE, parents=True, exist_ok=True)
    keys_dir.chmod(KEYS_DIR_MODE)
    path = key_path(keys_dir, role)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_FILE_MODE)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    return path


def read_private_text(path: Path, encoding: str = "ascii") -> str:
    """The text of a file holding a secret (a key, a passphrase); refused when group or
    others may read or write it. A missing file raises :class:`FileNotFoundError`."""
    try:
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise LeagueError(
                f"{path} is readable by others (mode {mode:o}); run: chmod 600 {path}"
            )
        return path.read_text(encoding=encoding)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise LeagueError(f"cannot read {path}: {exc}") from None


def read_key(keys_dir: Path, role: str, passphrase: str | None = None) -> SigningKey:
    """Load ``role``'s key; a missing, unreadable or group/world-readable file is refused."""
    path = key_path(keys_dir, role)
    try:
        text = read_private_text(path)
    except FileNotFoundError:
        raise LeagueError(f"no {role} key at {path}") from None
    if not text.startswith(_ARMOR_BEGIN):
        return _parse_plain(role, text, path)
    if passphrase is None:
        raise LeagueError(
            f"the {role} key is passphrase-armored: give --passphrase-file or set "
            f"LEAGUE_PASSPHRASE_FILE"
        )
    try:
        return open_private_key(text, passphrase)
    except LedgerError as exc:
        raise LeagueError(f"{path}: {exc.diagnostics()}") from None
