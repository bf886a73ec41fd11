"""``GET /provenance/{serial}``: one certificate's whole life (Book V.8), from the notary's tables.

A print: its stamp as followed from the mint's feed (with the mint's inclusion proof against
the mint checkpoint the notary verified last), and each return to the mint and issue again
after it (L-20). A note: every issue as followed from the
treasury's feed (each with the treasury's inclusion proof) and every return. Either: every
recorded hop with its receipt, every conflict ever refused with its fraud proof, and the
holder as far as the notary knows (the last hop of the current issue, else its certificate's
``issued_to``).

**A read only reads** when the item is settled in a holder's hands: its issues, returns and
hops are read from the notary's tables as followed and recorded, and each issue's inclusion
proof is built from the issuer's Merkle tree the notary kept while following
(:meth:`IssuerLink.inclusions`), against the issuer checkpoint it verified and applied
through last, quoted in the answer: no catch-up, no call to the issuer. Nothing the issuer
does can change such an item's life before the notary records a hop of it back to the issuer
(a return needs one), and the notary follows each checkpoint as it is signed
(services/kernel/follower.py). An item that is unknown to the notary, or back with its
issuer (returned, or its last hop made to the issuer, a return on its way), whose next issue
may come at any moment, is answered as before: after following the issuer through its
latest event of the item (so a print stamped a moment ago is known, and a note just paid in
is in the reserve).

Tables are read from ``reads``, a read view of the notary's log (a replica's when the
operator gives one): a serial the view does not know yet is looked up on the primary after
catching up there, so a lagging replica never answers "unknown" where the primary would not.
Receipts come from :class:`Receipts` (on the primary: a missing one is made there).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ledger.address import address_of
from ledger.api.notary import (
    ConflictRecord,
    HopRecord,
    IssueRecord,
    Provenance,
    ReturnRecord,
    StampRecord,
)
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import Checkpoint
from ledger.encoding import encode_b64
from ledger.errors import SerialError, UnknownSerial
from ledger.fraud import FraudProof
from ledger.keys import PublicKey
from ledger.note_set import parse_note_serial
from ledger.print_runs import MISPRINT_SERIAL, parse_serial
from ledger.words import plural
from services.eventlog import EventStore
from services.notary import tables
from services.notary.following import IssuerLink
from services.notary.notarizing import Notary
from services.notary.receipts import Receipts

#: An issue as followed: a print's (stamped or issued again) or a note's.
Issue = TypeVar("Issue", tables.FollowedPrint, tables.FollowedNote)

OUTSIDE_RUNS = (
    f"{MISPRINT_SERIAL} stands outside the mint's runs (Book V.8): it is deliberately absent "
    f"from the mint ledger and exists exactly once, by award to the first witnessed Balance at "
    f"Chair VI or above (docs/rulings.md L-24); it has not been awarded yet, and the notary "
    f"records no hop of it"
)


async def provenance(
    notary: Notary, receipts: Receipts, serial: str, reads: EventStore
) -> Provenance:
    """The whole life of ``serial``; :class:`UnknownSerial` for one nobody issued."""
    if serial == MISPRINT_SERIAL:
        return await _misprint(notary, reads)
    try:
        parse_note_serial(serial, notary.manifest.note_set)
    except SerialError:
        pass
    else:
        return await _note(notary, receipts, serial, reads)
    try:
        parse_serial(serial, notary.manifest.print_runs)
    except SerialError as exc:
        raise UnknownSerial(
            f"no print or note has the serial {serial!r}: {exc.diagnostics()}"
        ) from None
    # A print's life may go on after its stamp (returned for an upgrade, issued again: L-20).
    life = await _life(
        notary.mint,
        serial,
        reads,
        notary.store,
        tables.print_issues,
        tables.print_returns,
        notary.manifest.mint,
    )
    if not life.issues:
        raise UnknownSerial(f"{serial} is in the league's runs but the mint has not stamped it")
    issues, reads, returns, hops = life.issues, life.reads, life.returns, life.hops
    printed, current = issues[0], issues[-1]
    checkpoint, proofs = await notary.mint.inclusions(
        [(issued.mint_seq, issued.leaf_hash) for issued in issues], reads
    )
    certificate = PrintCertificate.from_wire(printed.certificate)
    # A print returned for an upgrade is the mint's; issued again, its current issue's (L-20).
    holder = (
        notary.manifest.mint
        if current.returned is not None
        else _holder(hops, current.issue, PrintCertificate.from_wire(current.certificate).issued_to)
    )
    again = (
        f"; returned to the mint {len(returns)} times, issue {current.issue} is the latest"
        if returns
        else ""
    )
    return Provenance(
        serial=serial,
        standing="stamped",
        remark=f"stamped by the mint at event {printed.mint_seq} of its log; "
        f"{plural(len(hops), 'hop')} recorded{again}",
        stamp=StampRecord(
            certificate=certificate,
            index=printed.mint_seq,
            leaf_hash=encode_b64(printed.leaf_hash),
            checkpoint=str(checkpoint),
            proof=proofs[0],
        ),
        issues=[
            _issue_record(
                PrintCertificate.from_wire(later.certificate),
                later.mint_seq,
                later.leaf_hash,
                checkpoint,
                proof,
            )
            for later, proof in zip(issues[1:], proofs[1:], strict=True)
        ],
        returns=_return_records(returns),
        hops=await _hop_records(receipts, hops),
        conflicts=await _conflicts(reads, serial),
        holder=holder,
        holder_address=address_of(PublicKey.from_text(holder)),
    )


async def _misprint(notary: Notary, reads: EventStore) -> Provenance:
    """The Misprint's account: its award, once the mint's feed holds it (the one
    ``print-stamped`` event of ``CZ-TALLY-000``, naming the table that won it, with the mint's
    inclusion proof), else that it has not been awarded yet (L-24)."""
    serial = MISPRINT_SERIAL
    life = await _life(
        notary.mint,
        serial,
        reads,
        notary.store,
        tables.print_issues,
        tables.print_returns,
        notary.manifest.mint,
    )
    if not life.issues:
        return Provenance(
            serial=serial,
            standing="outside-runs",
            remark=OUTSIDE_RUNS,
            stamp=None,
            hops=[],
            conflicts=[],
            holder=None,
            holder_address=None,
        )
    awarded = life.issues[0]
    checkpoint, proofs = await notary.mint.inclusions(
        [(awarded.mint_seq, awarded.leaf_hash)], life.reads
    )
    certificate = PrintCertificate.from_wire(awarded.certificate)
    return Provenance(
        serial=serial,
        standing="outside-runs",
        remark=f"{serial} stands outside the mint's runs (Book V.8) and exists exactly once: the "
        f"mint awarded it at event {awarded.mint_seq} of its log to the first witnessed Balance "
        "at Chair VI or above, the table its event names (docs/rulings.md L-24); the notary "
        "records no hop of it",
        stamp=StampRecord(
            certificate=certificate,
            index=awarded.mint_seq,
            leaf_hash=encode_b64(awarded.leaf_hash),
            checkpoint=str(checkpoint),
            proof=proofs[0],
        ),
        hops=[],
        conflicts=[],
        holder=certificate.issued_to,
        holder_address=address_of(PublicKey.from_text(certificate.issued_to)),
    )


@dataclass(frozen=True, slots=True)
class Life(Generic[Issue]):
    """An item's issues, returns and hops as the notary followed and recorded them, and the
    view they were read from."""

    issues: list[Issue]
    returns: list[tables.FollowedReturn]
    hops: list[tuple[int, tables.RecordedHop]]
    reads: EventStore


async def _life(
    link: IssuerLink,
    serial: str,
    reads: EventStore,
    primary: EventStore,
    issues_of: Callable[[EventStore, str], Awaitable[list[Issue]]],
    returns_of: Callable[[EventStore, str], Awaitable[list[tables.FollowedReturn]]],
    issuer: str,
) -> Life[Issue]:
    """``serial``'s life as followed: read as it is when the item is settled in a holder's
    hands; else (unknown here, or back with ``issuer``: see the module's docstring) after
    following ``link``'s issuer through its latest event of the item, and from ``primary``
    when ``reads`` does not know it then (no issue: never issued)."""
    life = await _read_life(serial, reads, issues_of, returns_of)
    if life.issues and not _with_issuer(life, issuer):
        return life
    known = bool(life.issues)
    await link.catch_up()
    life = await _read_life(serial, reads, issues_of, returns_of)
    if known or not life.issues or _with_issuer(life, issuer):
        # On through an event of the item the issuer has logged, not yet checkpointed (an
        # item just followed and settled has none: a return needs a hop the notary records).
        pending = await link.issued_since(serial)
        if pending is not None:
            await link.catch_up(through=pending)
            life = await _read_life(serial, reads, issues_of, returns_of)
    if not life.issues and reads is not primary:
        life = await _read_life(serial, primary, issues_of, returns_of)
    return life


async def _read_life(
    serial: str,
    reads: EventStore,
    issues_of: Callable[[EventStore, str], Awaitable[list[Issue]]],
    returns_of: Callable[[EventStore, str], Awaitable[list[tables.FollowedReturn]]],
) -> Life[Issue]:
    issues = await issues_of(reads, serial)
    if not issues:
        return Life(issues, [], [], reads)
    return Life(issues, await returns_of(reads, serial), await tables.hops_of(reads, serial), reads)


def _with_issuer(life: Life[Issue], issuer: str) -> bool:
    """Whether the item's current issue is back with its issuer (returned), or on its way
    (its last recorded hop made to the issuer's key)."""
    current = life.issues[-1].issue
    if life.returns and life.returns[-1].issue == current:
        return True
    last = [hop for of, hop in life.hops if of == current]
    return bool(last) and last[-1].endorsement.to == issuer


def _return_records(returns: Sequence[tables.FollowedReturn]) -> list[ReturnRecord]:
    return [
        ReturnRecord(issue=r.issue, index=r.seq, notarized=r.notarized, purchase_id=r.purchase_id)
        for r in returns
    ]


def _issue_record(
    certificate: NoteCertificate | PrintCertificate,
    seq: int,
    leaf: bytes,
    checkpoint: Checkpoint,
    proof: list[str],
) -> IssueRecord:
    """One issue with its issuer's inclusion proof against ``checkpoint``."""
    return IssueRecord(
        certificate=certificate,
        index=seq,
        leaf_hash=encode_b64(leaf),
        checkpoint=str(checkpoint),
        proof=proof,
    )


async def _note(notary: Notary, receipts: Receipts, serial: str, reads: EventStore) -> Provenance:
    """A note's life: its issues, hops, conflicts and returns (Book V.5, V.8)."""
    # A note's life goes on after its first issue (returns, issues again).
    life = await _life(
        notary.treasury,
        serial,
        reads,
        notary.store,
        tables.note_issues,
        tables.note_returns,
        notary.manifest.treasury,
    )
    if not life.issues:
        raise UnknownSerial(
            f"{serial} is in the league's note set but the treasury has never issued it: "
            f"it has always been in the reserve"
        )
    issues, reads, returns, hops = life.issues, life.reads, life.returns, life.hops
    checkpoint, proofs = await notary.treasury.inclusions(
        [(issued.treasury_seq, issued.leaf_hash) for issued in issues], reads
    )
    records = [
        _issue_record(
            NoteCertificate.from_wire(issued.certificate),
            issued.treasury_seq,
            issued.leaf_hash,
            checkpoint,
            proof,
        )
        for issued, proof in zip(issues, proofs, strict=True)
    ]
    current = records[-1].certificate
    in_reserve = bool(returns) and returns[-1].issue == current.issue
    holder = (
        notary.manifest.treasury if in_reserve else _holder(hops, current.issue, current.issued_to)
    )
    return Provenance(
        serial=serial,
        standing="in-reserve" if in_reserve else "issued",
        remark=f"issued {plural(len(issues), 'time')} by the treasury, returned "
        f"{plural(len(returns), 'time')}; {plural(len(hops), 'hop')} recorded"
        + ("; back in the reserve" if in_reserve else f"; issue {current.issue} is current"),
        stamp=None,
        issues=records,
        returns=_return_records(returns),
        hops=await _hop_records(receipts, hops),
        conflicts=await _conflicts(reads, serial),
        holder=holder,
        holder_address=address_of(PublicKey.from_text(holder)),
    )


def _holder(hops: Sequence[tuple[int, tables.RecordedHop]], issue: int, issued_to: str) -> str:
    """The last ``to`` of the current issue's chain, else the certificate's ``issued_to``."""
    current = [hop for of, hop in hops if of == issue]
    return current[-1].endorsement.to if current else issued_to


async def _hop_records(
    receipts: Receipts, hops: Sequence[tuple[int, tables.RecordedHop]]
) -> list[HopRecord]:
    receipted = await receipts.of(hop.seq for _, hop in hops) if hops else {}
    return [HopRecord(endorsement=hop.endorsement, receipt=receipted[hop.seq]) for _, hop in hops]


async def _conflicts(reads: EventStore, serial: str) -> list[ConflictRecord]:
    found = []
    for seq, issue, text in await tables.conflicts_of(reads, serial):
        proof = FraudProof.from_wire(text)
        found.append(ConflictRecord(index=seq, issue=issue, hop=proof.second.hop, proof=proof))
    return found
