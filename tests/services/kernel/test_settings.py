"""The operator's settings (services/league/settings.py)."""

from __future__ import annotations

from pathlib import Path

from services.kernel.settings import LeagueSettings


def test_the_database_url_never_shows_in_the_settings_repr(tmp_path: Path) -> None:
    """A DATABASE_URL may hold a password: repr and str of the settings leave it out."""
    settings = LeagueSettings(data_dir=tmp_path, database_url="postgresql://u:hunter2@db/league")
    assert settings.database_url == "postgresql://u:hunter2@db/league"
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in str(settings)
