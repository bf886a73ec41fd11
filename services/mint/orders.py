"""Orders: the treasury's signed order stamps one print to a buyer (Book V.5).

A purchase with notes ends at the mint: the treasury, once the buyer's notes are notarized
and returned, signs a :class:`~ledger.api.treasury.MintOrder` naming the purchase id, the
buyer, the title and the finish. The mint checks the league and the treasury's signature,
then stamps the order in one event-log transaction under the log's lock, inside the fixed
runs (an exhausted run refuses it: the treasury refunds) and outside the buyer's daily
stamping allowance (``PrintStamped.ordered``; no proof of work: the buyer paid in notes). An
order is answered once per order id: its answer is kept (in ``mint.stamp_requests`` under the
treasury's key, through the kernel's answered-requests layer, ``services.kernel.answered``),
so a replay, however late, answers the same certificate or the same refusal and stamps
nothing new; another order under the same id is refused. Orders are not checked for
freshness: the treasury resends a purchase's order exactly as it signed it, after any outage.

A finish upgrade's order carries the returned print's whole chain, verified here as anyone
verifies it (the buyer's endorsement to the mint's key last): the treasury's signature vouches
only for the notary's index of that hop. Every refusal of an upgrade order whose print the mint
takes back hands the print back in the same transaction (an exhausted run: ``print-reissued``
to the buyer, L-20). The one refusal that takes nothing back is ``stale-issue``: the print's
issue is not out in the mint's log, which with the notary's one hop per (serial, issue, hop)
means another order already took back this very hop (and delivered an upgrade for it or issued
the print again) or the issue was never stamped; issuing it again here would issue one print
twice, so the refusal hands nothing back and the treasury does not refund the purchase
(``services.treasury.buying``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ledger.address import address_of
from ledger.api.mint import ITEMS, Item, Refused, Stamped
from ledger.api.problems import PROBLEM_PREFIX, Problem
from ledger.api.treasury import (
    MintOrder,
    OrderAnswer,
    OrderOutcome,
    OrdersAnswer,
    ReturnedPrint,
    check_returned_chain,
)
from ledger.certificates import PrintCertificate
from ledger.errors import (
    ChainError,
    LedgerError,
    RequestIdReused,
    RunExhaustedError,
    StaleIssueError,
    UnknownTitle,
)
from ledger.events import PrintReissued, PrintReturned, PrintStamped
from ledger.keys import PublicKey
from ledger.leaf import NewEvent
from ledger.print_runs import PrintRun, serial_for
from services.eventlog import StoreTransaction
from services.http.problems import problem_of, title_of
from services.kernel.answered import Stored, Words
from services.kernel.writer import GroupWriter, Locked, run_group
from services.mint import tables
from services.mint.mint import Mint
from services.mint.projection import PROJECTION, MintChanges, MintProjection

#: Most orders decided in one transaction; orders beyond wait for the next one.
MAX_GROUP_ORDERS = 500
#: Most orders waiting for the writer; one beyond is refused as overloaded (503).
MAX_WAITING_ORDERS = 4 * MAX_GROUP_ORDERS


@dataclass(frozen=True, slots=True)
class Presented:
    """An order that passed every check needing no database."""

    order: MintOrder
    run: PrintRun
    address: str
    hash: bytes


def present(mint: Mint, order: MintOrder) -> Presented:
    """Check the league, the treasury's signature, the title and a returned print."""
    manifest = mint.manifest
    manifest.check_addressed("mint", "the order", order.league, order.manifest)
    order.verify(PublicKey.from_text(manifest.treasury))
    run = manifest.print_runs.by_serial_title.get(order.title.upper())
    if run is None or run.title != order.title:
        raise UnknownTitle(f"the league prints no title {order.title!r}")
    if order.returned is not None:
        _check_returned(mint, order, order.returned)
    return Presented(order, run, address_of(PublicKey.from_text(order.owner)), order.hash())


def _check_returned(mint: Mint, order: MintOrder, returned: ReturnedPrint) -> None:
    """An upgrade's returned print (L-20): the mint's own standard print of the title ordered
    in another finish, its whole chain verified offline (every signature and link, the mint's
    certificate first), its last hop the buyer's (``order.owner``) endorsement to the mint's
    key. The treasury's signature vouches only for the notary's index of that hop: a treasury
    key misused or a treasury's bug cannot make the mint take back a print the buyer never
    signed back to it."""
    certificate = returned.certificate
    if (certificate.title, certificate.finish) != (order.title, "standard") or (
        order.finish == "standard"
    ):
        raise ChainError(
            f"an upgrade returns a standard print of {order.title} for another finish, not a "
            f"{certificate.finish} {certificate.title} for a {order.finish} one"
        )
    check_returned_chain(returned.chain, mint.manifest, order.owner)


#: How the mint's refusals of an order name it (``services.kernel.answered``): ids are the
#: treasury's, its only caller's.
WORDS = Words(request="order", id="order id", by="")


@dataclass
class OrderDecision:
    """One order transaction's decision (the kernel's ``Decision``): each order answered in
    memory against what was read under the lock, its events appended and projected, and its
    answer kept for replays."""

    mint: Mint
    now: datetime
    next_seq: int
    state: tables.GroupState
    #: The stream version of each returned print of the group (0: never stamped).
    versions: dict[str, int]
    events: list[NewEvent]
    changes: MintChanges

    def answer(self, presented: Presented) -> OrderAnswer | LedgerError:
        order = presented.order
        key = (self.mint.manifest.treasury, order.order_id)
        answers = self.state.answers
        try:
            prior = answers.prior(key, presented.hash)
        except RequestIdReused as reused:
            return reused
        if isinstance(prior, Stored):
            item, *again = ITEMS.validate_python(prior.answer)
            return OrderAnswer(
                order_id=order.order_id, replayed=True, item=item, reissued=_reissued(again)
            )
        # Orders are not checked for freshness: the treasury resends one as it signed it.
        item, reissued = self._draw(presented)
        items = [item] if reissued is None else [item, _as_item(reissued)]
        answers.keep(key, presented.hash, ITEMS.dump_python(items, mode="json"))
        return OrderAnswer(order_id=order.order_id, replayed=False, item=item, reissued=reissued)

    def _draw(self, presented: Presented) -> tuple[Item, PrintCertificate | None]:
        """The order's item, and the returned print issued again (a refused upgrade)."""
        order, run = presented.order, presented.run
        key = (run.title, order.finish)
        size = run.size(order.finish)
        returned = order.returned
        if returned is not None:
            certificate = returned.certificate
            version = self.versions.get(certificate.serial, 0)
            if version != 2 * certificate.issue - 1:
                return Refused(
                    title=run.title,
                    finish=order.finish,
                    problem=problem_of(StaleIssueError).slug,
                    reason=f"{certificate.serial} issue {certificate.issue} is not out: the "
                    f"mint's log holds {version} events of it, so it cannot be returned"
                    + (
                        " (another order took this issue back already)"
                        if version >= 2 * certificate.issue
                        else ""
                    ),
                ), None
            self._append(
                PrintReturned(
                    serial=certificate.serial,
                    issue=certificate.issue,
                    endorsement=returned.endorsement,
                    notarized=returned.notarized,
                    order_id=order.order_id,
                ),
                version,
            )
        if self.state.stamped[key] >= size:
            refused = Refused(
                title=run.title,
                finish=order.finish,
                problem=problem_of(RunExhaustedError).slug,
                reason=f"the {order.finish} run of {run.title} is exhausted: all {size} are "
                f"stamped, and runs are never extended",
            )
            if returned is None:
                return refused, None
            return refused, self._reissue(returned.certificate, order)
        certificate = PrintCertificate.sign(
            self.mint.key,
            serial=serial_for(
                run.title,
                order.finish,
                self.state.stamped[key] + 1,
                self.mint.manifest.print_runs,
            ),
            title=run.title,
            set=run.set,
            finish=order.finish,
            issued_to=order.owner,
            issue=1,
            event=self.next_seq + len(self.events),
            manifest=self.mint.manifest_hash,
        )
        stamped = PrintStamped(certificate=certificate, request_id=order.order_id, ordered=True)
        self.events.append(stamped.new_event(expected_version=0))
        MintProjection.stamped(self.changes, stamped, presented.address, self.now)
        self.state.stamped[key] += 1
        return Stamped(title=run.title, finish=order.finish, certificate=certificate), None

    def _append(self, body: PrintReturned | PrintReissued, version: int) -> None:
        self.events.append(body.new_event(expected_version=version))
        self.versions[body.stream().removeprefix("print/")] = version + 1

    def _reissue(self, returned: PrintCertificate, order: MintOrder) -> PrintCertificate:
        """The returned print issued again to the buyer under its next issue (L-20)."""
        n = returned.issue + 1
        certificate = PrintCertificate.sign(
            self.mint.key,
            serial=returned.serial,
            title=returned.title,
            set=returned.set,
            finish=returned.finish,
            issued_to=order.owner,
            issue=n,
            event=self.next_seq + len(self.events),
            manifest=self.mint.manifest_hash,
        )
        self._append(PrintReissued(certificate=certificate, order_id=order.order_id), 2 * n - 2)
        return certificate


def _as_item(certificate: PrintCertificate) -> Item:
    """A print issued again, kept as the second item of its order's stored answer."""
    return Stamped(title=certificate.title, finish="standard", certificate=certificate)


def _reissued(again: Sequence[Item]) -> PrintCertificate | None:
    """The print issued again from a stored answer's second item, if any."""
    return again[0].certificate if again and isinstance(again[0], Stamped) else None


async def order_group(mint: Mint, group: Sequence[Presented]) -> list[OrderAnswer | LedgerError]:
    """Stamp ``group`` in one transaction (the kernel's :func:`run_group`): an answer or a
    refusal per order, in order."""
    treasury = mint.manifest.treasury

    async def read(locked: Locked) -> tuple[tables.GroupState, dict[str, int]]:
        state = await tables.read_group(
            locked.tx,
            {presented.run.title for presented in group},
            [(treasury, presented.order.order_id) for presented in group],
            locked.now,
            WORDS,
            0,  # orders stand outside the daily allowance (PrintStamped.ordered)
        )
        returned = [p.order.returned.certificate.serial for p in group if p.order.returned]
        versions = await tables.print_versions(locked.tx, returned) if returned else {}
        return state, versions

    def decide(
        locked: Locked, read: tuple[tables.GroupState, dict[str, int]]
    ) -> tuple[OrderDecision, list[OrderAnswer | LedgerError]]:
        state, versions = read
        decision = OrderDecision(
            mint, locked.now, locked.next_seq, state, versions, [], MintChanges()
        )
        return decision, [decision.answer(presented) for presented in group]

    async def record(tx: StoreTransaction, decision: OrderDecision) -> None:
        await tables.REQUESTS.record(tx, decision.state.answers)

    return await run_group(mint.store, PROJECTION, read, decide, record)


class Orderer:
    """The mint's writer of orders (the kernel's :class:`GroupWriter`)."""

    def __init__(self, mint: Mint) -> None:
        self.mint = mint
        self.writer: GroupWriter[Presented, OrderAnswer] = GroupWriter(
            lambda group: order_group(mint, group),
            units=lambda presented: 1,
            max_group=MAX_GROUP_ORDERS,
            max_waiting=MAX_WAITING_ORDERS,
            what="orders to be stamped",
        )

    async def order(self, order: MintOrder) -> OrderAnswer:
        """Check ``order``, wait for its group's transaction, return its answer."""
        # CPU-bound: the treasury's signature and a returned print's whole chain.
        presented = await asyncio.to_thread(present, self.mint, order)
        return await self.writer.submit(presented)

    async def orders(self, orders: Sequence[MintOrder]) -> list[OrderAnswer | LedgerError]:
        """Each of ``orders`` answered as :meth:`order` answers it alone (its answer, or its
        refusal), all checked in one pass off the loop and waiting for the writer together:
        orders sent together are decided in one transaction."""
        presented = await asyncio.to_thread(
            lambda: [_presented(self.mint, order) for order in orders]
        )
        answers = await asyncio.gather(
            *(self._answer(p) for p in presented), return_exceptions=True
        )
        results: list[OrderAnswer | LedgerError] = []
        for answer in answers:
            if isinstance(answer, (OrderAnswer, LedgerError)):
                results.append(answer)
            else:  # the transaction itself failed: the request fails, as one order's would
                raise answer
        return results

    async def _answer(self, presented: Presented | LedgerError) -> OrderAnswer:
        if isinstance(presented, LedgerError):
            raise presented
        return await self.writer.submit(presented)

    async def close(self) -> None:
        await self.writer.close()


def _presented(mint: Mint, order: MintOrder) -> Presented | LedgerError:
    """``present``'s answer, or its refusal."""
    try:
        return present(mint, order)
    except LedgerError as refused:
        return refused


def outcomes(results: Sequence[OrderAnswer | LedgerError], path: str) -> OrdersAnswer:
    """A batch's answer: each order's answer, or the problem it would have answered alone."""
    answered = []
    for result in results:
        if isinstance(result, LedgerError):
            slug, status = problem_of(type(result))
            problem = Problem(
                type=PROBLEM_PREFIX + slug,
                title=title_of(slug),
                status=status,
                detail=result.diagnostics(),
                instance=path,
            )
            answered.append(OrderOutcome(problem=problem))
        else:
            answered.append(OrderOutcome(answer=result))
    return OrdersAnswer(outcomes=answered)
