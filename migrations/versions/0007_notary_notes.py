"""The notary's view of the treasury: every issue and every return of every note.

Revision ID: 0007_notary_notes
Revises: 0006_treasury_projections

What the notary followed from the treasury's feed (``services.notary.following``), written in
the follower's transaction with its position, as ``notary.prints`` is from the mint's. A note
is issued again after each return, so both are keyed by (serial, issue): the newest issue is
the only one whose chain is spendable; the older ones are history (docs/architecture.md §3).
"""

from __future__ import annotations

from alembic import op

revision = "0007_notary_notes"
down_revision = "0006_treasury_projections"
branch_labels = None
depends_on = None

UPGRADE = """
-- Every issue of a note the treasury's feed recorded, as the notary followed it.
CREATE TABLE notary.notes (
    serial text NOT NULL,
    issue integer NOT NULL CHECK (issue >= 1),
    certificate jsonb NOT NULL,
    certificate_hash bytea NOT NULL CHECK (octet_length(certificate_hash) = 32),
    treasury_seq bigint NOT NULL UNIQUE CHECK (treasury_seq >= 0),
    leaf_hash bytea NOT NULL CHECK (octet_length(leaf_hash) = 32),
    PRIMARY KEY (serial, issue)
);

-- Every return of a note to the reserve: the chain of that issue is history from then on.
CREATE TABLE notary.note_returns (
    serial text NOT NULL,
    issue integer NOT NULL CHECK (issue >= 1),
    notarized bigint NOT NULL CHECK (notarized >= 0),
    purchase_id text NOT NULL,
    treasury_seq bigint NOT NULL UNIQUE CHECK (treasury_seq >= 0),
    leaf_hash bytea NOT NULL CHECK (octet_length(leaf_hash) = 32),
    PRIMARY KEY (serial, issue),
    FOREIGN KEY (serial, issue) REFERENCES notary.notes (serial, issue)
);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    for table in ("note_returns", "notes"):
        op.execute(f"DROP TABLE IF EXISTS notary.{table}")
