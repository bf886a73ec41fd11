"""The notary's checker: every recorded hop a valid next link of its chain, every refused
conflict a valid fraud proof naming the recorded winner, the returns matched to the hops they
name, and the holders the notary serves equal to those derived from the events."""

from __future__ import annotations

import bisect
import hmac

from ledger.api.notary import Holders
from ledger.audit.facts import (
    AuditFailure,
    Fact,
    Hop,
    Refused,
)
from ledger.audit.state import (
    _HoldersPage,
    _Log,
    _Print,
    _Recorded,
    _State,
)
from ledger.wire import hash_text

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


class NotaryChecker(_State):
    def _hop(self, log: _Log, fact: Hop) -> None:
        seq, serial = fact.seq, fact.serial
        stamped = self._prints.get(serial)
        printed = stamped is not None
        if stamped is not None:
            stamped = self._print_chains.get((serial, fact.issue))
            if stamped is None:
                raise log.fail(
                    seq,
                    f"a hop of issue {fact.issue} of {serial}, whose certificate "
                    f"the mint stamped is issue {self._print_issue[serial]}",
                )
            if fact.from_ == self.manifest.mint:
                raise log.fail(
                    seq,
                    f"hop {fact.hop} of {serial} is signed away by the mint, "
                    f"which never endorses a print returned to it (L-20)",
                )
        if stamped is None and serial in self._notes:
            stamped = self._note_chains.get((serial, fact.issue))
            if stamped is None:
                raise log.fail(
                    seq,
                    f"a hop of issue {fact.issue} of the note {serial}, which "
                    f"the treasury's log never issued",
                )
            self._note_holding[serial] = stamped
            self._note_hops += 1
        if stamped is None:
            raise log.fail(seq, f"a hop of {serial}, which the mint's log never stamped")
        if fact.issue != stamped.issue:
            raise log.fail(
                seq,
                f"a hop of issue {fact.issue} of {serial}, whose certificate "
                f"the mint stamped is issue {stamped.issue}",
            )
        position = (serial, fact.issue, fact.hop)
        prior = self._recorded.get(position)
        if prior is not None:
            raise log.fail(
                seq,
                f"a second endorsement recorded at hop {fact.hop} of {serial} "
                f"(the first was recorded at seq {prior.seq} and wins)",
            )
        reason = _link_error(fact, stamped)
        if reason is not None:
            raise log.fail(seq, reason)
        self._recorded[position] = _Recorded(seq, fact.digest)
        stamped.holder, stamped.prev, stamped.hops = fact.to, hash_text(fact.digest), fact.hop
        if stamped.first_hop < 0:
            stamped.first_hop = seq
        stamped.last_hop = seq
        if printed:
            self._prints[serial] = stamped
        self._hops += 1

    def _conflict(self, log: _Log, fact: Refused) -> None:
        seq = fact.seq
        if fact.invalid is not None:
            raise log.fail(seq, f"a refused conflict whose fraud proof is invalid: {fact.invalid}")
        recorded = self._recorded.get((fact.serial, fact.issue, fact.hop))
        if (
            recorded is None
            or recorded.seq != fact.prior
            or not hmac.compare_digest(recorded.digest, fact.first)
        ):
            raise log.fail(
                seq,
                f"a refused conflict at hop {fact.hop} of {fact.serial} whose "
                f"first endorsement is not the hop recorded at seq {fact.prior}",
            )
        self._conflicts += 1

    def _notarized_return(self, fact: Fact) -> None:
        """A return naming this notary event (a note's to the treasury, a print's to the
        mint) must name the hop it records: exactly its endorsement, to the returning
        service's key, the latest hop of that issue's chain (the service holds it)."""
        returning = self._returning.pop(fact.seq, None)
        if returning is None:
            return
        service, seq, serial, issue, hop, digest = returning
        key = getattr(self.manifest, service)
        chains = self._print_chains if service == "mint" else self._note_chains
        chain = chains.get((serial, issue))
        if not (
            isinstance(fact, Hop)
            and (fact.serial, fact.issue, fact.hop, fact.to) == (serial, issue, hop, key)
            and hmac.compare_digest(fact.digest, digest)
            and chain is not None
            and chain.hops == hop
            and chain.holder == key
        ):
            raise AuditFailure(
                service,
                seq,
                f"the return of {serial} (issue {issue}) names the notary's hop "
                f"at seq {fact.seq}, which records another event",
            )
        if service == "mint":
            self._print_notarized += 1

    def holders(self, after: str, page: Holders) -> None:
        """A page of the notary's holders (``GET /notary/holders?after=AFTER``), given in
        order from ``after=""`` before the notary's events past ``page.log_size``: compared
        with the holders derived from the events when the log reaches that size."""
        fail = self._log("notary").fail
        if after != self._holders_next:
            raise ValueError("give the holders pages in order, each after the one before")
        rows: dict[str, tuple[int, int, str]] = {}
        last = after
        for row in page.holders:
            if row.serial <= last:
                raise fail(
                    None,
                    f"the notary's holders page after {after!r} is not in serial "
                    f"order at {row.serial}",
                )
            rows[row.serial] = (row.issue, row.hops, row.holder)
            last = row.serial
        if page.next_after is not None and page.next_after != last:
            raise fail(
                None,
                f"the notary's holders page after {after!r} says it ends at "
                f"{page.next_after!r}, but its last row is {last!r}",
            )
        if page.log_size < self.size("notary"):
            raise ValueError("give every holders page before the events it reflects")
        self._holders_next = page.next_after
        self._holders.append(_HoldersPage(after, page.log_size, rows))
        self._compare_holders()

    def _compare_holders(self) -> None:
        """Compare the pages read at the log's present size; wait for the next size."""
        size = self.size("notary")
        fail = self._log("notary").fail
        for page in self._holders:
            if page.size != size or page.compared:
                continue
            page.compared = True
            for serial, (issue, hops, holder) in page.rows.items():
                derived = self._prints.get(serial) or self._note_holding.get(serial)
                if derived is None or derived.hops == 0:
                    raise fail(
                        None,
                        f"the notary's projection says {serial} is held by "
                        f"{holder} after {hops} hops, but its log records no hop "
                        f"of {serial} in its first {size} events",
                    )
                if (issue, hops, holder) != (derived.issue, derived.hops, derived.holder):
                    raise fail(
                        derived.last_hop,
                        f"the notary's projection says {serial} is held by {holder} "
                        f"(issue {issue}, hop {hops}), but its log's events make the "
                        f"holder {derived.holder} (issue {derived.issue}, hop "
                        f"{derived.hops})",
                    )
                self._compared += 1
        later = [p.size for p in self._holders if p.size > size]
        self._holders_waiting = min(later, default=-1)

    def _check_holders(self) -> None:
        """Every page reached, and every print with a hop in the log when a page was read
        listed on the page that covers it."""
        if not self._holders:
            return
        fail = self._log("notary").fail
        size = self.size("notary")
        for page in self._holders:
            if page.size > size:
                raise fail(
                    size,
                    f"the notary's holders page after {page.after!r} reflects "
                    f"{page.size} events of its log, but its feed ends after "
                    f"{size}",
                )
        if self._holders_next is not None:
            raise ValueError("give the holders pages to the end (next_after null)")
        starts = [page.after for page in self._holders]
        for serial, derived in (*self._prints.items(), *self._note_holding.items()):
            if derived.hops == 0:
                continue
            page = self._holders[bisect.bisect_left(starts, serial) - 1]
            if derived.first_hop < page.size and serial not in page.rows:
                raise fail(
                    derived.first_hop,
                    f"the notary's projection has no holder for "
                    f"{serial}, whose hops its log records",
                )

    def holder(self, serial: str) -> str | None:
        """The key (text) holding ``serial`` as derived from the events audited so far: the
        holder of its latest issue's chain (L-20: a print issued again is its receiver's)."""
        latest = self._print_chains.get((serial, self._print_issue.get(serial, 0)))
        return latest.holder if latest is not None else None


def _link_error(e: Hop, stamped: _Print) -> str | None:
    """Why ``e`` is not the next link of ``stamped``'s chain, or ``None``: the checks
    :func:`ledger.endorsements.verify_chain` makes at each hop, one hop at a time."""
    n = stamped.hops + 1
    if e.hop != n:
        return f"hop {e.hop} of {e.serial} is recorded where hop {n} is next"
    if not hmac.compare_digest(e.prev, stamped.prev):
        what = "the certificate the mint stamped" if n == 1 else "the hop before"
        return f"hop {n} of {e.serial} does not link to {what}"
    # Key texts are canonical base64url of the key (the models refuse any other spelling),
    # so equal texts are equal keys.
    if e.from_ != stamped.holder:
        return f"hop {n} of {e.serial} is signed away by a key that did not hold it"
    if not e.signed:
        return f"hop {n} of {e.serial}: the endorsement's signature does not verify"
    return None
