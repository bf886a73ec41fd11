"""Alembic migrations of the league database: one schema per service (mint, treasury, notary).

Run them with :func:`services.eventlog.migrate.upgrade`; this package only holds the scripts.
"""

#: The schemas the migrations create, one per service (the event store knows none of them).
SCHEMAS = ("mint", "treasury", "notary")
