"""Audit the mint from its log: the independent auditor's mint checker run over the store, and
a projection that agrees.

The event log is the truth and ``verify_all`` (services.eventlog) proves it unaltered; this
checks the rest with the auditor's own mint checker (:class:`ledger.audit.Auditor`, fed the
mint's events as its feed serves them): every ``print-stamped`` (and ``print-reissued``, L-20)
holds a mint-signed certificate of this league's runs that names its own event index, serials
unique, each run's numbers dense from its first; then each run's counter in the tables is the
number the log stamped from it, and the projection tables are what folding the log through the
mint's one ``project`` gives (``services.kernel.projections.rebuild``, rolled back).
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.api.logs import FeedEvent
from ledger.audit import AuditFailure, Auditor
from ledger.errors import VerificationError
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
    auditor = Auditor(mint.manifest)
    after = -1
    try:
        while page := await mint.store.read(after, PAGE):
            auditor.add("mint", [FeedEvent.of(event) for event in page])
            after = page[-1].seq
        census = auditor.mint_census()
    except AuditFailure as exc:
        raise CensusMismatch(exc.diagnostics()) from None
    stored_runs = await tables.runs(mint.store)
    for run in stored_runs:
        drawn = census.stamped.get((run.title, run.finish), 0)
        if drawn != run.stamped:
            raise CensusMismatch(
                f"the {run.finish} run of {run.title} counts {run.stamped} stamped from number "
                f"{run.first_number}, but the log holds {drawn} of its serials"
            )
    report = await rebuild(mint.store, PROJECTION, commit=False)
    if not report.agrees:
        raise CensusMismatch(
            "the projection disagrees with the log: " + report.differences[0].describe()
        )
    return CensusAudit(
        events=auditor.size("mint"),
        prints=census.prints,
        runs=len(stored_runs),
        owners=census.owners,
        rows=report.rows,
    )
