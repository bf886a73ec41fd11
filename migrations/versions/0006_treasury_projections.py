"""The treasury's tables: the league, the supply counters, issued notes, faucet days, claims.

Revision ID: 0006_treasury_projections
Revises: 0005_witnessing

``supply``, ``notes`` and ``faucet`` are the treasury's projection
(``services.treasury.projection`` derives them from the treasury's log alone) and are written
in the transaction that appends their events, under the log's lock. A note never issued has no
row in ``notes``: the numbers above ``supply.first_issued`` are the untouched part of the
reserve, so founding writes four rows, not 170,000. ``claims`` keeps each answered claim, so a
replay gets the same answer; it records answers, not the log, and a rebuild leaves it alone.
"""

from __future__ import annotations

from alembic import op

revision = "0006_treasury_projections"
down_revision = "0005_witnessing"
branch_labels = None
depends_on = None

UPGRADE = """
-- Which league this database belongs to: the treasury refuses to serve another league's data.
CREATE TABLE treasury.league (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    league text NOT NULL,
    manifest text NOT NULL
);

-- One row per denomination of the note set: its fixed count, how many of its notes were ever
-- issued (numbers 1..first_issued) and how many are out now. The reserve is notes - circulating.
CREATE TABLE treasury.supply (
    denomination integer PRIMARY KEY CHECK (denomination IN (1, 5, 25, 100)),
    notes integer NOT NULL CHECK (notes >= 1),
    first_issued integer NOT NULL DEFAULT 0 CHECK (first_issued >= 0 AND first_issued <= notes),
    circulating integer NOT NULL DEFAULT 0
        CHECK (circulating >= 0 AND circulating <= first_issued)
);

-- Every note issued at least once: its current issue and, while it is out, whom that issue was
-- made out to (NULL once returned: back in the reserve, to be issued again).
CREATE TABLE treasury.notes (
    serial text PRIMARY KEY,
    denomination integer NOT NULL,
    number integer NOT NULL CHECK (number >= 1),
    issue integer NOT NULL CHECK (issue >= 1),
    issued_to text,
    UNIQUE (denomination, number)
);
CREATE INDEX notes_returned ON treasury.notes (denomination, number) WHERE issued_to IS NULL;

-- Marks converted by the faucet per key per UTC day, against the manifest's published cap.
CREATE TABLE treasury.faucet (
    owner_key text NOT NULL,
    day date NOT NULL,
    marks integer NOT NULL CHECK (marks >= 0),
    PRIMARY KEY (owner_key, day)
);

-- Every answered claim: a replay returns the stored answer, a reuse of the id with another
-- body is refused.
CREATE TABLE treasury.claims (
    owner_key text NOT NULL,
    request_id text NOT NULL,
    request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
    answer jsonb NOT NULL,
    answered_at timestamptz NOT NULL,
    PRIMARY KEY (owner_key, request_id)
);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    for table in ("claims", "faucet", "notes", "supply", "league"):
        op.execute(f"DROP TABLE IF EXISTS treasury.{table}")
