"""Buying with notes (Book V.5): a saga across the notary, the treasury and the mint.

A purchase is a stream ``purchase/<id>`` in the treasury's log, one event per step, each
appended in its own transaction under the log's lock with the stream version it expects, so a
step is taken once whatever crashes between two of them:

1. ``purchase-opened`` — the buyer's signed request checked (league, signature, the published
   price: a single by rarity or a finish upgrade by finish, every paid chain verified offline
   under the manifest, a note of its current issue, out, not paid into another open purchase,
   its last hop to the treasury's key, the change composable from the reserve; an upgrade's
   returned print a standard print of the title, the buyer's, its last hop to the mint's key,
   never returned into another purchase: L-20);
2. ``payment-notarized`` — the treasury submits the payment chains (and the returned print's)
   to the notary itself, in one submission, and records the notary's index of each paid hop
   (and of the print's hop to the mint); a hop the notary refuses (another endorsement
   recorded first: its fraud proof; a chain of an ended issue) is ``payment-rejected`` and the
   purchase closes ``rejected``, nothing paid, nothing returned, nothing delivered;
3. ``order-signed`` — the treasury's signed order to the mint (sent as it is until answered),
   with the returned print and its notarized hop for an upgrade;
4. ``print-delivered`` — the mint stamped it to the buyer, taking the returned print back in
   the same transaction (or ``order-refused``: an exhausted run, the returned print issued
   again to the buyer by the mint in its transaction; an upgrade refused without the print
   handed back, which only a duplicated return can cause, is never refunded: the purchase
   stays open, logged as an error, for the operator);
5. ``payment-returned`` — with a ``note-returned`` event per paid note, in one transaction;
6. ``purchase-closed`` ``delivered`` — with the change issued (``note-issued``, reason
   ``change``) in the same transaction.

An exhausted run closes the purchase ``refunded`` in one transaction: every paid note returned
and issued again to the buyer under its next issue (reason ``refund``), so the refund is the
paid notes themselves and no claim can take them in between. The notes are returned only once
the print is delivered, so a note is at every moment out to exactly one holder or in the
reserve (docs/architecture.md §4, L-18).

The handler drives a purchase as far as it can and answers how it ended; a service that does
not answer leaves the purchase open (503 retry-later) and the resumer, on start-up and on a
timer, drives every open purchase on. The notary answers an identical submission with the same
receipts and the mint an identical order with the same answer, so a step repeated after a
crash does nothing twice.

Nothing here is there for tests: they crash the treasury between every two steps by hooks they
install themselves around the event store's transaction (a step's commit) and the league
client's calls (a peer's answer), then drive the purchase on with a fresh treasury on the same
database (tests/services/treasury/test_saga.py, tests/reliability/crashing.py).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC

from clients.league import LeagueClient, LeagueProblem, LeagueUnreachable, NotaryConflict
from ledger.api.mint import Stamped
from ledger.api.treasury import (
    MAX_CHANGE_NOTES,
    BuyAnswer,
    BuyRequest,
    OrderAnswer,
    ReturnedPrint,
    Upgrade,
    check_payment_chain,
    check_returned_chain,
    mint_order,
    purchase_price,
)
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain
from ledger.errors import (
    ChainError,
    LedgerError,
    RequestIdReused,
    RetryLater,
    RunExhaustedError,
    StaleIssueError,
    VerificationError,
)
from ledger.events import (
    TREASURY_EVENTS,
    EventBody,
    NoteIssued,
    NoteReturned,
    OrderRefused,
    OrderSigned,
    PaymentNotarized,
    PaymentRejected,
    PaymentReturned,
    PrintDelivered,
    PurchaseClosed,
    PurchaseOpened,
    parse_event,
    purchase_stream,
)
from ledger.keys import PublicKey
from ledger.leaf import Event, NewEvent
from ledger.note_set import split_note_serial
from services.eventlog import StoreTransaction, StreamConflict
from services.kernel.writer import GroupWriter
from services.treasury import tables
from services.treasury.claiming import Treasury, compose, issue_queue
from services.treasury.projection import PROJECTION

log = logging.getLogger(__name__)

#: Seconds between the resumer's rounds over the open purchases.
RESUME_INTERVAL = 1.0
#: Most open purchases one round of the resumer drives.
RESUME_BATCH = 1000
#: Most purchase steps appended in one transaction; steps beyond wait for the next one.
MAX_GROUP_STEPS = 200
#: Most steps waiting for the writer; one beyond is refused as overloaded (503).
MAX_WAITING_STEPS = 20 * MAX_GROUP_STEPS


@dataclass(frozen=True, slots=True)
class Peers:
    """Where the treasury reaches the notary and the mint (None: not configured)."""

    notary: LeagueClient | None
    mint: LeagueClient | None


Build = Callable[[StoreTransaction, int], Awaitable[list[NewEvent]]]


class Buyer:
    """The purchase saga of one treasury: opens purchases and drives them to their end."""

    def __init__(self, treasury: Treasury, peers: Peers) -> None:
        self.treasury = treasury
        self.peers = peers
        self._locks: dict[str, asyncio.Lock] = {}
        #: Upgrades the mint refused without handing the print back, held open for the
        #: operator: alerted once, and left out of the resumer's rounds (the mint answers
        #: their orders the same for good; the buyer's own request still asks again).
        self._held: set[str] = set()
        #: The purchases' steps wait here and are appended in groups.
        self.steps: GroupWriter[Build, list[Event]] = GroupWriter(
            self._commit_group,
            units=lambda build: 1,
            max_group=MAX_GROUP_STEPS,
            max_waiting=MAX_WAITING_STEPS,
            what="purchase steps",
        )

    # -- the handler -------------------------------------------------------------------------

    async def buy(self, request: BuyRequest) -> BuyAnswer:
        """Open ``request``'s purchase (a replay opens nothing) and drive it to its end."""
        price = await asyncio.to_thread(self._check, request)
        await self._open(request, price)
        return await self.drive(request.purchase_id)

    def _check(self, request: BuyRequest) -> int:
        """Everything that needs no database (CPU-bound: every chain's signatures)."""
        manifest = self.treasury.manifest
        manifest.check_addressed("treasury", "the purchase", request.league, request.manifest)
        request.verify(PublicKey.from_text(request.buyer))
        price = purchase_price(manifest, request.title, request.upgrade)
        if request.upgrade is not None:
            self._check_returned(request, request.upgrade)
        paid = 0
        for chain in request.payment:
            paid += check_payment_chain(chain, manifest, request.buyer).denomination
        if paid < price:
            raise VerificationError(
                f"the payment of {paid} marks is short of the price of {request.title}, "
                f"{price} marks (Book V.5)"
            )
        return price

    def _check_returned(self, request: BuyRequest, upgrade: Upgrade) -> None:
        """An upgrade's returned print (L-20): a standard print of the title, the buyer's, its
        last hop the buyer's endorsement to the mint's key ("goes back to its issuer")."""
        chain = upgrade.returned
        certificate = chain.certificate
        if not isinstance(certificate, PrintCertificate):
            raise VerificationError(
                f"{chain.serial} is a note: an upgrade returns a standard print of the title"
            )
        if (certificate.title, certificate.finish) != (request.title, "standard"):
            raise VerificationError(
                f"{chain.serial} is a {certificate.finish} {certificate.title}: a {upgrade.finish}"
                f" {request.title} is bought against a standard {request.title} returned "
                f"(Book V.5 finish upgrade)"
            )
        check_returned_chain(chain, self.treasury.manifest, request.buyer)

    async def _open(self, request: BuyRequest, price: int) -> None:
        paid = sum(
            chain.certificate.denomination
            for chain in request.payment
            if isinstance(chain.certificate, NoteCertificate)
        )
        opened = PurchaseOpened(
            purchase_id=request.purchase_id, request=request, price=price, paid=paid
        )

        async def build(tx: StoreTransaction, next_seq: int) -> list[NewEvent]:
            prior = await tx.fetchrow(
                "SELECT request_hash FROM treasury.purchases WHERE purchase_id = $1",
                request.purchase_id,
            )
            if prior is not None:
                if not hmac.compare_digest(bytes(prior[0]), request.hash()):
                    raise RequestIdReused(
                        f"purchase id {request.purchase_id!r} was already used for another "
                        f"purchase; choose a new id for a new purchase"
                    )
                return []
            await self._check_notes(tx, request)
            if request.upgrade is not None:
                await _check_not_returned(tx, request.upgrade.returned)
            reserve = {d: row.reserve for d, row in (await tables.supply(tx)).items()}
            change = compose(paid - price, reserve) if paid > price else []
            if change is None or len(change) > MAX_CHANGE_NOTES:
                raise RunExhaustedError(
                    f"the reserve cannot make {paid - price} marks of change now; pay with "
                    f"notes nearer the price"
                )
            return [opened.new_event(expected_version=0)]

        await self._commit(build)

    async def _check_notes(self, tx: StoreTransaction, request: BuyRequest) -> None:
        serials = [chain.serial for chain in request.payment]
        rows = await tx.fetch(
            "SELECT n.serial, n.issue, n.issued_to, p.purchase_id FROM treasury.notes n"
            " LEFT JOIN treasury.paying p USING (serial) WHERE n.serial = ANY($1::text[])",
            serials,
        )
        found = {row[0]: (row[1], row[2], row[3]) for row in rows}
        for chain in request.payment:
            issue, holder, paying = found.get(chain.serial, (0, None, None))
            if issue != chain.issue or holder is None:
                raise StaleIssueError(
                    f"{chain.serial} issue {chain.issue} is spent: the note came back to the "
                    f"treasury"
                    + (f" and its current issue is {issue}" if issue > chain.issue else "")
                )
            if paying is not None:
                raise StaleIssueError(
                    f"{chain.serial} issue {chain.issue} is being spent in purchase {paying}"
                )
            if holder != chain.certificate.issued_to:  # pragma: no cover (the log's own)
                raise ChainError(f"{chain.serial} was not issued to the chain's first holder")

    # -- the saga ----------------------------------------------------------------------------

    async def drive(self, purchase_id: str) -> BuyAnswer:
        """Take the purchase's next steps until it closes; :class:`RetryLater` when a service
        it needs does not answer (the purchase stays open for the resumer)."""
        lock = self._locks.setdefault(purchase_id, asyncio.Lock())
        try:
            async with lock:
                steps: list[EventBody] = []
                while True:
                    # Read on from the steps already read (the stream only grows).
                    steps += await self._steps(purchase_id, len(steps))
                    if isinstance(steps[-1], PurchaseClosed):
                        return _answer(steps)
                    try:
                        await self._step(steps)
                    except StreamConflict:
                        continue  # another process took this step: read it and go on
        finally:
            if not lock.locked():
                # A driver still waiting holds the lock it took; one arriving now makes a new
                # one, and the stream versions keep the two from taking a step twice.
                self._locks.pop(purchase_id, None)

    async def _steps(self, purchase_id: str, after: int = 0) -> list[EventBody]:
        events = await self.treasury.store.read_stream(purchase_stream(purchase_id), after)
        if not events and not after:
            raise LedgerError(f"no purchase {purchase_id!r}")  # pragma: no cover
        return [parse_event(event, TREASURY_EVENTS) for event in events]

    async def _step(self, steps: Sequence[EventBody]) -> None:
        opened = steps[0]
        assert isinstance(opened, PurchaseOpened)
        last, version = steps[-1], len(steps)
        if isinstance(last, PurchaseOpened):
            await self._notarize(opened, version)
        elif isinstance(last, PaymentNotarized):
            await self._sign_order(opened, last, version)
        elif isinstance(last, OrderSigned):
            await self._order(opened, last, version)
        elif isinstance(last, PrintDelivered):
            notarized = next(s for s in steps if isinstance(s, PaymentNotarized))
            await self._return_payment(opened, notarized, version)
        elif isinstance(last, PaymentReturned):
            await self._close_with_change(opened, version)
        elif isinstance(last, OrderRefused):
            notarized = next(s for s in steps if isinstance(s, PaymentNotarized))
            await self._refund(opened, notarized, version)
        elif isinstance(last, PaymentRejected):
            await self._append([PurchaseClosed(purchase_id=opened.purchase_id,
                                               outcome="rejected")], version)

    async def _notarize(self, opened: PurchaseOpened, version: int) -> None:
        notary = self._peer(self.peers.notary, "notary", "NOTARY_URL")
        payment = opened.request.payment
        upgrade = opened.request.upgrade
        pid = opened.purchase_id
        try:
            # The returned print's hop to the mint is notarized with the payment (L-20): all
            # of it recorded, or none of it.
            answer = await notary.notarize(
                payment if upgrade is None else (*payment, upgrade.returned)
            )
        except NotaryConflict as conflict:
            await self._append([PaymentRejected(
                purchase_id=pid, reason=conflict.problem.detail or "fraud",
                proofs=tuple(c.proof for c in conflict.conflicts),
            )], version)
            return
        except LeagueProblem as problem:
            if problem.status >= 500 or problem.status == 429:
                raise RetryLater(
                    f"the notary cannot record the payment now: {problem}", 5
                ) from None
            await self._append([PaymentRejected(
                purchase_id=pid, reason=problem.problem.detail or problem.slug
            )], version)
            return
        except LeagueUnreachable as exc:
            raise RetryLater(f"the notary does not answer: {exc.diagnostics()}", 5) from None
        # The receipts come chain by chain, hop by hop: each chain's last is its payment.
        ends = []
        at = 0
        for chain in payment:
            at += len(chain.endorsements)
            ends.append(answer.receipts[at - 1].index)
        notarized = PaymentNotarized(
            purchase_id=pid,
            notarized=tuple(ends),
            returned=None if upgrade is None else answer.receipts[-1].index,
        )
        await self._append([notarized], version)

    async def _sign_order(
        self, opened: PurchaseOpened, notarized: PaymentNotarized, version: int
    ) -> None:
        request = opened.request
        upgrade = request.upgrade
        returned = None
        if upgrade is not None:
            if notarized.returned is None:  # pragma: no cover (the saga's own)
                raise LedgerError(f"purchase {opened.purchase_id}: the print's hop is unknown")
            # The whole chain travels: the mint verifies the buyer's hop to it itself.
            returned = ReturnedPrint(chain=upgrade.returned, notarized=notarized.returned)
        now = int((await self.treasury.store.now()).astimezone(UTC).timestamp())
        order = await asyncio.to_thread(
            mint_order,
            self.treasury.key,
            self.treasury.manifest,
            order_id=opened.purchase_id,
            owner=request.buyer,
            title=request.title,
            finish="standard" if upgrade is None else upgrade.finish,
            at=now,
            returned=returned,
        )
        await self._append([OrderSigned(purchase_id=opened.purchase_id, order=order)], version)

    async def _order(self, opened: PurchaseOpened, signed: OrderSigned, version: int) -> None:
        mint = self._peer(self.peers.mint, "mint", "MINT_URL")
        try:
            answer: OrderAnswer = await mint.order(signed.order)
        except LeagueProblem as problem:
            raise RetryLater(f"the mint refused the order for now: {problem}", 5) from None
        except LeagueUnreachable as exc:
            raise RetryLater(f"the mint does not answer: {exc.diagnostics()}", 5) from None
        item = answer.item
        pid = opened.purchase_id
        request = opened.request
        mint_key = PublicKey.from_text(self.treasury.manifest.mint)
        if isinstance(item, Stamped):
            certificate = item.certificate
            certificate.verify(mint_key)
            finish = "standard" if request.upgrade is None else request.upgrade.finish
            if (certificate.issued_to, certificate.title, certificate.finish) != (
                request.buyer, request.title, finish
            ):
                raise VerificationError(f"the mint stamped another print for purchase {pid}")
            await self._append([PrintDelivered(purchase_id=pid, certificate=certificate)], version)
        else:
            reissued = answer.reissued
            if request.upgrade is not None and reissued is None:
                # The print's hop to the mint is notarized, and the mint took nothing back for
                # this order (stale-issue: another order took this hop already, or the mint's
                # log does not hold the issue): refunding would close an upgrade without its
                # print handed back (L-20). The purchase stays open, its notes bound to it,
                # for the operator; the mint answers the order the same however often asked.
                if pid not in self._held:
                    self._held.add(pid)
                    log.error(
                        "purchase %s: the mint refused the upgrade without handing the print "
                        "back (%s): it stays open for the operator", pid, item.reason,
                    )
                raise RetryLater(
                    f"the mint refused upgrade {pid} without handing "
                    f"{request.upgrade.returned.serial} back ({item.reason}): the purchase stays "
                    f"open for the league's operator",
                    60,
                )
            if reissued is not None:
                reissued.verify(mint_key)
                returned = request.upgrade.returned if request.upgrade else None
                if returned is None or (
                    reissued.serial, reissued.issue, reissued.issued_to
                ) != (returned.serial, returned.issue + 1, request.buyer):
                    raise VerificationError(
                        f"the mint issued another print again for purchase {pid}"
                    )
            await self._append(
                [OrderRefused(purchase_id=pid, reason=item.reason, reissued=reissued)], version
            )

    async def _return_payment(
        self, opened: PurchaseOpened, notarized: PaymentNotarized, version: int
    ) -> None:
        events: list[EventBody] = list(_returns(opened, notarized))
        events.append(PaymentReturned(
            purchase_id=opened.purchase_id,
            notes=tuple(chain.serial for chain in opened.request.payment),
        ))
        await self._append(events, version)

    async def _close_with_change(self, opened: PurchaseOpened, version: int) -> None:
        change = opened.paid - opened.price
        pid = opened.purchase_id

        async def build(tx: StoreTransaction, next_seq: int) -> list[NewEvent]:
            supply = await tables.supply(tx)
            denominations = compose(change, {d: row.reserve for d, row in supply.items()})
            if denominations is None or len(denominations) > MAX_CHANGE_NOTES:
                raise RetryLater(f"the reserve cannot make {change} marks of change yet", 5)
            wanted = Counter(denominations)
            returned = await tables.returned_notes(tx, Counter({
                d: min(wanted[d], row.first_issued - row.circulating)
                for d, row in supply.items()
            }))
            queue = issue_queue(supply, wanted, returned)
            issued: list[NewEvent] = []
            notes = []
            for denomination in denominations:
                number, issues = queue[denomination].pop(0)
                certificate = self.treasury.issue_note(
                    denomination, number, opened.request.buyer, issues + 1,
                    next_seq + len(issued),
                )
                body = NoteIssued(certificate=certificate, request_id=pid, reason="change")
                issued.append(body.new_event(expected_version=2 * issues))
                notes.append(certificate)
            closed = PurchaseClosed(purchase_id=pid, outcome="delivered", notes=tuple(notes))
            return [*issued, closed.new_event(expected_version=version)]

        await self._commit(build)

    async def _refund(
        self, opened: PurchaseOpened, notarized: PaymentNotarized, version: int
    ) -> None:
        pid = opened.purchase_id

        async def build(tx: StoreTransaction, next_seq: int) -> list[NewEvent]:
            events: list[NewEvent] = []
            notes = []
            for returned in _returns(opened, notarized):
                n = returned.issue
                events.append(returned.new_event(expected_version=2 * n - 1))
                denomination, number = split_note_serial(returned.serial)
                certificate = self.treasury.issue_note(
                    denomination, number, opened.request.buyer, n + 1, next_seq + len(events)
                )
                issued = NoteIssued(certificate=certificate, request_id=pid, reason="refund")
                events.append(issued.new_event(expected_version=2 * n))
                notes.append(certificate)
            closed = PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes))
            return [*events, closed.new_event(expected_version=version)]

        await self._commit(build)

    async def close(self) -> None:
        """Let the steps already waiting be appended."""
        await self.steps.close()

    # -- the resumer -------------------------------------------------------------------------

    async def resume_all(self) -> int:
        """Drive every open purchase once; how many closed."""
        rows = await self.treasury.store.fetch(
            "SELECT purchase_id FROM treasury.purchases WHERE step <> 'purchase-closed'"
            " ORDER BY purchase_id LIMIT $1",
            RESUME_BATCH,
        )
        closed = 0
        for (purchase_id,) in rows:
            if purchase_id in self._held:
                continue
            try:
                await self.drive(purchase_id)
                closed += 1
            except RetryLater as exc:
                log.info("purchase %s waits: %s", purchase_id, exc.diagnostics())
        return closed

    async def run(self, interval: float = RESUME_INTERVAL) -> None:
        """Resume on start-up and every ``interval`` seconds until cancelled."""
        while True:
            try:
                await self.resume_all()
            except LedgerError as exc:
                log.warning("resuming purchases: %s", exc.diagnostics())
            await asyncio.sleep(interval)

    # -- plumbing ----------------------------------------------------------------------------

    def _peer(self, client: LeagueClient | None, name: str, setting: str) -> LeagueClient:
        if client is None:
            raise RetryLater(f"the treasury does not know where the {name} answers "
                             f"(set {setting})", 60)
        return client

    async def _append(self, bodies: Sequence[EventBody], version: int) -> None:
        """Append ``bodies``: note events at their notes' versions (set by the caller) and
        the purchase's step at ``version``."""
        async def build(tx: StoreTransaction, next_seq: int) -> list[NewEvent]:
            events = []
            for body in bodies:
                if isinstance(body, NoteReturned):
                    events.append(body.new_event(expected_version=2 * body.issue - 1))
                else:
                    events.append(body.new_event(expected_version=version))
            return events

        await self._commit(build)

    async def _commit(self, build: Build) -> list[Event]:
        """The events ``build`` makes, appended under the log's lock with the projection's
        changes, in a transaction shared with the other purchases' steps waiting (one commit
        for the group: the disk's flush is the price of a step, not of each)."""
        return await self.steps.submit(build)

    async def _commit_group(self, group: Sequence[Build]) -> list[list[Event] | LedgerError]:
        """One transaction for ``group``: each step built, appended and projected in turn (a
        step reads what the steps before it wrote). A step refused before it writes fails
        alone; a stream that moved under the group (another process's step) makes each step
        be taken again alone."""
        try:
            async with self.treasury.store.transaction() as tx:
                next_seq = await tx.lock()
                results: list[list[Event] | LedgerError] = []
                for build in group:
                    try:
                        events = await build(tx, next_seq)
                    except (RetryLater, RequestIdReused, RunExhaustedError, StaleIssueError,
                            ChainError) as refused:
                        results.append(refused)
                        continue
                    appended = await tx.append_batch(events)
                    if appended and appended[0].seq != next_seq:
                        raise RuntimeError(
                            f"the log appended at seq {appended[0].seq}, not {next_seq}"
                        )
                    changes = PROJECTION.empty()
                    for event in appended:
                        PROJECTION.project(event, changes)
                    await PROJECTION.write(tx, changes)
                    next_seq += len(appended)
                    results.append(appended)
            return results
        except StreamConflict as conflict:
            if len(group) == 1:
                return [conflict]
            alone: list[list[Event] | LedgerError] = []
            for build in group:
                alone.extend(await self._commit_group([build]))
            return alone


def _returns(opened: PurchaseOpened, notarized: PaymentNotarized) -> list[NoteReturned]:
    """A ``note-returned`` per paid note: its payment hop, as the notary recorded it."""
    return [
        NoteReturned(
            serial=chain.serial,
            issue=chain.issue,
            endorsement=chain.endorsements[-1],
            notarized=seq,
            purchase_id=opened.purchase_id,
        )
        for chain, seq in zip(opened.request.payment, notarized.notarized, strict=True)
    ]


async def _check_not_returned(tx: StoreTransaction, chain: Chain) -> None:
    """A print is returned into one purchase per issue (L-20)."""
    purchase = await tx.fetchval(
        "SELECT purchase_id FROM treasury.print_returns WHERE serial = $1 AND issue = $2",
        chain.serial, chain.issue,
    )
    if purchase is not None:
        raise StaleIssueError(
            f"{chain.serial} issue {chain.issue} was returned to the mint in purchase "
            f"{purchase}: it cannot be returned again"
        )


def _answer(steps: Sequence[EventBody]) -> BuyAnswer:
    """How the purchase ended, from its stream."""
    opened, closed = steps[0], steps[-1]
    assert isinstance(opened, PurchaseOpened)
    assert isinstance(closed, PurchaseClosed)
    delivered = next((s for s in steps if isinstance(s, PrintDelivered)), None)
    rejected = next((s for s in steps if isinstance(s, PaymentRejected)), None)
    refused = next((s for s in steps if isinstance(s, OrderRefused)), None)
    reason = rejected.reason if rejected else refused.reason if refused else None
    return BuyAnswer(
        purchase_id=opened.purchase_id,
        outcome=closed.outcome,
        price=opened.price,
        paid=opened.paid,
        stamped=delivered.certificate if delivered else None,
        change=list(closed.notes) if closed.outcome == "delivered" else [],
        refund=list(closed.notes) if closed.outcome == "refunded" else [],
        reason=reason,
        proofs=list(rejected.proofs) if rejected else [],
        returned=refused.reissued if refused else None,
    )

