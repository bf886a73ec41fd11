"""Prints returned to the mint for a finish upgrade (L-20): the notary's view and the
treasury's.

Revision ID: 0009_print_returns
Revises: 0008_treasury_purchases

A print returned and issued again (an upgrade refused, its run exhausted) has a second issue,
so the notary keys the prints it followed by (serial, issue), as it keys notes (0007), and
records each return it followed in ``notary.print_returns``: the newest issue is the only one
whose chain moves; an older one, or a returned one, is history. ``treasury.print_returns`` is
the treasury's projection of the prints returned in its purchases, one per (serial, issue):
a print is returned into at most one purchase (a rejected purchase's row goes; its print
never moved).
"""

from __future__ import annotations

from alembic import op

revision = "0009_print_returns"
down_revision = "0008_treasury_purchases"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE notary.prints DROP CONSTRAINT prints_pkey;
ALTER TABLE notary.prints ADD PRIMARY KEY (serial, issue);

CREATE TABLE notary.print_returns (
    serial text NOT NULL,
    issue integer NOT NULL CHECK (issue >= 1),
    notarized bigint NOT NULL CHECK (notarized >= 0),
    order_id text NOT NULL,
    mint_seq bigint NOT NULL UNIQUE CHECK (mint_seq >= 0),
    leaf_hash bytea NOT NULL CHECK (octet_length(leaf_hash) = 32),
    PRIMARY KEY (serial, issue),
    FOREIGN KEY (serial, issue) REFERENCES notary.prints (serial, issue)
);

CREATE TABLE treasury.print_returns (
    serial text NOT NULL,
    issue integer NOT NULL CHECK (issue >= 1),
    purchase_id text NOT NULL,
    PRIMARY KEY (serial, issue)
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS treasury.print_returns;
DROP TABLE IF EXISTS notary.print_returns;
DELETE FROM notary.prints WHERE issue > 1;
ALTER TABLE notary.prints DROP CONSTRAINT prints_pkey;
ALTER TABLE notary.prints ADD PRIMARY KEY (serial);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
