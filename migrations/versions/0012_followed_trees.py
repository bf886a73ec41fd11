"""The Merkle tree of a followed feed, kept as it is followed, to prove inclusion locally.

Revision ID: 0012_followed_trees
Revises: 0011_source_buckets

A follower that keeps the tree (the notary, of the mint's and the treasury's feeds) writes,
in the transaction that applies a page, each leaf hash of the page (level 0) and every
complete subtree it closes (``ledger.merkle.CompactRange.append``), as a log stores its own
(``tree_nodes``). An inclusion proof of any followed event against the last checkpoint the
follower applied through is then built from these rows, with no call to the followed service
(docs/eventlog.md, "Waking followers"; services/kernel/follower.py). A feed followed before
this revision has no rows for the events it applied then: the follower writes its Merkle
edge's subtrees with its first page (every later proof needs no other), and a proof of an
older event is still fetched from its service.
"""

from __future__ import annotations

from alembic import op

from migrations import SCHEMAS

revision = "0012_followed_trees"
down_revision = "0011_source_buckets"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE {s}.followed_nodes (
    source text NOT NULL,
    level smallint NOT NULL CHECK (level >= 0 AND level < 64),
    idx bigint NOT NULL CHECK (idx >= 0),
    hash bytea NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (source, level, idx)
);
"""


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(UPGRADE.replace("{s}", schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(f"DROP TABLE IF EXISTS {schema}.followed_nodes")
