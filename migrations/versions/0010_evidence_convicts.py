"""A witness keeps only evidence that convicts the log by itself: ``unproven`` records go.

Revision ID: 0010_evidence_convicts
Revises: 0009_print_returns

Until now a witness also kept a pair whose submitted consistency proof merely failed
(``unproven``). The checkpoints are the log's public ones and the proof is the submitter's,
anyone's: an outsider could plant such a record against an honest log while the witness could
not reach it, and every audit failed on it for good (docs/eventlog.md, "Witnesses"). Such a
record proves nothing, so this deletes every one of them and lets ``kind`` hold only
``same-size`` and ``fork``, each checked offline by ``ledger.api.witness.Evidence.convicts``.
Nothing is lost: a log that did fork is caught again at its next submission, when the witness
asks it for its own inclusion proof. The downgrade widens the check again; the deleted records
do not come back.
"""

from __future__ import annotations

from alembic import op

from migrations import SCHEMAS

revision = "0010_evidence_convicts"
down_revision = "0009_print_returns"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE {s}.witness_evidence DROP CONSTRAINT witness_evidence_kind_check;
DELETE FROM {s}.witness_evidence WHERE kind NOT IN ('same-size', 'fork');
ALTER TABLE {s}.witness_evidence ADD CONSTRAINT witness_evidence_kind_check
    CHECK (kind IN ('same-size', 'fork'));
"""

DOWNGRADE = """
ALTER TABLE {s}.witness_evidence DROP CONSTRAINT witness_evidence_kind_check;
ALTER TABLE {s}.witness_evidence ADD CONSTRAINT witness_evidence_kind_check
    CHECK (kind IN ('same-size', 'fork', 'unproven'));
"""


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(UPGRADE.replace("{s}", schema))


def downgrade() -> None:
    for schema in SCHEMAS:
        op.execute(DOWNGRADE.replace("{s}", schema))
