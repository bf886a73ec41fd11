"""Receipts: the notary's signed word that a hop is recorded, checkable offline.

A receipt names the ``hop-recorded`` event's index and leaf hash, a checkpoint of the notary's
log covering it and the leaf's inclusion proof in that checkpoint (``ledger.api.notary``).
Checkpoints are signed by the background checkpointer, so a receipt for a hop just recorded
waits (bounded) for one covering it. Each receipt is made once and kept: an identical
re-submission gets the same receipt, byte for byte.

Receipts are made in batches, not per request: every request asking while a batch is being
made joins the next one, and a batch costs one read of the receipts kept, one wait for a
covering checkpoint, one read of the events, one pass over the inclusion proofs (every
subtree they need in one query) and one insert, whatever the number of requests in it. The
hops a request has just recorded come with what their receipts say (:class:`Fresh`, from the
transaction that appended them): no receipt of theirs can be kept yet, and their events are
not read back; should another request's batch keep one first, the insert says so and the
kept one is everyone's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from ledger.api.notary import Receipt
from ledger.canonical import object_hash
from ledger.encoding import encode_b64
from ledger.endorsements import Endorsement
from ledger.errors import Overloaded, SchemaError
from ledger.events import HopRecorded
from ledger.keys import SigningKey
from ledger.wire import hash_text
from services.eventlog import Event, EventLogError, EventStore
from services.kernel.checkpoints import Checkpointer

#: How long an answer waits for the checkpointer to sign a checkpoint covering its hops.
COVERING_TIMEOUT = 10.0
#: Most receipts one batch makes or reads (a request beyond it starts the next batch).
MAX_BATCH_RECEIPTS = 4096


@dataclass(frozen=True, slots=True)
class Fresh:
    """What the receipt of a hop just recorded says of it, as the transaction that appended
    its ``hop-recorded`` event knows it: the serial, issue and hop, the endorsement's hash,
    the holder after it, and the event's leaf hash."""

    serial: str
    issue: int
    hop: int
    endorsement: str
    to: str
    leaf_hash: bytes


@dataclass(eq=False)
class _Batch:
    """The receipts asked for by the requests that joined one batch, and its outcome."""

    done: asyncio.Future[dict[int, Receipt]]
    seqs: set[int] = field(default_factory=set)
    askers: int = 0
    #: The hops just recorded among ``seqs``, with what their receipts say.
    fresh: dict[int, Fresh] = field(default_factory=dict)


@dataclass(eq=False)
class _Batching:
    """The batch still taking requests, the lock that runs one batch at a time, and the
    batches' tasks (kept referenced until they finish)."""

    open: _Batch | None = None
    running: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Receipts:
    """Makes and keeps the receipts of the notary's log."""

    store: EventStore
    key: SigningKey
    checkpointer: Checkpointer
    _batching: _Batching = field(default_factory=_Batching, init=False, repr=False, compare=False)

    async def of(
        self, seqs: Iterable[int], fresh: Mapping[int, Fresh] | None = None
    ) -> dict[int, Receipt]:
        """The receipt of each ``hop-recorded`` event in ``seqs`` (made now if need be), made
        or read in one batch with those of every request asking meanwhile; ``fresh``: the
        hops the caller has just recorded (of these seqs or more)."""
        wanted = set(seqs)
        if not wanted:
            return {}
        own = {} if fresh is None else {seq: fresh[seq] for seq in wanted if seq in fresh}
        batch = self._join(wanted, own)
        try:
            made = await asyncio.shield(batch.done)
        except Overloaded:
            raise
        except Exception:
            if batch.askers == 1:
                raise
            # Another request's seqs may be what failed the batch: ask again alone.
            made = await self._receipts(sorted(wanted), own)
        return {seq: made[seq] for seq in wanted}

    def _join(self, wanted: set[int], fresh: dict[int, Fresh]) -> _Batch:
        """The batch ``wanted`` is added to: the one still taking requests, or a new one
        (whose task waits for the batch being made to finish)."""
        batching = self._batching
        batch = batching.open
        if batch is None or len(batch.seqs | wanted) > MAX_BATCH_RECEIPTS:
            batch = _Batch(asyncio.get_running_loop().create_future())
            batch.done.add_done_callback(_retrieved)
            batching.open = batch
            task = asyncio.create_task(self._run(batch), name="notary receipts")
            batching.tasks.add(task)
            task.add_done_callback(batching.tasks.discard)
        batch.seqs |= wanted
        batch.fresh.update(fresh)
        batch.askers += 1
        return batch

    async def _run(self, batch: _Batch) -> None:
        """Make ``batch`` once the batch before it is done; it takes no request after that."""
        async with self._batching.running:
            if self._batching.open is batch:
                self._batching.open = None
            try:
                made = await self._receipts(sorted(batch.seqs), batch.fresh)
            except asyncio.CancelledError:
                batch.done.cancel()
                raise
            except Exception as exc:
                batch.done.set_exception(exc)
            else:
                batch.done.set_result(made)

    async def _receipts(self, wanted: list[int], fresh: Mapping[int, Fresh]) -> dict[int, Receipt]:
        """The receipts of ``wanted`` (sorted): those kept, and the rest made now (a hop just
        recorded has none kept yet)."""
        older = [seq for seq in wanted if seq not in fresh]
        found = await self._stored(older) if older else {}
        missing = [seq for seq in wanted if seq not in found]
        if missing:
            found.update(await self._make(missing, fresh))
        return found

    async def _stored(self, seqs: list[int]) -> dict[int, Receipt]:
        rows = await self.store.fetch(
            "SELECT seq, receipt::text FROM notary.receipts WHERE seq = ANY($1::bigint[])", seqs
        )
        return {row[0]: _kept(row[0], row[1]) for row in rows}

    async def _make(self, seqs: list[int], fresh: Mapping[int, Fresh]) -> dict[int, Receipt]:
        """Make and keep the receipts of ``seqs`` (sorted) against one checkpoint covering
        them: the events of those not ``fresh`` in one read, the inclusion proofs in
        another."""
        checkpoint = await self.checkpointer.covering(max(seqs) + 1, COVERING_TIMEOUT)
        if checkpoint is None:
            raise Overloaded(
                "the hops are recorded, but no checkpoint covers them yet; send the same "
                "request again for their receipts",
                retry_after=1,
            )
        older = [seq for seq in seqs if seq not in fresh]
        said = dict(fresh)
        if older:
            events = await self.store.events(older)
            if len(events) != len(older):
                absent = sorted(set(older) - {event.seq for event in events})
                raise EventLogError(f"no event at {absent[0]} of the notary's log")
            said.update((event.seq, _recorded(event)) for event in events)
        proofs = await self.store.inclusion_proofs(seqs, checkpoint.size)
        made: dict[int, Receipt] = {}
        for seq, proof in zip(seqs, proofs, strict=True):
            hop = said[seq]
            made[seq] = Receipt.sign(
                self.key,
                origin=self.store.origin,
                serial=hop.serial,
                issue=hop.issue,
                hop=hop.hop,
                endorsement=hop.endorsement,
                to=hop.to,
                index=seq,
                leaf_hash=encode_b64(hop.leaf_hash),
                checkpoint=str(checkpoint),
                proof=[encode_b64(h) for h in proof],
            )
        # Two answers may make the same receipt at once: the first kept is everyone's (one
        # statement: no transaction around it).
        rows = await self.store.fetch(
            "INSERT INTO notary.receipts (seq, receipt) SELECT w.q, w.r::jsonb"
            " FROM unnest($1::bigint[], $2::text[]) AS w(q, r) ON CONFLICT (seq) DO NOTHING"
            " RETURNING seq",
            list(made),
            [receipt.model_dump_json() for receipt in made.values()],
        )
        kept = {row[0] for row in rows}
        lost = [seq for seq in seqs if seq not in kept]
        if lost:
            made.update(await self._stored(lost))
        return made


def _recorded(event: Event) -> Fresh:
    """What a receipt says of a ``hop-recorded`` event: its serial, issue, hop, the hash of
    its endorsement and the holder after it, taken from the event's body as the log keeps it
    (the endorsement's wire form, validated and verified when it was recorded, hashed here as
    ``Endorsement.hash`` hashes it), not built again as models; :meth:`Receipt.sign`
    validates every field before anything is signed."""
    if event.type != HopRecorded.TYPE:
        raise SchemaError(f"event {event.seq} is a {event.type!r}, not a {HopRecorded.TYPE!r}")
    try:
        endorsement = event.body["endorsement"]
        return Fresh(
            endorsement["serial"],
            event.body["issue"],
            endorsement["hop"],
            hash_text(object_hash(Endorsement.KIND, endorsement)),
            endorsement["to"],
            event.leaf_hash,
        )
    except (KeyError, TypeError) as exc:
        raise EventLogError(f"event {event.seq} is not a hop recorded: {exc!r}") from None


def _kept(seq: int, text: str) -> Receipt:
    """A receipt as kept in ``notary.receipts`` (the notary's own, validated as it is read)."""
    try:
        return Receipt.model_validate_json(text)
    except ValidationError as exc:
        raise EventLogError(f"the receipt kept for event {seq} is not a receipt: {exc}") from None


def _retrieved(done: asyncio.Future[dict[int, Receipt]]) -> None:
    """Mark a batch's failure as seen (its askers may all have gone)."""
    if not done.cancelled():
        done.exception()
