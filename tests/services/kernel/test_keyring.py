"""League key files: 0600, checked on load, armored under a passphrase when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.keys import SigningKey
from ledger.savecode import MINIMUM_KDF
from services.kernel.errors import LeagueError
from services.kernel.founding import read_passphrase
from services.kernel.keyring import key_path, read_key, write_key
from services.kernel.settings import LeagueSettings


def test_plain_key_round_trips_with_mode_0600(tmp_path: Path) -> None:
    """A written key reads back as the same key, from a 0600 file in a 0700 directory."""
    key = SigningKey.generate()
    path = write_key(tmp_path / "keys", "mint", key)
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "keys").stat().st_mode & 0o777 == 0o700
    assert read_key(tmp_path / "keys", "mint").seed == key.seed


def test_readable_by_others_is_refused(tmp_path: Path) -> None:
    """A key file others can read is refused, with the chmod that fixes it."""
    write_key(tmp_path, "mint", SigningKey.generate())
    key_path(tmp_path, "mint").chmod(0o644)
    with pytest.raises(LeagueError, match="chmod 600"):
        read_key(tmp_path, "mint")


def test_edited_public_key_or_role_is_refused(tmp_path: Path) -> None:
    """A file whose public key is not its secret's, or that names another role, is refused."""
    write_key(tmp_path, "mint", SigningKey.generate())
    path = key_path(tmp_path, "mint")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "public": SigningKey.generate().public.to_text()}))
    with pytest.raises(LeagueError, match="does not match"):
        read_key(tmp_path, "mint")
    path.write_text(json.dumps({**data, "role": "notary"}))
    with pytest.raises(LeagueError, match="notary key"):
        read_key(tmp_path, "mint")


def test_armored_key_needs_its_passphrase(tmp_path: Path) -> None:
    """An armored key opens with its passphrase only; without one the error says how."""
    key = SigningKey.generate()
    write_key(tmp_path, "root", key, "hunter2 hunter2", MINIMUM_KDF)
    assert key_path(tmp_path, "root").read_text().startswith("-----BEGIN CZ KEY-----")
    assert read_key(tmp_path, "root", "hunter2 hunter2").seed == key.seed
    with pytest.raises(LeagueError, match="passphrase-file"):
        read_key(tmp_path, "root")
    with pytest.raises(LeagueError, match="passphrase"):
        read_key(tmp_path, "root", "wrong")


def test_never_overwrites_a_key(tmp_path: Path) -> None:
    """Writing a role whose file exists fails rather than replacing the key."""
    write_key(tmp_path, "root", SigningKey.generate())
    with pytest.raises(FileExistsError):
        write_key(tmp_path, "root", SigningKey.generate())


def test_a_passphrase_file_others_may_read_is_refused(tmp_path: Path) -> None:
    """The passphrase file is a secret like a key file: read at 0600, refused at 0640."""
    secret = tmp_path / "passphrase"
    secret.write_text("correct horse battery staple\n", encoding="utf-8")
    settings = LeagueSettings(data_dir=tmp_path, passphrase_file=secret)
    secret.chmod(0o640)
    with pytest.raises(LeagueError, match="chmod 600"):
        read_passphrase(settings)
    secret.chmod(0o600)
    assert read_passphrase(settings) == "correct horse battery staple"
    with pytest.raises(LeagueError, match="no passphrase file"):
        read_passphrase(LeagueSettings(data_dir=tmp_path, passphrase_file=tmp_path / "none"))
