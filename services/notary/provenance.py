"""``GET /provenance/{serial}``: one certificate's whole life (Book V.8), from the notary's tables.

A print: its stamp as followed from the mint's feed (with the mint's inclusion proof against
the mint checkpoint the notary verified last), and each return to the mint and issue again
after it (L-20). A note: every issue as followed from the
treasury's feed (each with the treasury's inclusion proof) and every return. Either: every
recorded hop with its receipt, every conflict ever refused with its fraud proof, and the
holder as far as the notary knows (the last hop of the current issue, else its certificate's
``issued_to``).

Tables are read from ``reads``, a read view of the notary's log (a replica's when the
operator gives one): a serial the view does not know yet is looked up on the primary after
catching up there, so a lagging replica never answers "unknown" where the primary would not.
Receipts come from :class:`Receipts` (on the primary: a missing one is made there).
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.words import plural
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
from ledger.encoding import encode_b64
from ledger.errors import SerialError, UnknownSerial
from ledger.fraud import FraudProof
from ledger.keys import PublicKey
from ledger.note_set import parse_note_serial
from ledger.print_runs import MISPRINT_SERIAL, parse_serial
from services.eventlog import EventStore
from services.notary import tables
from services.notary.following import IssuerLink
from services.notary.notarizing import Notary
from services.notary.receipts import Receipts

OUTSIDE_RUNS = (
    f"{MISPRINT_SERIAL} stands outside the mint's runs (Book V.8): it is deliberately absent "
    f"from the mint ledger and exists exactly once, by award, so the mint never stamped it "
    f"and the notary records no hop of it"
)


async def provenance(
    notary: Notary, receipts: Receipts, serial: str, reads: EventStore
) -> Provenance:
    """The whole life of ``serial``; :class:`UnknownSerial` for one nobody issued."""
    if serial == MISPRINT_SERIAL:
        return Provenance(
            serial=serial, standing="outside-runs", remark=OUTSIDE_RUNS, stamp=None, hops=[],
            conflicts=[], holder=None, holder_address=None,
        )
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
    # A print's life may go on after its stamp (returned for an upgrade, issued again: L-20):
    # follow the mint through its latest event of the print first, as for a note.
    await _catch_up(notary.mint, serial)
    issues = await tables.print_issues(reads, serial)
    if not issues:
        reads = notary.store
        issues = await tables.print_issues(reads, serial)
    if not issues:
        raise UnknownSerial(f"{serial} is in the league's runs but the mint has not stamped it")
    printed, current = issues[0], issues[-1]
    checkpoint, proof = await notary.mint.inclusion(printed.mint_seq, printed.leaf_hash)
    certificate = PrintCertificate.from_wire(printed.certificate)
    hops = await tables.hops_of(reads, serial)
    returns = await tables.print_returns(reads, serial)
    # A print returned for an upgrade is the mint's; issued again, its current issue's (L-20).
    holder = (
        notary.manifest.mint
        if current.returned is not None
        else _holder(
            hops, current.issue, PrintCertificate.from_wire(current.certificate).issued_to
        )
    )
    again = (
        f"; returned to the mint {len(returns)} times, issue {current.issue} is the latest"
        if returns else ""
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
            proof=proof,
        ),
        issues=[
            await _issue_record(notary.mint, PrintCertificate.from_wire(later.certificate),
                                later.mint_seq, later.leaf_hash)
            for later in issues[1:]
        ],
        returns=_return_records(returns),
        hops=await _hop_records(receipts, hops),
        conflicts=await _conflicts(reads, serial),
        holder=holder,
        holder_address=address_of(PublicKey.from_text(holder)),
    )


def _return_records(returns: Sequence[tables.FollowedReturn]) -> list[ReturnRecord]:
    return [
        ReturnRecord(issue=r.issue, index=r.seq, notarized=r.notarized,
                     purchase_id=r.purchase_id)
        for r in returns
    ]


async def _issue_record(
    link: IssuerLink, certificate: NoteCertificate | PrintCertificate, seq: int, leaf: bytes
) -> IssueRecord:
    """One issue with its issuer's inclusion proof against the checkpoint followed last."""
    checkpoint, proof = await link.inclusion(seq, leaf)
    return IssueRecord(
        certificate=certificate, index=seq, leaf_hash=encode_b64(leaf),
        checkpoint=str(checkpoint), proof=proof,
    )


async def _note(
    notary: Notary, receipts: Receipts, serial: str, reads: EventStore
) -> Provenance:
    """A note's life: its issues, hops, conflicts and returns (Book V.5, V.8)."""
    # A note's life goes on after its first issue (returns, issues again): always follow the
    # treasury through its latest event of the note first.
    await _catch_up(notary.treasury, serial)
    issues = await tables.note_issues(reads, serial)
    if not issues:
        reads = notary.store
        issues = await tables.note_issues(reads, serial)
    if not issues:
        raise UnknownSerial(
            f"{serial} is in the league's note set but the treasury has never issued it: "
            f"it has always been in the reserve"
        )
    records = [
        await _issue_record(notary.treasury, NoteCertificate.from_wire(issued.certificate),
                            issued.treasury_seq, issued.leaf_hash)
        for issued in issues
    ]
    returns = await tables.note_returns(reads, serial)
    current = records[-1].certificate
    in_reserve = bool(returns) and returns[-1].issue == current.issue
    hops = await tables.hops_of(reads, serial)
    holder = (
        notary.manifest.treasury
        if in_reserve
        else _holder(hops, current.issue, current.issued_to)
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


async def _catch_up(link: IssuerLink, serial: str) -> None:
    """Follow ``link``'s issuer now, and on through an event of ``serial`` it has logged but
    not yet checkpointed."""
    await link.catch_up()
    pending = await link.issued_since(serial)
    if pending is not None:
        await link.catch_up(through=pending)


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
