"""Witnessing (C2SP tlog-witness): what each service cosigned of the others' logs, the
evidence it kept of inconsistent checkpoints, and the cosignatures its own log received.

Revision ID: 0005_witnessing
Revises: 0004_notary_projections

Each service is a witness of the league's other services (``services.kernel.witness_server``) and
submits its own checkpoints to them (``services.kernel.witness_client``); see docs/eventlog.md,
"Witnesses". None of these tables is part of a log: a rebuild leaves them alone.
"""

from __future__ import annotations

from alembic import op

from migrations import SCHEMAS

revision = "0005_witnessing"
down_revision = "0004_notary_projections"
branch_labels = None
depends_on = None

UPGRADE = """
-- As a witness: the latest checkpoint cosigned of each other log, by origin. Size 0 and the
-- empty root (checkpoint NULL) until the first cosignature. Read FOR UPDATE and replaced in
-- one transaction, so two submissions can never both advance it (compare and swap).
CREATE TABLE {s}.witnessed_logs (
    origin text PRIMARY KEY,
    tree_size bigint NOT NULL CHECK (tree_size >= 0),
    root_hash bytea NOT NULL CHECK (octet_length(root_hash) = 32),
    checkpoint text,
    cosigned_at timestamptz
);

-- As a witness: two checkpoints one log signed that are not one append-only history (the one
-- cosigned last and one submitted after it), with the submission's proof and, when that proof
-- showed no root, the log's inclusion proof of the last leaf of the cosigned size (leaf_hash,
-- inclusion_proof). Kept once per pair of roots.
CREATE TABLE {s}.witness_evidence (
    id bigserial PRIMARY KEY,
    origin text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind text NOT NULL CHECK (kind IN ('same-size', 'fork', 'unproven')),
    reason text NOT NULL,
    cosigned text NOT NULL,
    submitted text NOT NULL,
    cosigned_root bytea NOT NULL,
    submitted_root bytea NOT NULL,
    old_size bigint NOT NULL CHECK (old_size >= 0),
    proof bytea[] NOT NULL,
    prefix_root bytea,
    leaf_hash bytea,
    inclusion_proof bytea[],
    UNIQUE (origin, cosigned_root, submitted_root)
);

-- As a log: each cosignature a witness returned for one of this service's checkpoints (the
-- note signature line), served with that checkpoint.
CREATE TABLE {s}.cosignatures (
    witness text NOT NULL,
    tree_size bigint NOT NULL CHECK (tree_size >= 0),
    root_hash bytea NOT NULL CHECK (octet_length(root_hash) = 32),
    signature text NOT NULL,
    PRIMARY KEY (witness, tree_size)
);
"""


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(UPGRADE.replace("{s}", schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(f"DROP TABLE IF EXISTS {schema}.cosignatures")
        op.execute(f"DROP TABLE IF EXISTS {schema}.witness_evidence")
        op.execute(f"DROP TABLE IF EXISTS {schema}.witnessed_logs")
