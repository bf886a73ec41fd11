"""The Misprint, exactly once (Book IV.6, V.8: "it exists exactly once, by award, and its
serial is 000").

The tables service asks for it with a :class:`~ledger.tables.MisprintAward` signed by the
tables key, for the first settling Balance at Chair VI or above in its log (which the mint,
holding no tables log, cannot judge: it awards what the tables key signs, and the auditor
checks the choice; docs/rulings.md L-41). Under the mint log's lock
the mint looks at the Misprint's stream (``print/CZ-TALLY-000``): empty, it signs the one
certificate (CZ-TALLY-000, a Tally of the base set in the finish ``misprint``, issue 1, to the
player) and appends it as a ``print-stamped`` event naming the table; already holding one,
the same table's award is answered the same certificate, and any other is refused 409
``misprint-gone``. Two awards racing are decided one after the other by the lock (and the
log's unique stream versions would refuse a second event anyway): exactly one Misprint.

It stands outside the census and every run: the mint's projection counts it in no run, no
owner's census and no allowance (``services.mint.projection``), the auditor checks it as a
mint-signed certificate outside the runs, and the notary records no chain of it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ledger.certificates import PrintCertificate
from ledger.errors import MisprintGone, VerificationError
from ledger.events import PrintStamped, print_stream
from ledger.keys import PublicKey
from ledger.print_runs import MISPRINT, MISPRINT_SERIAL, MISPRINT_SET, MISPRINT_TITLE
from ledger.tables import MisprintAward, wins_misprint
from services.mint.mint import Mint


class Awarded(BaseModel):
    """The Misprint's certificate, and the mint's event that awarded it."""

    model_config = ConfigDict(extra="forbid")

    certificate: PrintCertificate
    event: int = Field(description="The seq of its print-stamped event in the mint's log")
    table: str = Field(description="The witnessed table whose Balance won it")


async def award(mint: Mint, request: MisprintAward) -> Awarded:
    """Award the Misprint for ``request`` (see the module), or refuse."""
    manifest = mint.manifest
    if manifest.tables is None:
        raise VerificationError("this league's manifest names no tables key: no table awards")
    request.verify(PublicKey.from_text(manifest.tables))
    manifest.check_addressed("mint", "the award", request.league, request.manifest)
    if not wins_misprint(request.venue, "balance"):
        raise VerificationError(f"a Balance at {request.venue} does not win the Misprint (IV.6)")
    async with mint.store.transaction() as tx:
        next_seq = await tx.lock()
        row = await tx.fetchrow(
            "SELECT seq, body::text FROM mint.events WHERE stream = $1 AND stream_version = 1",
            print_stream(MISPRINT_SERIAL),
        )
        if row is not None:
            given = PrintStamped.from_wire(row[1])
            if given.request_id != request.table:
                raise MisprintGone(
                    f"{MISPRINT_SERIAL} exists exactly once and is gone: awarded at the mint's "
                    f"event {row[0]} for table {given.request_id} (Book IV.6, V.8)"
                )
            return Awarded(certificate=given.certificate, event=row[0], table=request.table)
        certificate = PrintCertificate.sign(
            mint.key,
            serial=MISPRINT_SERIAL,
            title=MISPRINT_TITLE,
            set=MISPRINT_SET,
            finish=MISPRINT,
            issued_to=request.player,
            issue=1,
            event=next_seq,
            manifest=manifest.hash_text(),
        )
        body = PrintStamped(certificate=certificate, request_id=request.table)
        await tx.append_batch([body.new_event(expected_version=0)])
    return Awarded(certificate=certificate, event=next_seq, table=request.table)
