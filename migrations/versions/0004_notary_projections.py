"""The notary's tables: followed prints, recorded hops, holders, refused conflicts, receipts.

Revision ID: 0004_notary_projections
Revises: 0003_feed_following

``hops``, ``holders`` and ``conflicts`` are the notary's projection (``services.notary.projection``
derives them from the notary's log alone) and are written in the transaction that appends their
events, under the log's lock. ``prints`` is what the notary followed from the mint's feed,
written in the follower's transaction with its position. ``receipts`` keeps each receipt once
made, so an identical re-submission gets the same receipt; a rebuild leaves both alone.
"""

from __future__ import annotations

from alembic import op

revision = "0004_notary_projections"
down_revision = "0003_feed_following"
branch_labels = None
depends_on = None

UPGRADE = """
-- Every print the mint's feed stamped, as the notary followed it.
CREATE TABLE notary.prints (
    serial text PRIMARY KEY,
    issue integer NOT NULL CHECK (issue >= 1),
    certificate jsonb NOT NULL,
    certificate_hash bytea NOT NULL CHECK (octet_length(certificate_hash) = 32),
    mint_seq bigint NOT NULL UNIQUE CHECK (mint_seq >= 0),
    leaf_hash bytea NOT NULL CHECK (octet_length(leaf_hash) = 32)
);

-- The endorsement recorded first at each (serial, issue, hop): it wins (Book V.6).
CREATE TABLE notary.hops (
    serial text NOT NULL,
    issue integer NOT NULL,
    hop integer NOT NULL CHECK (hop >= 1),
    endorsement jsonb NOT NULL,
    endorsement_hash bytea NOT NULL CHECK (octet_length(endorsement_hash) = 32),
    to_key text NOT NULL,
    seq bigint NOT NULL UNIQUE,
    PRIMARY KEY (serial, issue, hop)
);

-- Each item's latest recorded hop and holder, and its stream's version in the notary's log.
CREATE TABLE notary.holders (
    serial text PRIMARY KEY,
    issue integer NOT NULL,
    hops integer NOT NULL CHECK (hops >= 0),
    holder text NOT NULL,
    events integer NOT NULL CHECK (events >= 1)
);

-- Every distinct conflicting endorsement refused, with the fraud proof.
CREATE TABLE notary.conflicts (
    serial text NOT NULL,
    issue integer NOT NULL,
    hop integer NOT NULL,
    endorsement_hash bytea NOT NULL CHECK (octet_length(endorsement_hash) = 32),
    proof jsonb NOT NULL,
    seq bigint NOT NULL UNIQUE,
    PRIMARY KEY (serial, issue, hop, endorsement_hash)
);

-- Receipts once made, by the seq of the hop-recorded event they receipt.
CREATE TABLE notary.receipts (
    seq bigint PRIMARY KEY,
    receipt jsonb NOT NULL
);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    for table in ("receipts", "conflicts", "holders", "hops", "prints"):
        op.execute(f"DROP TABLE IF EXISTS notary.{table}")
