"""Alembic migrations of the league database: one schema per service (mint, treasury, notary).

Run them with :func:`services.eventlog.migrate.upgrade`; this package only holds the scripts.
"""
