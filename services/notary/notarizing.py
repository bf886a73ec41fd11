"""Notarizing: the first endorsement recorded at each (serial, issue, hop) wins (Book V.6).

Everything that needs no lock is checked first, per request: every chain verifies offline
under the league manifest (the certificate fits the runs or the note set and is the mint's or
the treasury's; at each hop the serial, the hop number, the ``prev`` link and the holder's
signature; the issuer's signature on a certificate is not checked again when the certificate,
signature and all, is the one the notary followed from that issuer's feed, whose pages it
verified against the issuer's signed checkpoints: :func:`known_certificates`) and its
certificate is the current issue the mint's feed stamped (or issued again,
L-20) or the treasury's feed issued (an older issue, or one returned, is history:
``following.check_current``; checked before the lock, which is sound because a note or a
print is issued again only after its return, so an older issue's chain ends at its issuer's
key and only the issuer could extend it). Requests then wait for the notary's one writer,
which takes those waiting into one transaction under the log's lock, reads what is recorded
of their items and decides each request in arrival order, all of it or none of it:

- every hop already recorded identically, and the new ones after them: the new hops are
  appended in order (a chain that skips unrecorded hops is recorded hop by hop), and every hop
  gets its receipt once a checkpoint covers it;
- a different endorsement at a recorded hop: nothing of the request is recorded; the conflict
  is appended (once per distinct endorsement, and at most :data:`MAX_CONFLICTS_PER_HOP` of them
  per hop: L-22) and the answer is 409 with the prior record and the fraud proof. Walking each
  chain in hop order, the first hop that differs follows the same previous link as the
  recorded one and is signed by the same holder, so the two always make a fraud proof (L-05,
  L-06);
- a chain bringing more than :data:`ledger.limits.MAX_NEW_HOPS_PER_CHAIN` hops after its last
  recorded one: nothing of the request is recorded, 413 ``too-large`` (L-22).
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ledger.api.notary import NotarizeRequest
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, Endorsement, verify_league_chain
from ledger.errors import (
    ChainError,
    FraudDetected,
    NotStamped,
    SizeLimitError,
    StaleIssueError,
)
from ledger.events import ConflictRefused, EventBody, HopRecorded
from ledger.fraud import FraudProof
from ledger.keys import SigningKey
from ledger.leaf import Event, NewEvent
from ledger.limits import MAX_ENDORSEMENT_BATCH, MAX_NEW_HOPS_PER_CHAIN
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.wire import hash_text
from services.eventlog import EventStore
from services.kernel.writer import GroupWriter, Locked, run_group
from services.notary import tables
from services.notary.following import IssuerLink, check_notes, check_prints
from services.notary.projection import PROJECTION, NotaryChanges, NotaryProjection
from services.notary.receipts import Fresh
from services.notary.tables import ItemState, RecordedHop

#: Most hops decided in one transaction; requests beyond wait for the next one.
MAX_GROUP_HOPS = 4 * MAX_ENDORSEMENT_BATCH
#: Most hops waiting for the writer; a request beyond is refused as overloaded.
MAX_WAITING_HOPS = 4 * MAX_GROUP_HOPS
#: Most refused conflicts recorded at one hop (serial, issue, hop), whose endorsements are all
#: signed by the one key that held the item there (L-06): the first already convicts, so
#: more add nothing an auditor needs; beyond it a conflict is still refused with its fraud
#: proof, but no event is appended (L-22). It bounds what one holder can add to a
#: provenance, and to the log, by signing away one item over and over.
MAX_CONFLICTS_PER_HOP = 4


@dataclass(frozen=True, slots=True)
class Notary:
    """The notary of one league: its manifest, key, log and views of the mint and the
    treasury."""

    manifest: LeagueManifest
    key: SigningKey
    store: EventStore
    mint: IssuerLink
    treasury: IssuerLink


@dataclass(frozen=True, slots=True)
class Submitted:
    """A request whose chains all verified and whose certificates the mint stamped or the
    treasury issued; ``stale`` refuses it unless a hop of it conflicts with a recorded one
    (a conflict is fraud whatever the issue: its proof is the better answer)."""

    chains: tuple[Chain, ...]
    stale: StaleIssueError | None = None

    @property
    def hops(self) -> int:
        return sum(len(chain.endorsements) for chain in self.chains)


@dataclass(frozen=True, slots=True)
class Found:
    """One conflict: the recorded endorsement's event and the proof that convicts."""

    prior: int
    proof: FraudProof


class Conflicted(FraudDetected):
    """A request refused because a hop of it differs from the one recorded first."""

    def __init__(self, found: Sequence[Found]) -> None:
        first = found[0].proof
        more = f" (and {len(found) - 1} more conflicts)" if len(found) > 1 else ""
        super().__init__(
            f"refused: {first.describe()}; the first recorded wins{more}",
            tuple(f.proof for f in found),
        )
        self.found = tuple(found)


def verify_chains(
    manifest: LeagueManifest, chains: Sequence[Chain], known: Sequence[bool] = ()
) -> None:
    """Verify every chain offline under ``manifest`` (CPU-bound: a signature per link, and
    the certificate's unless ``known`` says the notary followed it already)."""
    for index, chain in enumerate(chains):
        if not chain.endorsements:
            raise ChainError(f"{chain.serial}: a chain of no endorsement has no hop to notarize")
        followed = index < len(known) and known[index]
        verify_league_chain(chain, manifest, certificate_known=followed)


def known_certificates(
    chains: Sequence[Chain], current: Mapping[str, tables.CurrentIssue]
) -> list[bool]:
    """Whether each chain's certificate is, byte for byte with its signature, the current
    issue the notary followed from its issuer's feed (``current``: read once per kind of
    certificate, and held against the chains again by ``following.check_current``).

    The follower applies a page of a feed only once it has verified it against the
    issuer's signed checkpoint, so such a certificate is the issuer's already: checking its
    signature again would prove nothing more. Any other certificate (not followed yet, of an
    older issue, or differing in a byte, its signature included) is verified in full, before
    anything else is asked of the feeds."""
    known = []
    for chain in chains:
        item = current.get(chain.serial)
        certificate = chain.certificate
        known.append(item is not None and item.issued(certificate.hash(), certificate.sig))
    return known


async def submit(notary: Notary, request: NotarizeRequest) -> Submitted:
    """Check a request's chains offline and against the issuers' feeds as followed."""
    chains = request.all_chains()
    submitted = Submitted(chains)
    if submitted.hops > MAX_ENDORSEMENT_BATCH:
        raise SizeLimitError(
            f"a request notarizes at most {MAX_ENDORSEMENT_BATCH} hops, not {submitted.hops}"
        )
    prints = [chain for chain in chains if isinstance(chain.certificate, PrintCertificate)]
    notes = [chain for chain in chains if not isinstance(chain.certificate, PrintCertificate)]
    store = notary.store
    printed = await tables.followed_prints(store, [c.serial for c in prints]) if prints else {}
    issued = await tables.current_notes(store, [c.serial for c in notes]) if notes else {}
    known = known_certificates(chains, {**printed, **issued})
    await asyncio.to_thread(verify_chains, notary.manifest, chains, known)
    stale = await check_notes(store, notary.treasury, notes, issued) if notes else None
    for chain in prints:
        if chain.serial == MISPRINT_SERIAL:
            raise NotStamped(
                f"{MISPRINT_SERIAL} stands outside the mint's runs (Book V.8): it is never "
                f"stamped, so it has no chain for the notary to record"
            )
    if prints:
        stale = await check_prints(store, notary.mint, prints, printed) or stale
    return Submitted(chains, stale) if stale is not None else submitted


@dataclass(frozen=True, slots=True)
class Recorded:
    """A request decided: the event of each of its hops, chain by chain, in hop order, and
    what the receipts of the hops its transaction recorded say (``receipts.Fresh``, by
    seq: filled once the events are appended, before the answer is given)."""

    seqs: tuple[int, ...]
    recorded: int
    fresh: Mapping[int, Fresh] = field(default_factory=dict)


@dataclass
class HopDecision:
    """One notarizing transaction's decision (the kernel's ``Decision``): each request
    decided in memory against what was read under the lock, its hops (or its conflicts)
    appended as events and projected."""

    next_seq: int
    items: dict[str, ItemState]
    events: list[NewEvent] = field(default_factory=list)
    changes: NotaryChanges = field(default_factory=NotaryChanges)
    #: Each hop recorded, by seq: serial, issue, hop, the endorsement's hash and the holder
    #: after it; its receipt's facts once its event is appended (:meth:`appended`).
    said: dict[int, tuple[str, int, int, str, str]] = field(default_factory=dict)
    fresh: dict[int, Fresh] = field(default_factory=dict)

    def appended(self, events: Sequence[Event]) -> None:
        """The group's events as appended: each recorded hop's leaf hash is known now."""
        for event in events:
            said = self.said.get(event.seq)
            if said is not None:
                self.fresh[event.seq] = Fresh(*said, event.leaf_hash)

    def decide(
        self, submitted: Submitted
    ) -> Recorded | Conflicted | StaleIssueError | SizeLimitError:
        found: list[Found] = []
        new: list[HopRecorded] = []
        too_long: list[tuple[str, int]] = []
        for chain in submitted.chains:
            item = self.items[chain.serial]
            fresh = 0
            for endorsement in chain.endorsements:
                recorded = item.hops.get((chain.issue, endorsement.hop))
                if recorded is None:
                    new.append(HopRecorded(issue=chain.issue, endorsement=endorsement))
                    fresh += 1
                elif not hmac.compare_digest(recorded.hash, endorsement.hash()):
                    found.append(self._refuse(item, chain.issue, recorded, endorsement))
                    break
            if fresh > MAX_NEW_HOPS_PER_CHAIN:
                too_long.append((chain.serial, fresh))
        if found:
            return Conflicted(found)
        if submitted.stale is not None:
            return submitted.stale
        if too_long:
            serial, fresh = too_long[0]
            return SizeLimitError(
                f"{serial} brings {fresh} hops after its last recorded one: a request records "
                f"at most {MAX_NEW_HOPS_PER_CHAIN} new hops of one chain (ruling L-22); "
                f"submit its first hops alone first (a chain's first hops are a chain too)"
            )
        for body in new:
            e = body.endorsement
            item = self.items[e.serial]
            seq = self._append(item, body)
            digest = e.hash()
            item.hops[(body.issue, e.hop)] = RecordedHop(e, digest, seq)
            self.said[seq] = (e.serial, body.issue, e.hop, hash_text(digest), e.to)
            NotaryProjection.recorded(self.changes, body, seq)
        return Recorded(
            tuple(
                self.items[chain.serial].hops[(chain.issue, e.hop)].seq
                for chain in submitted.chains
                for e in chain.endorsements
            ),
            len(new),
            self.fresh,
        )

    def _refuse(
        self, item: ItemState, issue: int, recorded: RecordedHop, endorsement: Endorsement
    ) -> Found:
        proof = FraudProof(first=recorded.endorsement, second=endorsement)
        key = (issue, endorsement.hop, endorsement.hash())
        at_hop = sum(1 for i, h, _ in item.conflicts if (i, h) == key[:2])
        if key not in item.conflicts and at_hop < MAX_CONFLICTS_PER_HOP:
            body = ConflictRefused(issue=issue, prior=recorded.seq, proof=proof)
            NotaryProjection.refused(self.changes, body, self._append(item, body))
            item.conflicts.add(key)
        return Found(recorded.seq, proof)

    def _append(self, item: ItemState, body: EventBody) -> int:
        seq = self.next_seq + len(self.events)
        self.events.append(body.new_event(expected_version=item.events))
        item.events += 1
        return seq


async def notarize_group(
    notary: Notary, group: Sequence[Submitted]
) -> list[Recorded | Conflicted | StaleIssueError | SizeLimitError]:
    """Decide ``group`` in one transaction (the kernel's :func:`run_group`): a record or a
    refusal per request, in order."""
    serials = {chain.serial for submitted in group for chain in submitted.chains}

    async def read(locked: Locked) -> dict[str, tables.ItemState]:
        return await tables.read_items(locked.tx, serials)

    def decide(
        locked: Locked, items: dict[str, tables.ItemState]
    ) -> tuple[HopDecision, list[Recorded | Conflicted | StaleIssueError | SizeLimitError]]:
        decision = HopDecision(locked.next_seq, items)
        return decision, [decision.decide(submitted) for submitted in group]

    return await run_group(
        notary.store, PROJECTION, read, decide, appended=lambda d, events: d.appended(events)
    )


class Writer:
    """The notary's one writer (the kernel's :class:`GroupWriter`): requests wait here and are
    decided in groups, in order."""

    def __init__(self, notary: Notary) -> None:
        self.notary = notary
        self.writer: GroupWriter[Submitted, Recorded] = GroupWriter(
            lambda group: notarize_group(notary, group),
            units=lambda submitted: submitted.hops,
            max_group=MAX_GROUP_HOPS,
            max_waiting=MAX_WAITING_HOPS,
            what="hops to be notarized",
        )

    async def record(self, submitted: Submitted) -> Recorded:
        """Wait for ``submitted``'s group to be decided; raise :class:`Conflicted` if it was
        refused."""
        return await self.writer.submit(submitted)

    async def close(self) -> None:
        """Let the writer finish the groups already waiting."""
        await self.writer.close()
