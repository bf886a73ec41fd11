"""Run the league's alembic migrations programmatically (the CLI and the tests call this).

Alembic drives SQLAlchemy with the psycopg (v3) driver; the URL is the same libpq-style URL
asyncpg takes, including the embedded server's ``?host=/socket/dir`` form.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

import migrations

_SCHEMES = ("postgresql://", "postgres://")


def sqlalchemy_url(database_url: str) -> str:
    """``postgresql://...`` as SQLAlchemy's psycopg URL."""
    for scheme in _SCHEMES:
        if database_url.startswith(scheme):
            return "postgresql+psycopg://" + database_url[len(scheme) :]
    raise ValueError("the database URL must start with postgresql://")


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.attributes["sqlalchemy_url"] = sqlalchemy_url(database_url)
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Bring the database to ``revision`` (default: the newest). Blocking: in async code call
    it through ``asyncio.to_thread``."""
    command.upgrade(alembic_config(database_url), revision)


def head_revision() -> str:
    """The newest revision the shipped scripts define."""
    head = ScriptDirectory.from_config(alembic_config("postgresql://")).get_current_head()
    if head is None:
        raise RuntimeError("the shipped migrations define no head revision")
    return head
