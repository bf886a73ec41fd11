"""Recount the census from the log: every projection must be what the events say.

The event log is the truth and ``verify_all`` (services.eventlog) proves it unaltered; this
checks the rest: every stamped event holds a mint-signed certificate of this league's runs
naming its own event index, each run's serials are exactly first..first+stamped-1 with none
twice, and the run counters and owned counts equal what the events add up to.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from ledger.certificates import PrintCertificate
from ledger.errors import LedgerError, VerificationError
from ledger.keys import PublicKey
from ledger.print_runs import parse_serial
from services.mint import projections
from services.mint.stamping import STAMPED, Mint

#: Events read per page while recounting.
PAGE = 5000


class CensusMismatch(VerificationError):
    """A projection (run counters, owned counts) that the mint's own log contradicts."""

    problem_type = "census-mismatch"
    http_status = 500


@dataclass(frozen=True, slots=True)
class CensusAudit:
    """What the recount covered, when everything agreed."""

    events: int
    prints: int
    runs: int
    owners: int


async def audit_census(mint: Mint) -> CensusAudit:
    """Recount from the log and compare; raise :class:`CensusMismatch` at the first fault."""
    key = PublicKey.from_text(mint.manifest.mint)
    numbers: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    owned: Counter[tuple[str, str, str]] = Counter()
    after, events = -1, 0
    while page := await mint.log.read(after, PAGE):
        for event in page:
            events += 1
            if event.type != STAMPED:
                raise CensusMismatch(f"event {event.seq} has the unknown type {event.type!r}")
            certificate = _certificate(event.seq, event.body, key, mint)
            number = parse_serial(certificate.serial, mint.manifest.print_runs).number
            numbers[(certificate.title, certificate.finish)].append(number)
            owned[(certificate.issued_to, certificate.title, certificate.finish)] += 1
        after = page[-1].seq
    stored_runs = await projections.runs(mint.log.pool)
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
    stored_owned = await projections.all_owned(mint.log.pool)
    if stored_owned != owned:
        differing = sorted(set(stored_owned.items()) ^ set(owned.items()))[0]
        raise CensusMismatch(f"owned counts disagree with the log, first at {differing}")
    return CensusAudit(
        events=events,
        prints=sum(owned.values()),
        runs=len(stored_runs),
        owners=len({owner for owner, _, _ in owned}),
    )


def _certificate(seq: int, body: dict[str, object], key: PublicKey, mint: Mint) -> PrintCertificate:
    try:
        certificate = PrintCertificate.from_wire(body["certificate"])  # type: ignore[arg-type]
        certificate.verify(key)
        mint.manifest.check_certificate(certificate)
    except (LedgerError, KeyError) as exc:
        reason = exc.diagnostics() if isinstance(exc, LedgerError) else "no certificate"
        raise CensusMismatch(f"event {seq}: {reason}") from None
    if certificate.event != seq:
        raise CensusMismatch(f"event {seq} holds a certificate naming event {certificate.event}")
    return certificate
