"""The treasury's purchases: each purchase's saga step, and the notes being paid.

Revision ID: 0008_treasury_purchases
Revises: 0007_notary_notes

Both are the treasury's projection (``services.treasury.projection`` derives them from the
purchase events of its log) and are written in the transaction that appends the events.
``purchases`` holds each purchase's latest step and its stream's version: the resumer drives
every purchase not closed. ``paying`` holds every note paid by a purchase not yet closed, so a
note is paid into one purchase at a time.
"""

from __future__ import annotations

from alembic import op

revision = "0008_treasury_purchases"
down_revision = "0007_notary_notes"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE treasury.purchases (
    purchase_id text PRIMARY KEY,
    buyer text NOT NULL,
    request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
    step text NOT NULL,
    steps integer NOT NULL CHECK (steps >= 1)
);
CREATE INDEX purchases_open ON treasury.purchases (purchase_id) WHERE step <> 'purchase-closed';

CREATE TABLE treasury.paying (
    serial text PRIMARY KEY,
    issue integer NOT NULL CHECK (issue >= 1),
    purchase_id text NOT NULL
);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    for table in ("paying", "purchases"):
        op.execute(f"DROP TABLE IF EXISTS treasury.{table}")
