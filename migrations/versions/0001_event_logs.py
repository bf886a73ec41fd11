"""Event logs: one schema per service, each with its signed Merkle event log.

Revision ID: 0001_event_logs
Revises:
"""

from __future__ import annotations

from alembic import op

revision = "0001_event_logs"
down_revision = None
branch_labels = None
depends_on = None

SCHEMAS = ("mint", "treasury", "notary")

EVENT_LOG = """
CREATE SCHEMA IF NOT EXISTS {s};

-- The one-row head: its row lock serializes appends; size and right edge of the tree.
CREATE TABLE {s}.log_head (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    size bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    edge bytea[] NOT NULL DEFAULT '{{}}'
);
INSERT INTO {s}.log_head DEFAULT VALUES;

-- seq is the dense Merkle leaf index, assigned under the head lock (never a bigserial).
-- leaf holds the exact bytes the service signed and the tree hashes (domain tag + JCS of the
-- event); the columns before it are the same event, queryable. verify_all checks they agree.
CREATE TABLE {s}.events (
    seq bigint PRIMARY KEY CHECK (seq >= 0),
    stream text NOT NULL,
    stream_version integer NOT NULL CHECK (stream_version >= 1),
    type text NOT NULL,
    body jsonb NOT NULL,
    recorded_at timestamptz NOT NULL,
    leaf bytea NOT NULL CHECK (octet_length(leaf) BETWEEN 1 AND 65536),
    leaf_hash bytea NOT NULL CHECK (octet_length(leaf_hash) = 32),
    signature bytea NOT NULL CHECK (octet_length(signature) = 64),
    UNIQUE (stream, stream_version)
);

-- Every complete Merkle subtree above the leaves: (level, idx) covers leaves
-- [idx * 2^level, (idx + 1) * 2^level). Proofs read O(log n) of these.
CREATE TABLE {s}.tree_nodes (
    level smallint NOT NULL CHECK (level BETWEEN 1 AND 63),
    idx bigint NOT NULL CHECK (idx >= 0),
    hash bytea NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (level, idx)
);

-- Signed C2SP checkpoints, one per tree size, each consistent with every earlier one.
CREATE TABLE {s}.checkpoints (
    tree_size bigint PRIMARY KEY CHECK (tree_size >= 0),
    root_hash bytea NOT NULL CHECK (octet_length(root_hash) = 32),
    note text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
"""


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(EVENT_LOG.format(s=schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
