"""The notary's projection: recorded hops, holders and refused conflicts, from its log alone.

:meth:`NotaryProjection.project` is pure: what one ``hop-recorded`` or ``conflict-refused``
event adds. The notarizing transaction writes the sum for the events it appends; ``league
rebuild`` folds the whole log through the same function (``services.kernel.projections``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from ledger.events import NOTARY_EVENTS, ConflictRefused, HopRecorded, parse_event
from ledger.leaf import Event
from services.eventlog import StoreTransaction
from services.kernel.projections import Snapshot, read_tables


@dataclass
class Holding:
    """What events change of one item's ``holders`` row: the latest hop they record (issue,
    hop, holder; issue 0 when they record none) and how many events they add to its stream."""

    issue: int = 0
    hops: int = 0
    holder: str = ""
    events: int = 0


@dataclass
class NotaryChanges:
    """What some events add to the notary's tables."""

    #: (serial, issue, hop, endorsement JSON, endorsement hash, to, seq)
    hops: list[tuple[str, int, int, str, bytes, str, int]] = field(default_factory=list)
    holders: dict[str, Holding] = field(default_factory=dict)
    #: (serial, issue, hop, endorsement hash, fraud proof JSON, seq)
    conflicts: list[tuple[str, int, int, bytes, str, int]] = field(default_factory=list)


WRITE = """
WITH hops AS (
    INSERT INTO notary.hops (serial, issue, hop, endorsement, endorsement_hash, to_key, seq)
    SELECT w.s, w.i, w.h, w.e::jsonb, w.d, w.t, w.q
    FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::bytea[], $6::text[],
                $7::bigint[]) AS w(s, i, h, e, d, t, q)
), conflicts AS (
    INSERT INTO notary.conflicts (serial, issue, hop, endorsement_hash, proof, seq)
    SELECT w.s, w.i, w.h, w.d, w.p::jsonb, w.q
    FROM unnest($8::text[], $9::int[], $10::int[], $11::bytea[], $12::text[], $13::bigint[])
         AS w(s, i, h, d, p, q)
)
INSERT INTO notary.holders AS o (serial, issue, hops, holder, events)
SELECT * FROM unnest($14::text[], $15::int[], $16::int[], $17::text[], $18::int[])
ON CONFLICT (serial) DO UPDATE SET
    issue = CASE WHEN (excluded.issue, excluded.hops) > (o.issue, o.hops)
                 THEN excluded.issue ELSE o.issue END,
    hops = CASE WHEN (excluded.issue, excluded.hops) > (o.issue, o.hops)
                THEN excluded.hops ELSE o.hops END,
    holder = CASE WHEN (excluded.issue, excluded.hops) > (o.issue, o.hops)
                  THEN excluded.holder ELSE o.holder END,
    events = o.events + excluded.events
"""


class NotaryProjection:
    """The notary's projection tables as a function of its log."""

    name = "notary"

    def empty(self) -> NotaryChanges:
        return NotaryChanges()

    def project(self, event: Event, into: NotaryChanges) -> None:
        body = parse_event(event, NOTARY_EVENTS)
        if isinstance(body, HopRecorded):
            self.recorded(into, body, event.seq)
        elif isinstance(body, ConflictRefused):
            self.refused(into, body, event.seq)

    @staticmethod
    def recorded(into: NotaryChanges, body: HopRecorded, seq: int) -> None:
        """What one recorded hop adds (the notarizing transaction calls it with the bodies it
        has just built)."""
        e = body.endorsement
        into.hops.append(
            (e.serial, body.issue, e.hop, orjson.dumps(e.to_wire()).decode(), e.hash(), e.to, seq)
        )
        holding = into.holders.setdefault(e.serial, Holding())
        if (body.issue, e.hop) > (holding.issue, holding.hops):
            holding.issue, holding.hops, holding.holder = body.issue, e.hop, e.to
        holding.events += 1

    @staticmethod
    def refused(into: NotaryChanges, body: ConflictRefused, seq: int) -> None:
        """What one refused conflict adds."""
        second = body.proof.second
        into.conflicts.append(
            (
                second.serial,
                body.issue,
                second.hop,
                second.hash(),
                orjson.dumps(body.proof.to_wire()).decode(),
                seq,
            )
        )
        into.holders.setdefault(second.serial, Holding()).events += 1

    async def write(self, tx: StoreTransaction, changes: NotaryChanges) -> None:
        if not (changes.hops or changes.conflicts or changes.holders):
            return
        holders = list(changes.holders.items())
        await tx.execute(
            WRITE,
            *[[row[i] for row in changes.hops] for i in range(7)],
            *[[row[i] for row in changes.conflicts] for i in range(6)],
            [serial for serial, _ in holders],
            [h.issue for _, h in holders],
            [h.hops for _, h in holders],
            [h.holder for _, h in holders],
            [h.events for _, h in holders],
        )

    async def reset(self, tx: StoreTransaction) -> None:
        await tx.execute("DELETE FROM notary.hops")
        await tx.execute("DELETE FROM notary.conflicts")
        await tx.execute("DELETE FROM notary.holders")

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        queries = {
            "notary.hops": "SELECT serial, issue, hop, endorsement_hash, to_key, seq,"
            " endorsement FROM notary.hops",
            "notary.holders": "SELECT serial, issue, hops, holder, events FROM notary.holders",
            "notary.conflicts": "SELECT serial, issue, hop, endorsement_hash, seq, proof"
            " FROM notary.conflicts",
        }
        return await read_tables(tx, queries)


PROJECTION = NotaryProjection()
