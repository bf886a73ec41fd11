"""The independent auditor's core (docs/operations.md "Auditing a running league"): every service's
log checked from its feed.

Pure (no IO): the caller (``league audit``) downloads, this package judges. Given the league
manifest (its root signature checked here), the checkpoints each service serves, those kept
from a previous audit, each service's signed feed page by page, the notary's holders pages
and the witnesses' evidence, :class:`Auditor` checks:

- every log: seqs dense from 0, every event's leaf hash and signature, the Merkle root
  recomputed leaf by leaf (the one feed verifier, :mod:`ledger.feed`) equal to every checkpoint's
  root at its size, every checkpoint signed by the service's key under the origin
  ``<league>/<service>``; a checkpoint kept from the previous run must be a prefix of the log
  as served now (its root at its size: a rewritten or restored log fails here);
- cosignatures: every line on a served checkpoint whose key id is a known witness's (each
  other service of the manifest, named by its own log's origin, tlog-cosignature type 0x04)
  must verify; the report says which witness cosigned what size; any evidence a witness
  keeps (``GET /<service>/evidence``) is a violation of the log it accuses;
- the mint: every event a ``print-stamped`` whose certificate is mint-signed, of this league's
  manifest and runs, names its own event; every serial unique; each run's numbers exactly
  first..first+n-1 (no run ever exceeded);
- the notary: every recorded hop a valid next link of its print's chain from the certificate
  the mint stamped (the checks of :func:`ledger.endorsements.verify_chain`, link by link);
  one hop recorded per (serial, issue, hop), so the first recorded is the winner; every refused
  conflict a valid fraud proof whose first endorsement is the recorded winner it names; and
  every holder the notary's projection serves (``GET /notary/holders``) equal to the one
  derived from the events, at the log size the page was read at; a note's hops are checked
  on the chain of the issue the treasury made out (issue by issue);
- the treasury (when served): every ``note-issued`` certificate treasury-signed, of this
  manifest and its note set, naming its own event; a note's issues dense at the stream
  versions the service writes (issue n is version 2n-1, its return 2n), never issued while
  out; every ``note-returned`` of the issue out, endorsed to the treasury's key and matching
  the notary's hop it names; the supply (reserve + out per denomination) the note set after
  every event; the faucet's ``faucet_marks_per_day`` per key per UTC day of the events'
  time (L-12); each purchase's saga in order, paid as it says, its print the mint's stamp to
  the buyer, closed with exact change, a full refund or nothing moved (L-18). An event type
  not in :data:`ledger.events.TREASURY_EVENTS` fails naming the type;
- finish upgrades (L-20): every ``print-returned`` and ``print-reissued`` names a purchase
  opened with that upgrade (none, or no treasury log, fails), reissued only to its buyer; every
  return (a note's or a print's) matched to the notary's hop it names, one return per hop,
  unless that hop lies past the notary's audited log (not matched this run, never counted
  notarized); a refunded upgrade hands its print back.

Checking a page splits in two. :func:`check_page` is stateless (a page's JSON text in, the
facts the stateful checks need out: leaf hashes verified, signatures verified, bodies parsed),
so a caller may run it in worker processes, one page each; :meth:`Auditor.add_checked` takes
its results in seq order and does the rest. :meth:`Auditor.add` does both in this process.

The first violation raises :class:`AuditFailure` naming the service and the seq. Feed the mint,
then the treasury, then the notary (a hop refers to a stamp or a note's issue; a return names
a notary hop, matched when the notary's log comes). Memory is bounded per print, note issue,
hop, open purchase and faucet day, never per page: events are judged as they come and dropped.

The package: :mod:`ledger.audit.facts` (the stateless page checks, :func:`check_page`),
:mod:`ledger.audit.state` (each log and what the checkers share), one checker per service
(:mod:`ledger.audit.mint`, :mod:`ledger.audit.treasury`, :mod:`ledger.audit.notary`),
:mod:`ledger.audit.report` (what was verified) and :mod:`ledger.audit.auditor` (the façade,
:class:`Auditor`).
"""

from ledger.audit.auditor import Auditor
from ledger.audit.facts import (
    AUDITED_SERVICES,
    WITNESSES,
    AuditFailure,
    CheckedPage,
    PageContext,
    check_page,
)
from ledger.audit.report import AuditReport, Cosigned, MintCensus, ServiceReport, TreasuryFigures

__all__ = [
    "AUDITED_SERVICES",
    "WITNESSES",
    "AuditFailure",
    "AuditReport",
    "Auditor",
    "CheckedPage",
    "Cosigned",
    "MintCensus",
    "PageContext",
    "ServiceReport",
    "TreasuryFigures",
    "check_page",
]
