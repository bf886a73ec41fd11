"""Feed following: where each service stands in the feeds it follows, and what it refused.

Revision ID: 0003_feed_following
Revises: 0002_mint_projections
"""

from __future__ import annotations

from alembic import op

revision = "0003_feed_following"
down_revision = "0002_mint_projections"
branch_labels = None
depends_on = None

#: Every service may follow the others' feeds (the notary the mint's and the treasury's, the
#: treasury the notary's, the mint the treasury's returns).
SCHEMAS = ("mint", "treasury", "notary")

UPGRADE = """
-- One row per followed feed: the next seq to apply, the right edge of the Merkle tree of
-- the events applied so far (so each page is checked against the feed's signed checkpoint),
-- and the last checkpoint verified. Written in the transaction that applies the events.
CREATE TABLE {s}.followed_feeds (
    source text PRIMARY KEY,
    position bigint NOT NULL CHECK (position >= 0),
    edge bytea[] NOT NULL,
    checkpoint text
);

-- What a followed feed served that contradicts what it signed before (a rewritten history,
-- a forged event): kept, never applied. Signed checkpoints here convict the feed's key.
CREATE TABLE {s}.feed_evidence (
    id bigserial PRIMARY KEY,
    source text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    reason text NOT NULL,
    trusted_checkpoint text,
    served_checkpoint text,
    served_event jsonb
);
"""


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(UPGRADE.replace("{s}", schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(f"DROP TABLE IF EXISTS {schema}.feed_evidence")
        op.execute(f"DROP TABLE IF EXISTS {schema}.followed_feeds")
