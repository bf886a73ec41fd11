"""The mint's checker: every ``print-stamped`` of a mint-signed certificate of this league's
manifest and runs, serials unique, each run's numbers dense; the prints taken back and issued
again for an upgrade (L-20)."""

from __future__ import annotations

from ledger.audit.facts import (
    AuditFailure,
    Returned,
    Stamped,
)
from ledger.audit.report import MintCensus
from ledger.audit.reward_facts import MisprintAwarded
from ledger.audit.state import (
    _check_return_event,
    _Log,
    _Print,
    _Run,
    _State,
    _Taken,
)
from ledger.errors import LedgerError
from ledger.events import (
    print_stream,
)
from ledger.print_runs import MISPRINT, RunFinish

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


class MintChecker(_State):
    def _stamped(self, log: _Log, fact: Stamped) -> None:
        seq, serial = fact.seq, fact.serial
        if fact.early is not None:
            raise log.fail(seq, fact.early)
        if fact.reissue is not None:
            self._reissued(log, fact, fact.reissue)
            return
        if serial in self._prints:
            raise log.fail(seq, f"{serial} was stamped before: serials are unique")
        if fact.issue != 1:
            raise log.fail(seq, f"{serial} stamped as issue {fact.issue}: a stamp is issue 1")
        if fact.finish != MISPRINT:
            self._in_run(log, fact)
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        if fact.awarded is not None:  # the Misprint: its table checked by the tables' audit
            self._misprint = MisprintAwarded(seq, fact.awarded, fact.issued_to)
        chain = _Print(
            issue=fact.issue,
            holder=fact.issued_to,
            prev=fact.certificate,
            certificate=fact.certificate,
            finish=fact.finish,
        )
        self._prints[serial] = self._print_chains[(serial, 1)] = chain
        self._print_issue[serial] = 1

    def _print_returned(self, log: _Log, fact: Returned) -> None:
        """L-20: a print comes back to the mint once per issue, for an upgrade order, its
        hop to the mint's key the one the notary recorded."""
        seq, serial, n = fact.seq, fact.serial, fact.issue
        chain = self._print_chains.get((serial, n))
        if chain is None or self._print_issue[serial] != n or chain.returned >= 0:
            now = (
                "never stamped"
                if serial not in self._print_issue
                else f"back at the mint since event {chain.returned}"
                if chain is not None and chain.returned >= 0
                else f"out as issue {self._print_issue[serial]}"
            )
            raise log.fail(seq, f"{serial} returned as issue {n}, but it is {now}")
        _check_return_event(log, fact, print_stream(serial), self.manifest.mint, "mint")
        if fact.purchase_id in self._order_returns:
            raise log.fail(seq, f"order {fact.purchase_id!r} takes back a second print")
        self._await_hop(log, fact)
        chain.returned = seq
        self._order_returns[fact.purchase_id] = (serial, n)
        self._unaccounted[fact.purchase_id] = _Taken(serial, n, seq)
        self._print_returns += 1

    def _reissued(self, log: _Log, fact: Stamped, order: str) -> None:
        """L-20: a returned print is issued again only after its return, under the next
        issue, to the buyer of the order that took it back and was refused."""
        seq, serial, n = fact.seq, fact.serial, fact.issue
        latest = self._print_issue.get(serial)
        chain = self._print_chains.get((serial, n - 1))
        if latest != n - 1 or chain is None or chain.returned < 0:
            raise log.fail(
                seq,
                f"{serial} issued again as issue {n}, but its issue {n - 1} "
                f"is not back at the mint",
            )
        if self._order_returns.get(order) != (serial, n - 1):
            raise log.fail(
                seq, f"{serial} issued again for order {order!r}, which did not take it back"
            )
        if fact.version != 2 * n - 1:
            raise log.fail(
                seq,
                f"issue {n} of {serial} is recorded as version {fact.version} "
                f"of its stream, not {2 * n - 1}",
            )
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        self._print_chains[(serial, n)] = _Print(
            issue=n,
            holder=fact.issued_to,
            prev=fact.certificate,
            certificate=fact.certificate,
            finish=fact.finish,
        )
        self._print_issue[serial] = n
        self._order_reissues[order] = (serial, fact.certificate, fact.issued_to)
        taken = self._unaccounted.get(order)
        if taken is not None:
            taken.reissued = (fact.issued_to, seq)

    def _bounds(self, log: _Log, fact: Stamped) -> tuple[str, int, int]:
        found = self._run_bounds.get((fact.title, fact.finish))
        if found is None:
            finish: RunFinish = fact.finish  # type: ignore[assignment]  # not the misprint
            try:
                run = self.manifest.print_runs.run(fact.title)
            except LedgerError as exc:
                raise log.fail(fact.seq, exc.diagnostics()) from None
            found = (run.title, run.first_number(finish), run.size(finish))
            self._run_bounds[(fact.title, fact.finish)] = found
        return found

    def _in_run(self, log: _Log, fact: Stamped) -> None:
        title, first, size = self._bounds(log, fact)
        finish: RunFinish = fact.finish  # type: ignore[assignment]  # not the misprint
        _, _, digits = fact.serial.rpartition("-")
        number = int(digits) if digits.isdigit() else -1
        state = self._runs.get((title, finish))
        if state is None:
            state = self._runs[(title, finish)] = _Run()
        if state.count >= size or not first <= number < first + size:
            raise log.fail(
                fact.seq,
                f"{fact.serial} exceeds the {finish} run of {title}, "
                f"which holds {size} prints (numbers {first:04d} to "
                f"{first + size - 1:04d}): runs are never extended",
            )
        state.count += 1
        if number > state.highest:
            state.highest, state.highest_seq = number, fact.seq

    def mint_census(self) -> MintCensus:
        """The census of the mint's log audited so far (the mint's own check of its
        projections, ``league verify``, runs this checker over its store): each run's numbers
        dense from its first, else :class:`AuditFailure`."""
        self._check_runs()
        return MintCensus(
            stamped={key: state.count for key, state in self._runs.items()},
            prints=len(self._prints),
            owners=len({self._print_chains[item].holder for item in self._print_issue.items()}),
        )

    def _check_runs(self) -> None:
        for (title, finish), state in self._runs.items():
            run = self.manifest.print_runs.run(title)
            first = run.first_number(finish)
            if state.highest != first + state.count - 1:
                raise AuditFailure(
                    "mint",
                    state.highest_seq,
                    f"the {finish} run of {title} has {state.count} prints stamped, so its "
                    f"numbers must be {first:04d} to {first + state.count - 1:04d}, but one is "
                    f"{state.highest:04d}",
                )
