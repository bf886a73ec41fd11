"""The auditor's façade: :class:`Auditor`, one object fed checkpoints, feed pages, holders pages
and evidence, which dispatches each fact to the checker of its service and ends with the report."""

from __future__ import annotations

from collections.abc import Iterable

from ledger.api.logs import Feed, FeedEvent
from ledger.api.witness import EvidenceList

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's
from ledger.audit.facts import (
    AUDITED_SERVICES,
    WITNESSES,
    AuditFailure,
    CheckedPage,
    Hop,
    Issued,
    PageContext,
    Refused,
    Returned,
    Stamped,
    _public,
    check_page,
    verifications,
)
from ledger.audit.mint import MintChecker
from ledger.audit.notary import NotaryChecker
from ledger.audit.report import AuditReport
from ledger.audit.reward_facts import Rewarded
from ledger.audit.treasury import TreasuryChecker
from ledger.checkpoint import Checkpoint
from ledger.errors import LedgerError

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


class Auditor(MintChecker, TreasuryChecker, NotaryChecker):
    """Feed it checkpoints (and the notary's holders pages), then each service's events page
    by page; :meth:`report` ends it.

    ``root`` is the pinned league root key (``None`` on first use: the manifest's own)."""

    def context(self, service: str) -> PageContext:
        """What :func:`check_page` needs to check a page of ``service``'s feed."""
        self._log(service)
        return PageContext(service, self._manifest_text)

    def checkpoint(self, service: str, checkpoint: Checkpoint, *, kept: bool = False) -> None:
        """A checkpoint ``service`` serves (or, ``kept``, one kept from the previous audit):
        verified now with its witnesses' cosignatures, matched against the recomputed root
        when the log reaches its size."""
        log = self._log(service)
        before = len(log.cosigned)
        log.expect(checkpoint, kept=kept)
        self._verified += 1 + len(log.cosigned) - before

    def latest(self, service: str) -> Checkpoint | None:
        """The largest served checkpoint of ``service`` given so far (to keep for next time)."""
        return self._log(service).latest

    def add(self, service: str, events: Iterable[FeedEvent]) -> None:
        """Audit the next events of ``service``'s feed, in seq order, in this process."""
        items = list(events)
        page = Feed(events=items, next_after=items[-1].seq if items else -1)
        self.add_checked(service, check_page(self.context(service), page.model_dump_json()))

    def add_page(self, service: str, text: str | bytes) -> None:
        """Audit the next page of ``service``'s feed as served (its JSON text)."""
        self.add_checked(service, check_page(self.context(service), text))

    def add_checked(self, service: str, page: CheckedPage) -> None:
        """Audit the next page of ``service``'s feed from :func:`check_page`'s result."""
        log = self._log(service)
        notary = service == "notary"
        for fact in page.facts:
            log.append(fact.seq, fact.leaf_hash)
            self._verified += verifications(fact)
            if isinstance(fact, Stamped):
                self._stamped(log, fact)
                self._reward_stamped(log, fact)
            elif isinstance(fact, Hop):
                self._hop(log, fact)
            elif isinstance(fact, Refused):
                self._conflict(log, fact)
            elif isinstance(fact, Issued):
                self._issued(log, fact)
            elif isinstance(fact, Returned) and service == "mint":
                self._print_returned(log, fact)
            elif isinstance(fact, Returned):
                self._returned(log, fact)
            elif isinstance(fact, Rewarded):
                self._rewarded(log, fact)
            else:
                self._step(log, fact)
            if notary:
                self._notarized_return(fact)
                if self._holders_waiting == log.tree.size:
                    self._compare_holders()
        if page.failure is not None:
            seq, reason = page.failure
            log.append(seq, None)
            raise log.fail(log.tree.size if seq is None else seq, reason)

    def evidence(self, witness: str, page: EvidenceList) -> None:
        """A page of the evidence ``witness`` keeps: any at all is a violation of the log it
        accuses (raised by :meth:`report`, after the logs' own checks)."""
        if self._evidence is None:
            self._evidence = {}
        self._evidence[witness] = self._evidence.get(witness, 0) + 1
        if self._accused is not None or not page.evidence:
            return
        found = page.evidence[0]
        league = self.manifest.league
        accused = next(
            (name for name in WITNESSES if f"{league}/{name}" == found.origin), found.origin
        )
        try:
            key = _public(getattr(self.manifest, accused)) if accused in WITNESSES else None
            proven = "convicts the log" if key is not None and found.convicts(key) else "not proven"
        except LedgerError as exc:
            proven = f"which does not verify: {exc.diagnostics()}"
        self._accused = AuditFailure(
            accused,
            None,
            f"the {witness} witness keeps evidence against its log "
            f"({found.kind}, {proven}): {found.reason}",
        )

    def report(self) -> AuditReport:
        """Finish: every checkpoint reached, every run's numbers dense, every holder compared,
        no evidence kept; the report."""
        services = tuple(
            self._logs[name].finish()
            for name in AUDITED_SERVICES
            if name != "treasury" or self._logs[name].served or self._logs[name].tree.size
        )
        self._check_runs()
        self._check_holders()
        self._check_returns()
        self._check_rewards()
        if self._accused is not None:
            raise self._accused
        return AuditReport(
            services=services,
            prints=len(self._prints),
            hops=self._hops,
            conflicts=self._conflicts,
            holders=len({p.holder for p in self._prints.values()}),
            compared=self._compared if self._holders else None,
            verifications=self._verified,
            evidence=self._evidence,
            treasury=self._treasury_figures(),
            returned_prints=self._print_returns,
            reissued_prints=len(self._order_reissues),
            notarized_prints=self._print_notarized,
            rewards=dict(self._rewards),
            misprint=self._misprint,
        )
