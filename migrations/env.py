"""Alembic environment: online migrations over SQLAlchemy + psycopg.

The URL comes from ``config.attributes["sqlalchemy_url"]`` (set by
``services.eventlog.migrate.upgrade``), never from an ini file, so no password is written down.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

config = context.config


def run_migrations_offline() -> None:
    context.configure(
        url=config.attributes["sqlalchemy_url"],
        literal_binds=True,
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(config.attributes["sqlalchemy_url"], poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            context.configure(connection=connection)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
