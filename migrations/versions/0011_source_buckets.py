"""Per-source rate limits kept in the database, so they hold across a service's workers.

Revision ID: 0011_source_buckets
Revises: 0010_evidence_convicts

A service served by several worker processes (``league serve --workers N``) counts each
source network's requests in one place: a token bucket per (limit, source) row, spent and
refilled by one statement (services/kernel/ratelimit.py, ``SharedBuckets``). ``full_at`` is
when the bucket is full again: a row past it holds nothing a fresh bucket would not, so the
leader deletes such rows, bounding the table by the sources seen within a refill.
"""

from __future__ import annotations

from alembic import op

from migrations import SCHEMAS

revision = "0011_source_buckets"
down_revision = "0010_evidence_convicts"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.source_buckets (
    bucket text NOT NULL,
    source text NOT NULL,
    tokens double precision NOT NULL,
    at timestamptz NOT NULL,
    full_at timestamptz NOT NULL,
    PRIMARY KEY (bucket, source)
);
CREATE INDEX source_buckets_full_at ON {s}.source_buckets (full_at);
"""

DOWNGRADE = "DROP TABLE {s}.source_buckets;"


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(UPGRADE.replace("{s}", schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(DOWNGRADE.replace("{s}", schema))
