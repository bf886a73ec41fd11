"""Duels and the move clock at the tables service (docs/formats.md, "Duels", "The move clock").

Revision ID: 0014_duels
Revises: 0013_tables

``tables.tables`` gets a duel's second key (``opponent``) and the key whose seed is in while
the other's is awaited (``seeded``), the statuses ``joined`` and ``abandoned``, and an index of
the tables in play by their last event (the move clock's sweep). ``tables.duel_codes`` maps a
waiting duel's join code to its table: the code is derived from the service's key and the
table (``ledger.tables.duel_code``) and is not in the log before the join, so the opening
transaction writes it here, beside the projection.
"""

from __future__ import annotations

from alembic import op

revision = "0014_duels"
down_revision = "0013_tables"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE tables.tables ADD COLUMN opponent text, ADD COLUMN seeded text;
ALTER TABLE tables.tables DROP CONSTRAINT tables_status_check;
ALTER TABLE tables.tables ADD CONSTRAINT tables_status_check
    CHECK (status IN ('opened', 'joined', 'dealt', 'closed', 'abandoned'));
CREATE INDEX tables_in_play ON tables.tables (last_at)
    WHERE status IN ('opened', 'joined', 'dealt');
CREATE TABLE tables.duel_codes (
    code text PRIMARY KEY CHECK (code ~ '^[2-9A-HJ-NP-Z]{8}$'),
    table_id text NOT NULL
);
"""

DOWNGRADE = """
DROP TABLE tables.duel_codes;
DROP INDEX tables.tables_in_play;
ALTER TABLE tables.tables DROP CONSTRAINT tables_status_check;
ALTER TABLE tables.tables ADD CONSTRAINT tables_status_check
    CHECK (status IN ('opened', 'dealt', 'closed'));
ALTER TABLE tables.tables DROP COLUMN opponent, DROP COLUMN seeded;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
