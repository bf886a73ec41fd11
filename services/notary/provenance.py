"""``GET /provenance/{serial}``: one print's whole life (Book V.8), from the notary's tables.

Its stamp as followed from the mint's feed (with the mint's inclusion proof against the mint
checkpoint the notary verified last), every recorded hop with its receipt, every conflict
ever refused with its fraud proof, and the holder as far as the notary knows.
"""

from __future__ import annotations

from ledger.address import address_of
from ledger.api.notary import ConflictRecord, HopRecord, Provenance, StampRecord
from ledger.certificates import PrintCertificate
from ledger.encoding import encode_b64
from ledger.errors import SerialError, UnknownSerial
from ledger.fraud import FraudProof
from ledger.keys import PublicKey
from ledger.print_runs import MISPRINT_SERIAL, parse_serial
from services.notary import tables
from services.notary.notarizing import Notary
from services.notary.receipts import Receipts

OUTSIDE_RUNS = (
    f"{MISPRINT_SERIAL} stands outside the mint's runs (Book V.8): it is deliberately absent "
    f"from the mint ledger and exists exactly once, by award, so the mint never stamped it "
    f"and the notary records no hop of it"
)


async def provenance(notary: Notary, receipts: Receipts, serial: str) -> Provenance:
    """The whole life of ``serial``; :class:`UnknownSerial` for one nobody issued."""
    if serial == MISPRINT_SERIAL:
        return Provenance(
            serial=serial, standing="outside-runs", remark=OUTSIDE_RUNS, stamp=None, hops=[],
            conflicts=[], holder=None, holder_address=None,
        )
    try:
        parse_serial(serial, notary.manifest.print_runs)
    except SerialError as exc:
        raise UnknownSerial(f"no print has the serial {serial!r}: {exc.diagnostics()}") from None
    followed = await tables.followed_prints(notary.store, [serial])
    if serial not in followed:
        await notary.mint.catch_up()
        pending = await notary.mint.stamped_since(serial)
        if pending is not None:
            await notary.mint.catch_up(through=pending)
        followed = await tables.followed_prints(notary.store, [serial])
    printed = followed.get(serial)
    if printed is None:
        raise UnknownSerial(f"{serial} is in the league's runs but the mint has not stamped it")
    checkpoint, proof = await notary.mint.stamp_proof(printed)
    certificate = PrintCertificate.from_wire(printed.certificate)
    hops = await tables.hops_of(notary.store, serial)
    receipted = await receipts.of(hop.seq for hop in hops) if hops else {}
    holder = hops[-1].endorsement.to if hops else certificate.issued_to
    return Provenance(
        serial=serial,
        standing="stamped",
        remark=f"stamped by the mint at event {printed.mint_seq} of its log; "
        f"{len(hops)} hops recorded",
        stamp=StampRecord(
            certificate=certificate,
            index=printed.mint_seq,
            leaf_hash=encode_b64(printed.leaf_hash),
            checkpoint=str(checkpoint),
            proof=proof,
        ),
        hops=[HopRecord(endorsement=hop.endorsement, receipt=receipted[hop.seq]) for hop in hops],
        conflicts=[
            ConflictRecord(index=seq, hop=proof.second.hop, proof=proof)
            for seq, proof in (
                (seq, FraudProof.from_wire(text))
                for seq, text in await tables.conflicts_of(notary.store, serial)
            )
        ],
        holder=holder,
        holder_address=address_of(PublicKey.from_text(holder)),
    )
