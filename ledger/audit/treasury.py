"""The treasury's checker: notes issued and returned at dense stream versions, the supply the
note set after every event, the faucet's daily limit (L-12), each purchase's saga closed
exactly (L-18) and upgrades (L-20)."""

from __future__ import annotations

from ledger.audit.facts import (
    Issued,
    Returned,
    Step,
)
from ledger.audit.report import TreasuryFigures
from ledger.audit.rewards import RewardsChecker
from ledger.audit.state import (
    _check_return_event,
    _Log,
    _Note,
    _Print,
    _Purchase,
)
from ledger.events import (
    PurchaseClosed,
    PurchaseOpened,
    note_stream,
    purchase_stream,
)

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


class TreasuryChecker(RewardsChecker):
    def _supply(self, log: _Log, seq: int) -> None:
        """Reserve and circulation per denomination equal the note set (V.5: "the supply
        never moves")."""
        for denomination, count in self.manifest.note_set.count_of.items():
            out = self._out[denomination]
            if not 0 <= out <= count:
                raise log.fail(
                    seq,
                    f"{out} M{denomination} notes out of the {count} of the "
                    f"note set: the supply is no longer "
                    f"{self.manifest.note_set.total_marks:,} marks",
                )

    def _issued(self, log: _Log, fact: Issued) -> None:
        seq, serial, n = fact.seq, fact.serial, fact.issue
        if fact.early is not None:
            raise log.fail(seq, fact.early)
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        note = self._notes.get(serial)
        if note is not None and note.out:
            total = self.manifest.note_set.total_marks
            raise log.fail(
                seq,
                f"{serial} issued (issue {n}) while its issue {note.issue} is "
                f"out, never returned: the supply would be "
                f"{total + fact.denomination:,} marks, not {total:,}",
            )
        expected = 1 if note is None else note.issue + 1
        if n != expected:
            raise log.fail(
                seq,
                f"{serial} issued as issue {n} where issue {expected} is next "
                f"(issue numbers are dense)",
            )
        if fact.stream != note_stream(serial) or fact.version != 2 * n - 1:
            raise log.fail(
                seq,
                f"issue {n} of {serial} is recorded as version {fact.version} "
                f"of stream {fact.stream!r}, not version {2 * n - 1} of "
                f"{note_stream(serial)!r}",
            )
        if fact.reason == "claim":
            per_day = self.manifest.policies.faucet_marks_per_day
            day = (fact.issued_to, fact.day)
            claimed = self._faucet.get(day, 0) + fact.denomination
            if claimed > per_day:
                raise log.fail(
                    seq,
                    f"the faucet gave {fact.issued_to} {claimed} marks on "
                    f"{fact.day} (UTC), more than its {per_day} a day",
                )
            self._faucet[day] = claimed
            self._claimed += fact.denomination
        elif fact.reason == "reward":
            self._reward_issued(log, fact)
        else:
            purchase = self._purchases.get(fact.request_id)
            if purchase is None:
                raise log.fail(
                    seq,
                    f"{serial} issued as {fact.reason} of purchase "
                    f"{fact.request_id!r}, which is not open",
                )
            purchase.issued.append((serial, n, fact.denomination))
            purchase.reasons.add(fact.reason)
        if note is None:
            note = self._notes[serial] = _Note(fact.denomination, n, True)
        note.issue, note.out = n, True
        self._out[fact.denomination] += 1
        self._supply(log, seq)
        self._note_chains[(serial, n)] = _Print(
            issue=n, holder=fact.issued_to, prev=fact.certificate
        )
        self._issues += 1

    def _returned(self, log: _Log, fact: Returned) -> None:
        seq, serial, n = fact.seq, fact.serial, fact.issue
        note = self._notes.get(serial)
        if note is None or not note.out or note.issue != n:
            now = (
                "never issued"
                if note is None
                else f"in the reserve since issue {note.issue}"
                if not note.out
                else f"out as issue {note.issue}"
            )
            raise log.fail(seq, f"{serial} returned as issue {n}, but it is {now}")
        _check_return_event(log, fact, note_stream(serial), self.manifest.treasury, "treasury")
        purchase = self._purchases.get(fact.purchase_id)
        if purchase is None:
            raise log.fail(
                seq,
                f"{serial} returned as payment of purchase {fact.purchase_id!r}, which is not open",
            )
        purchase.returned += note.denomination
        note.out = False
        self._out[note.denomination] -= 1
        self._supply(log, seq)
        self._await_hop(log, fact)
        self._returns += 1

    def _step(self, log: _Log, fact: Step) -> None:
        seq, pid = fact.seq, fact.purchase_id
        purchase = self._purchases.get(pid)
        expected = 1 if purchase is None else purchase.version + 1
        if fact.stream != purchase_stream(pid) or fact.version != expected:
            raise log.fail(
                seq,
                f"a {fact.type} of purchase {pid!r} recorded as version "
                f"{fact.version} of stream {fact.stream!r}, not version "
                f"{expected} of {purchase_stream(pid)!r}",
            )
        if purchase is None:
            if fact.type != PurchaseOpened.TYPE:
                raise log.fail(
                    seq,
                    f"a {fact.type} of purchase {pid!r}, which was never opened (or was closed)",
                )
            if fact.payment != fact.paid:
                raise log.fail(
                    seq,
                    f"purchase {pid!r} says {fact.paid} marks are paid, but its "
                    f"payment's notes sum to {fact.payment}",
                )
            if fact.foreign:
                raise log.fail(
                    seq,
                    f"purchase {pid!r} takes {', '.join(fact.foreign)}, whose "
                    f"last endorsement is not its buyer's (L-21)",
                )
            if fact.price != fact.listed:
                what = (
                    f"a {fact.finish} upgrade"
                    if fact.returned is not None
                    else "a single of its title"
                )
                raise log.fail(
                    seq,
                    f"purchase {pid!r} is priced {fact.price} marks, but the "
                    f"published price of {what} is "
                    + (
                        f"{fact.listed} marks (Book V.5)"
                        if fact.listed
                        else "none: the league does not print its title"
                    ),
                )
            self._purchases[pid] = _Purchase(
                1, fact.price, fact.paid, fact.buyer, finish=fact.finish, upgrade=fact.returned
            )
            return
        if fact.type == PurchaseOpened.TYPE:
            raise log.fail(seq, f"purchase {pid!r} opened twice")
        purchase.version = fact.version
        if fact.delivered is not None:
            serial, certificate, receiver = fact.delivered
            stamped = self._print_chains.get((serial, 1))
            if (
                stamped is None
                or stamped.certificate != certificate
                or receiver != purchase.buyer
                or stamped.finish != purchase.finish
            ):
                raise log.fail(
                    seq,
                    f"purchase {pid!r} delivers {serial}, which the mint's log "
                    f"did not stamp to its buyer in the {purchase.finish} finish "
                    f"as delivered",
                )
            purchase.delivered = True
        elif fact.type == "order-refused":
            purchase.refused = True
            purchase.reissued = fact.reissued
        elif fact.type == PurchaseClosed.TYPE:
            self._close(log, fact, purchase)

    def _close(self, log: _Log, fact: Step, purchase: _Purchase) -> None:
        """V.5: "buying with notes returns a stamped print and exact change"; an exhausted run
        refunds the payment in full (L-18); a rejected payment moves nothing."""
        seq, pid, outcome = fact.seq, fact.purchase_id, fact.outcome
        closing = sorted(fact.notes)
        issued = sorted(purchase.issued)
        given = sum(d for _, _, d in issued)
        if closing != issued:
            raise log.fail(
                seq, f"purchase {pid!r} closes with notes the treasury's log did not issue for it"
            )
        if outcome == "delivered":
            wrong = (
                None
                if purchase.delivered
                and purchase.reasons <= {"change"}
                and purchase.returned == purchase.paid
                and given == purchase.paid - purchase.price
                else f"paid {purchase.paid}, returned {purchase.returned}, price "
                f"{purchase.price}, change {given}"
            )
        elif outcome == "refunded":
            wrong = (
                None
                if purchase.refused
                and not purchase.delivered
                and purchase.reasons <= {"refund"}
                and given == purchase.paid
                and purchase.returned == purchase.paid
                else f"paid {purchase.paid}, refunded {given}"
            )
        else:
            wrong = (
                None
                if not purchase.delivered and not issued and not purchase.returned
                else "a rejected payment moved notes"
            )
        if wrong is not None:
            raise log.fail(seq, f"purchase {pid!r} closed {outcome} but not exactly: {wrong}")
        self._check_print_back(log, fact, purchase)
        del self._purchases[pid]
        self._closed[outcome] += 1

    def _check_print_back(self, log: _Log, fact: Step, purchase: _Purchase) -> None:
        """L-20: an upgrade delivered took its print back at the mint; refunded, the mint took
        it back and issued it again to the buyer (a refunded upgrade hands its print back);
        rejected, or a single, the mint took nothing back for it."""
        pid, outcome = fact.purchase_id, fact.outcome
        taken = self._order_returns.get(pid)
        again = self._order_reissues.get(pid)
        if outcome == "delivered" and purchase.upgrade is not None:
            wrong = (
                None
                if taken == purchase.upgrade and again is None
                else "the mint's log did not take back the print returned for it"
            )
        elif outcome == "refunded" and purchase.upgrade is not None:
            # L-20: a refunded upgrade hands its print back, taken and issued again.
            handed = again is not None and again[2] == purchase.buyer and again == purchase.reissued
            wrong = (
                None
                if taken == purchase.upgrade and handed
                else "the print returned for it is not handed back to the buyer exactly"
            )
        else:
            wrong = (
                None
                if taken is None and again is None
                else "the mint's log took a print back for it"
            )
        if wrong is not None:
            raise log.fail(fact.seq, f"purchase {pid!r} closed {outcome} but not exactly: {wrong}")
        self._unaccounted.pop(pid, None)

    def _treasury_figures(self) -> TreasuryFigures | None:
        if not self._logs["treasury"].served:
            return None
        count = self.manifest.note_set.count_of
        return TreasuryFigures(
            issues=self._issues,
            returns=self._returns,
            denominations=tuple((d, n, n - self._out[d], self._out[d]) for d, n in count.items()),
            claimed=self._claimed,
            purchases=dict(self._closed),
            open_purchases=len(self._purchases),
            note_hops=self._note_hops,
            unmatched_returns=sum(r[0] == "treasury" for r in self._returning.values()),
        )
