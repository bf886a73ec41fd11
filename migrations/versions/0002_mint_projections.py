"""The mint's projections: run counters, owned counts, stamp requests, daily allowances.

Revision ID: 0002_mint_projections
Revises: 0001_event_logs

All four are updated in the same transaction as the mint's event appends
(``services.mint.stamping``), under the log's head lock.
"""

from __future__ import annotations

from alembic import op

revision = "0002_mint_projections"
down_revision = "0001_event_logs"
branch_labels = None
depends_on = None

UPGRADE = """
-- Which league this database belongs to: the mint refuses to serve another league's data.
CREATE TABLE mint.league (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    league text NOT NULL,
    manifest text NOT NULL
);

-- One row per title and finish: the run's fixed size and how many are stamped.
CREATE TABLE mint.runs (
    title text NOT NULL,
    finish text NOT NULL CHECK (finish IN ('standard', 'gilt', 'holofoil')),
    first_number integer NOT NULL CHECK (first_number >= 1),
    size integer NOT NULL CHECK (size >= 0),
    stamped integer NOT NULL DEFAULT 0 CHECK (stamped >= 0 AND stamped <= size),
    PRIMARY KEY (title, finish)
);

-- Prints the mint has stamped to each key, by title and finish. An address is a 50-bit id
-- of a key, not the key: two keys may share one, so rows are keyed by the key itself.
CREATE TABLE mint.owned (
    owner_key text NOT NULL,
    address text NOT NULL,
    title text NOT NULL,
    finish text NOT NULL,
    owned integer NOT NULL CHECK (owned >= 0),
    PRIMARY KEY (owner_key, title, finish)
);
CREATE INDEX owned_by_address ON mint.owned (address);

-- Every answered stamp request: a replay returns the stored answer, a reuse of the id with
-- another body is refused.
CREATE TABLE mint.stamp_requests (
    owner_key text NOT NULL,
    request_id text NOT NULL,
    request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
    answer jsonb NOT NULL,
    answered_at timestamptz NOT NULL,
    PRIMARY KEY (owner_key, request_id)
);

-- Prints stamped per key per UTC day, against the manifest's published allowance.
CREATE TABLE mint.allowances (
    owner_key text NOT NULL,
    day date NOT NULL,
    stamped integer NOT NULL CHECK (stamped >= 0),
    PRIMARY KEY (owner_key, day)
);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    for table in ("allowances", "stamp_requests", "owned", "runs", "league"):
        op.execute(f"DROP TABLE IF EXISTS mint.{table}")
