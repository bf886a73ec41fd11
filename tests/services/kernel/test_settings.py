"""The operator's settings (services/league/settings.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.manifest import ServiceUrls
from services.kernel.errors import LeagueError
from services.kernel.founding import create_league, load_manifest, load_service_key
from services.kernel.settings import LeagueSettings


def test_the_database_url_never_shows_in_the_settings_repr(tmp_path: Path) -> None:
    """A DATABASE_URL may hold a password: repr and str of the settings leave it out."""
    settings = LeagueSettings(data_dir=tmp_path, database_url="postgresql://u:hunter2@db/league")
    assert settings.database_url == "postgresql://u:hunter2@db/league"
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in str(settings)


def test_keys_are_read_from_league_keys_dir_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LEAGUE_KEYS_DIR (a container's /run/secrets) holds the keys; the data directory keeps
    the manifest. A service finds its own key there, and only there."""
    home = tmp_path / "home"
    create_league(LeagueSettings(data_dir=home), passphrase=None)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (home / "keys" / "mint.key").rename(secrets / "mint.key")
    monkeypatch.setenv("LEAGUE_HOME", str(home))
    monkeypatch.setenv("LEAGUE_KEYS_DIR", str(secrets))
    settings = LeagueSettings.from_env()
    assert settings.keys_dir == secrets
    manifest = load_manifest(settings)
    key = load_service_key(settings, manifest, "mint", None)
    assert key.public.to_text() == manifest.mint
    with pytest.raises(LeagueError, match="no notary key at"):
        load_service_key(settings, manifest, "notary", None)
    monkeypatch.delenv("LEAGUE_KEYS_DIR")
    assert LeagueSettings.from_env().keys_dir == home / "keys"


def test_trusted_proxies_are_networks_from_league_trusted_proxies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAGUE_HOME", str(tmp_path))
    assert LeagueSettings.from_env().trusted_proxies == ()
    monkeypatch.setenv("LEAGUE_TRUSTED_PROXIES", "172.16.0.0/12, fd00::/8,")
    assert [str(n) for n in LeagueSettings.from_env().trusted_proxies] == [
        "172.16.0.0/12",
        "fd00::/8",
    ]
    monkeypatch.setenv("LEAGUE_TRUSTED_PROXIES", "10.0.0.1/8")
    with pytest.raises(LeagueError, match=r"^LEAGUE_TRUSTED_PROXIES: .*'10\.0\.0\.1/8'"):
        LeagueSettings.from_env()


def test_each_service_url_comes_from_its_own_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MINT_URL, TREASURY_URL, NOTARY_URL and TABLES_URL name where each service answers when
    it runs in its own process (docs/operations.md "Separate processes", "Running in
    containers"); a service without one is this server's own address."""
    monkeypatch.setenv("LEAGUE_HOME", str(tmp_path))
    monkeypatch.setenv("LEAGUE_PORT", "8123")
    for name in ("MINT_URL", "TREASURY_URL", "NOTARY_URL", "TABLES_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NOTARY_URL", "http://notary:8080/")
    monkeypatch.setenv("TREASURY_URL", "http://treasury:8080")
    monkeypatch.setenv("TABLES_URL", "http://tables:8080")
    settings = LeagueSettings.from_env()
    assert settings.service_url("notary") == "http://notary:8080"
    assert settings.service_url("treasury") == "http://treasury:8080"
    assert settings.service_url("tables") == "http://tables:8080"
    assert settings.service_url("mint") == "http://127.0.0.1:8123"
    monkeypatch.setenv("MINT_URL", "http://mint:8080")
    assert LeagueSettings.from_env().service_url("mint") == "http://mint:8080"


def test_a_peer_answers_where_the_manifest_says_unless_a_setting_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service this server does not serve answers at the URL the signed
    manifest names; a served one at this server's own address; a <SERVICE>_URL setting
    (an operator behind NAT) wins over both."""
    monkeypatch.setenv("LEAGUE_HOME", str(tmp_path))
    monkeypatch.setenv("LEAGUE_PORT", "8123")
    for name in ("MINT_URL", "TREASURY_URL", "NOTARY_URL", "TABLES_URL"):
        monkeypatch.delenv(name, raising=False)
    urls = ServiceUrls(
        mint="https://mint.example",
        treasury="https://treasury.example",
        notary="https://notary.example",
    )
    made = create_league(LeagueSettings.from_env(), passphrase=None, urls=urls)
    assert load_manifest(LeagueSettings.from_env()) == made.manifest
    notary = LeagueSettings.from_env().with_peers(made.manifest, ["notary"])
    assert notary.service_url("mint") == "https://mint.example"
    assert notary.service_url("treasury") == "https://treasury.example"
    assert notary.service_url("notary") == "http://127.0.0.1:8123"
    monkeypatch.setenv("MINT_URL", "http://10.0.0.2:8080")
    behind_nat = LeagueSettings.from_env().with_peers(made.manifest, ["notary"])
    assert behind_nat.service_url("mint") == "http://10.0.0.2:8080"
    assert behind_nat.service_url("treasury") == "https://treasury.example"
    whole = LeagueSettings.from_env().with_peers(made.manifest, ["mint", "treasury", "notary"])
    assert whole.service_url("treasury") == "http://127.0.0.1:8123"


def test_a_manifest_naming_no_urls_leaves_the_settings_as_they_are(tmp_path: Path) -> None:
    settings = LeagueSettings(data_dir=tmp_path, port=8123)
    made = create_league(settings, passphrase=None)
    assert made.manifest.urls is None
    assert settings.with_peers(made.manifest, ["notary"]) == settings
    assert settings.service_url("mint") == "http://127.0.0.1:8123"
