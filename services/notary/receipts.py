"""Receipts: the notary's signed word that a hop is recorded, checkable offline.

A receipt names the ``hop-recorded`` event's index and leaf hash, a checkpoint of the notary's
log covering it and the leaf's inclusion proof in that checkpoint (``ledger.api.notary``).
Checkpoints are signed by the background checkpointer, so a receipt for a hop just recorded
waits (bounded) for one covering it. Each receipt is made once and kept: an identical
re-submission gets the same receipt, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ledger.api.notary import Receipt
from ledger.encoding import encode_b64
from ledger.errors import Overloaded
from ledger.events import HopRecorded, body_as
from ledger.keys import SigningKey
from ledger.wire import hash_text
from services.eventlog import EventLogError, EventStore
from services.kernel.checkpoints import Checkpointer

#: How long an answer waits for the checkpointer to sign a checkpoint covering its hops.
COVERING_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Receipts:
    """Makes and keeps the receipts of the notary's log."""

    store: EventStore
    key: SigningKey
    checkpointer: Checkpointer

    async def of(self, seqs: Iterable[int]) -> dict[int, Receipt]:
        """The receipt of each ``hop-recorded`` event in ``seqs`` (made now if need be)."""
        wanted = sorted(set(seqs))
        found = await self._stored(wanted)
        missing = [seq for seq in wanted if seq not in found]
        if missing:
            found.update(await self._make(missing))
        return found

    async def _stored(self, seqs: list[int]) -> dict[int, Receipt]:
        rows = await self.store.fetch(
            "SELECT seq, receipt::text FROM notary.receipts WHERE seq = ANY($1::bigint[])", seqs
        )
        return {row[0]: Receipt.from_wire(row[1]) for row in rows}

    async def _make(self, seqs: list[int]) -> dict[int, Receipt]:
        """Make and keep the receipts of ``seqs`` (sorted) against one checkpoint covering
        them: their events in one read, their inclusion proofs in another."""
        checkpoint = await self.checkpointer.covering(max(seqs) + 1, COVERING_TIMEOUT)
        if checkpoint is None:
            raise Overloaded(
                "the hops are recorded, but no checkpoint covers them yet; send the same "
                "request again for their receipts",
                retry_after=1,
            )
        events = await self.store.events(seqs)
        if len(events) != len(seqs):
            absent = sorted(set(seqs) - {event.seq for event in events})
            raise EventLogError(f"no event at {absent[0]} of the notary's log")
        proofs = await self.store.inclusion_proofs(seqs, checkpoint.size)
        made: dict[int, Receipt] = {}
        for event, proof in zip(events, proofs, strict=True):
            body = body_as(event, HopRecorded)
            endorsement = body.endorsement
            made[event.seq] = Receipt.sign(
                self.key,
                origin=self.store.origin,
                serial=endorsement.serial,
                issue=body.issue,
                hop=endorsement.hop,
                endorsement=hash_text(endorsement.hash()),
                to=endorsement.to,
                index=event.seq,
                leaf_hash=encode_b64(event.leaf_hash),
                checkpoint=str(checkpoint),
                proof=[encode_b64(h) for h in proof],
            )
        # Two answers may make the same receipt at once: the first kept is everyone's.
        async with self.store.transaction() as tx:
            rows = await tx.fetch(
                "INSERT INTO notary.receipts (seq, receipt) SELECT w.q, w.r::jsonb"
                " FROM unnest($1::bigint[], $2::text[]) AS w(q, r) ON CONFLICT (seq) DO NOTHING"
                " RETURNING seq",
                list(made),
                [json.dumps(receipt.to_wire()) for receipt in made.values()],
            )
        kept = {row[0] for row in rows}
        lost = [seq for seq in seqs if seq not in kept]
        if lost:
            made.update(await self._stored(lost))
        return made
