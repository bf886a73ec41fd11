"""Audit the mint from its log: certificates, serials, and a projection that agrees.

The event log is the truth and ``verify_all`` (services.eventlog) proves it unaltered; this
checks the rest: every ``print-stamped`` (and ``print-reissued``, L-20) holds a mint-signed
certificate of this league's runs that names its own event index, each run's serials are exactly
first..first+stamped-1 with none twice, and the projection tables are what folding the log
through the mint's one ``project`` gives (``services.kernel.projections.rebuild``, rolled
back).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ledger.errors import LedgerError, VerificationError
from ledger.events import MINT_EVENTS, PrintReissued, PrintStamped, parse_event
from ledger.keys import PublicKey
from ledger.print_runs import parse_serial
from services.kernel.projections import rebuild
from services.mint import tables
from services.mint.mint import Mint
from services.mint.projection import PROJECTION

#: Events read per page while checking certificates.
PAGE = 5000


class CensusMismatch(VerificationError):
    """A projection (run counters, owned counts) that the mint's own log contradicts."""


@dataclass(frozen=True, slots=True)
class CensusAudit:
    """What the audit covered, when everything agreed."""

    events: int
    prints: int
    runs: int
    owners: int
    rows: int


async def audit_census(mint: Mint) -> CensusAudit:
    """Check every certificate and serial, then the projection against a fold of the log;
    raise :class:`CensusMismatch` at the first fault."""
    key = PublicKey.from_text(mint.manifest.mint)
    numbers: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    owners: set[str] = set()
    after, events = -1, 0
    while page := await mint.store.read(after, PAGE):
        for event in page:
            events += 1
            try:
                body = parse_event(event, MINT_EVENTS)
                if not isinstance(body, PrintStamped | PrintReissued):
                    continue  # a print returned (L-20): its run's counts do not move
                certificate = body.certificate
                certificate.verify(key)
                mint.manifest.check_certificate(certificate)
            except LedgerError as exc:
                raise CensusMismatch(f"event {event.seq}: {exc.diagnostics()}") from None
            if certificate.event != event.seq:
                raise CensusMismatch(
                    f"event {event.seq} holds a certificate naming event {certificate.event}"
                )
            if isinstance(body, PrintReissued):
                continue  # issued again, not stamped again: not a number drawn from its run
            number = parse_serial(certificate.serial, mint.manifest.print_runs).number
            numbers[(certificate.title, certificate.finish)].append(number)
            owners.add(certificate.issued_to)
        after = page[-1].seq
    stored_runs = await tables.runs(mint.store)
    for run in stored_runs:
        drawn = sorted(numbers.get((run.title, run.finish), []))
        expected = list(range(run.first_number, run.first_number + run.stamped))
        if drawn != expected:
            raise CensusMismatch(
                f"the {run.finish} run of {run.title} counts {run.stamped} stamped from number "
                f"{run.first_number}, but the log holds {len(drawn)} of its serials "
                f"({len(set(drawn))} distinct, from {drawn[0] if drawn else '-'} to "
                f"{drawn[-1] if drawn else '-'})"
            )
    report = await rebuild(mint.store, PROJECTION, commit=False)
    if not report.agrees:
        raise CensusMismatch(
            "the projection disagrees with the log: " + report.differences[0].describe()
        )
    return CensusAudit(
        events=events,
        prints=sum(len(n) for n in numbers.values()),
        runs=len(stored_runs),
        owners=len(owners),
        rows=report.rows,
    )
