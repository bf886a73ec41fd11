"""The tables service: its schema, built as the earlier revisions built each service's, and its
projection of witnessed tables.

Revision ID: 0013_tables
Revises: 0012_followed_trees

The schema ``tables`` gets what every service's schema holds, by the very statements the
revisions that made them ran for the first three services (in their order: the event log,
feed following, witnessing and its evidence kinds, source buckets, followed trees), then
``tables.tables``: one row per witnessed table, the projection ``services.tables.projection``
derives from the log alone (written in the transaction that appends the table's events,
under the log's lock).
"""

from __future__ import annotations

import importlib

from alembic import op

revision = "0013_tables"
down_revision = "0012_followed_trees"
branch_labels = None
depends_on = None

SCHEMA = "tables"
#: The revisions whose per-service statements build a service's schema, in order.
SHELL = (
    "0003_feed_following",
    "0005_witnessing",
    "0010_evidence_convicts",
    "0011_source_buckets",
    "0012_followed_trees",
)

TABLES = """
CREATE TABLE tables.tables (
    table_id text PRIMARY KEY CHECK (table_id ~ '^[0-9a-f]{32}$'),
    player text NOT NULL,
    venue text NOT NULL,
    commitment text NOT NULL,
    status text NOT NULL CHECK (status IN ('opened', 'dealt', 'closed')),
    plies integer NOT NULL CHECK (plies >= 0),
    events integer NOT NULL CHECK (events >= 1),
    last_at timestamptz NOT NULL,
    verdict text CHECK (verdict IN ('win', 'loss', 'balance'))
);
CREATE INDEX tables_by_player ON tables.tables (player);
"""


def _revision(name: str) -> object:
    return importlib.import_module(f"migrations.versions.{name}")


def upgrade() -> None:
    event_log: str = _revision("0001_event_logs").EVENT_LOG  # type: ignore[attr-defined]
    op.execute(event_log.format(s=SCHEMA))
    for name in SHELL:
        statements: str = _revision(name).UPGRADE  # type: ignore[attr-defined]
        op.execute(statements.replace("{s}", SCHEMA))
    op.execute(TABLES)


def downgrade() -> None:
    op.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
