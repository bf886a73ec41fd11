"""Buying with notes (Book V.5): a saga across the notary, the treasury and the mint.

A purchase is a stream ``purchase/<id>`` in the treasury's log, one event per step, each
appended under the log's lock with the stream version it expects, so a step is taken once
whatever crashes between two commits. The steps:

1. ``purchase-opened`` — the buyer's signed request checked (league, signature, the published
   price: a single by rarity or a finish upgrade by finish, every paid chain verified offline
   under the manifest, a note of its current issue, out, not paid into another open purchase,
   its last hop to the treasury's key, the change composable from the reserve; an upgrade's
   returned print a standard print of the title, the buyer's, its last hop to the mint's key,
   never returned into another purchase: L-20; ``services.treasury.opening``);
2. ``payment-notarized`` — the treasury submits the payment chains (and the returned print's)
   to the notary itself, and records the notary's index of each paid hop (and of the print's
   hop to the mint); a hop the notary refuses (another endorsement recorded first: its fraud
   proof; a chain of an ended issue) is ``payment-rejected`` and the purchase closes
   ``rejected``, nothing paid, nothing returned, nothing delivered;
3. ``order-signed`` — the treasury's signed order to the mint (sent as it is until answered),
   with the returned print and its notarized hop for an upgrade;
4. ``print-delivered`` — the mint stamped it to the buyer, taking the returned print back in
   the same transaction (or ``order-refused``: an exhausted run, the returned print issued
   again to the buyer by the mint in its transaction; an upgrade refused without the print
   handed back, which only a duplicated return can cause, is never refunded: the purchase
   stays open, logged as an error, for the operator);
5. ``payment-returned`` — with a ``note-returned`` event per paid note;
6. ``purchase-closed`` ``delivered`` — with the change issued (``note-issued``, reason
   ``change``).

A purchase takes three commits of the treasury: ``purchase-opened`` | ``payment-notarized``
with ``order-signed`` (the order is signed before the commit, and sent only once committed)
| ``print-delivered``, ``payment-returned`` and ``purchase-closed`` with their note events (a
reserve that cannot make the change yet closes it in a later commit). A rejected payment is
``payment-rejected`` with ``purchase-closed`` in one commit; an exhausted run is
``order-refused`` with ``purchase-closed`` ``refunded`` in one commit: every paid note
returned and issued again to the buyer under its next issue (reason ``refund``), so the
refund is the paid notes themselves and no claim can take them in between. The notes are
returned only once the print is delivered, so a note is at every moment out to exactly one
holder or in the reserve (docs/architecture.md §4, L-18). A stream written one step a commit
(by an older treasury) is driven on from whichever step it reached.

A driver keeps its purchase's steps in memory as it appends them (the stream is read when it
starts, and again only if another process took a step meanwhile). Purchases that arrive
together travel together: their steps share the purchase writer's transactions
(``services.treasury.writing``), their payments one submission to the notary and their orders
one request to the mint (``POST /mint/orders/batch``). The notary records a submission all or
nothing, so a submission of several purchases it refuses is sent again purchase by purchase:
one purchase's fraud or stale note never rejects another's.

The handler drives a purchase as far as it can and answers how it ended; a service that does
not answer leaves the purchase open (503 retry-later) and the resumer, on a timer, drives on
every open purchase whose latest step is :data:`RESUME_IDLE` seconds old (a younger one is in
its driver's hands, in this worker or another). The notary answers an identical submission
with the same receipts and the mint an identical order with the same answer, so a step
repeated after a crash does nothing twice.

Nothing here is there for tests: they crash the treasury at every commit by hooks they install
themselves around the event store's transaction (a step's commit) and the league client's
calls (a peer's answer), then drive the purchase on with a fresh treasury on the same database
(tests/services/treasury/test_saga.py, tests/reliability/crashing.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable, NotaryConflict
from ledger.api.mint import Stamped
from ledger.api.treasury import (
    MAX_CHANGE_NOTES,
    MAX_ORDERS,
    BuyAnswer,
    BuyRequest,
    MintOrder,
    OrderAnswer,
    ReturnedPrint,
    mint_order,
)
from ledger.endorsements import Chain
from ledger.errors import (
    LedgerError,
    RetryLater,
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
from ledger.limits import MAX_CHAINS_PER_SLIP, MAX_ENDORSEMENT_BATCH, MAX_REQUEST_BODY_BYTES
from ledger.note_set import split_note_serial
from services.eventlog import StreamConflict
from services.kernel.writer import GroupWriter
from services.treasury.opening import check, opening
from services.treasury.projection import PROJECTION
from services.treasury.treasury import Treasury, issue_queue, make_change
from services.treasury.writing import Build, Group, Planned, Reads

log = logging.getLogger(__name__)

#: Seconds between the resumer's rounds over the open purchases.
RESUME_INTERVAL = 1.0
#: Most open purchases one round of the resumer drives.
RESUME_BATCH = 1000
#: Most open purchases the resumer drives at once (they travel together).
RESUME_AT_ONCE = 200
#: Seconds a purchase's latest step must be old before the resumer drives it: one younger is
#: in its driver's hands (here or in another worker), and driving it too would only repeat
#: its calls to the notary and the mint and lose the race for its next commit.
RESUME_IDLE = 5.0
#: The open purchases whose latest step is at least $2 seconds old (by the database's clock).
IDLE_PURCHASES = """
SELECT p.purchase_id FROM treasury.purchases p
WHERE p.step <> 'purchase-closed'
  AND (SELECT e.recorded_at FROM treasury.events e
       WHERE e.stream = 'purchase/' || p.purchase_id
       ORDER BY e.stream_version DESC LIMIT 1) <= clock_timestamp() - make_interval(secs => $2)
ORDER BY p.purchase_id LIMIT $1
"""
#: Most purchase submissions appended in one transaction; those beyond wait for the next one.
MAX_GROUP_STEPS = 200
#: Most submissions waiting for the writer; one beyond is refused as overloaded (503).
MAX_WAITING_STEPS = 20 * MAX_GROUP_STEPS
#: Most hops of the payments waiting for the notary (one submission takes at most
#: MAX_ENDORSEMENT_BATCH hops and MAX_CHAINS_PER_SLIP chains).
MAX_WAITING_HOPS = 8 * MAX_ENDORSEMENT_BATCH
#: Most orders waiting for the mint (one request takes at most MAX_ORDERS).
MAX_WAITING_ORDERS = 8 * MAX_ORDERS
#: Bytes of orders one request to the mint carries at most (well inside its body limit).
MAX_ORDERS_BYTES = MAX_REQUEST_BODY_BYTES // 2


@dataclass(frozen=True, slots=True)
class Peers:
    """Where the treasury reaches the notary and the mint (None: not configured)."""

    notary: LeagueClient | None
    mint: LeagueClient | None


#: One purchase's notarization: the payment notarized, or rejected.
Notarized = PaymentNotarized | PaymentRejected


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
        self.steps: GroupWriter[Sequence[Build], list[EventBody]] = GroupWriter(
            self._commit_group,
            units=lambda builds: 1,
            max_group=MAX_GROUP_STEPS,
            max_waiting=MAX_WAITING_STEPS,
            what="purchase steps",
            turn=treasury.store.turn,
        )
        #: The opened purchases' payments wait here and go to the notary together.
        self.notarizing: GroupWriter[PurchaseOpened, list[EventBody]] = GroupWriter(
            self._notarize_group,
            units=lambda opened: _hops(_submitted(opened)),
            max_group=MAX_ENDORSEMENT_BATCH,
            max_waiting=MAX_WAITING_HOPS,
            what="hops of payments to be notarized",
        )
        #: The signed orders wait here and go to the mint together.
        self.ordering: GroupWriter[MintOrder, OrderAnswer] = GroupWriter(
            self._order_group,
            units=lambda order: 1,
            max_group=MAX_ORDERS,
            max_waiting=MAX_WAITING_ORDERS,
            what="orders for the mint",
        )

    # -- the handler -------------------------------------------------------------------------

    async def buy(self, request: BuyRequest) -> BuyAnswer:
        """Open ``request``'s purchase (``services.treasury.opening``; a replay opens
        nothing, and is answered so) and drive it to its end."""
        price = await asyncio.to_thread(self._check, request)
        opened = await self._open(request, price)
        answer = await self.drive(request.purchase_id, opened)
        return answer if opened else answer.model_copy(update={"replayed": True})

    def _check(self, request: BuyRequest) -> int:
        """Everything that needs no database (CPU-bound: every chain's signatures)."""
        return check(self.treasury.manifest, request)

    async def _open(self, request: BuyRequest, price: int) -> list[EventBody]:
        """The purchase opened (its one step), or nothing for a replay."""
        return await self._commit([opening(request, price)])

    # -- the saga ----------------------------------------------------------------------------

    async def drive(self, purchase_id: str, known: Sequence[EventBody] = ()) -> BuyAnswer:
        """Take the purchase's next steps until it closes; :class:`RetryLater` when a service
        it needs does not answer (the purchase stays open for the resumer). ``known``: its
        steps as this process has just appended them (else its stream is read)."""
        lock = self._locks.setdefault(purchase_id, asyncio.Lock())
        if lock.locked():
            known = ()  # another driver is at it: what it does is read from the stream
        try:
            async with lock:
                steps = list(known) or await self._steps(purchase_id)
                while True:
                    if isinstance(steps[-1], PurchaseClosed):
                        return _answer(steps)
                    try:
                        steps += await self._step(steps)
                    except StreamConflict:
                        # Another process took this step: read the stream again and go on.
                        steps = await self._steps(purchase_id)
        finally:
            if not lock.locked():
                # A driver still waiting holds the lock it took; one arriving now makes a new
                # one, and the stream versions keep the two from taking a step twice.
                self._locks.pop(purchase_id, None)

    async def _steps(self, purchase_id: str) -> list[EventBody]:
        events = await self.treasury.store.read_stream(purchase_stream(purchase_id))
        if not events:
            raise LedgerError(f"no purchase {purchase_id!r}")  # pragma: no cover
        return [parse_event(event, TREASURY_EVENTS) for event in events]

    async def _step(self, steps: Sequence[EventBody]) -> list[EventBody]:
        """The next commit's steps (after the peer's answer it needs, if any)."""
        opened = steps[0]
        assert isinstance(opened, PurchaseOpened)
        last, version = steps[-1], len(steps)
        pid = opened.purchase_id
        if isinstance(last, PurchaseOpened):
            bodies = await self.notarizing.submit(opened)
            return await self._commit([_fixed(bodies, version)])
        if isinstance(last, PaymentNotarized):  # a stream of one step a commit
            (order,) = await self._sign_orders([(opened, last)])
            return await self._commit([_fixed([order], version)])
        if isinstance(last, OrderSigned):
            return await self._commit(await self._order(steps, last, version))
        notarized = next((s for s in steps if isinstance(s, PaymentNotarized)), None)
        if isinstance(last, PrintDelivered) and notarized is not None:
            return await self._commit(
                [
                    _returning(opened, notarized, version),
                    self._closing(opened, version + 1),
                ]
            )
        if isinstance(last, PaymentReturned):
            return await self._commit([self._closing(opened, version)])
        if isinstance(last, OrderRefused) and notarized is not None:
            return await self._commit([self._refunding(opened, notarized, version)])
        if isinstance(last, PaymentRejected):
            closed = PurchaseClosed(purchase_id=pid, outcome="rejected")
            return await self._commit([_fixed([closed], version)])
        raise LedgerError(f"purchase {pid}: no step follows {last.TYPE}")  # pragma: no cover

    # -- the notary ----------------------------------------------------------------------------

    async def _notarize_group(
        self, group: Sequence[PurchaseOpened]
    ) -> list[list[EventBody] | LedgerError]:
        """The payments of ``group`` recorded by the notary (one submission where they fit
        in one), and for each purchase the steps of its next commit: ``payment-notarized``
        with its signed ``order-signed``, or ``payment-rejected`` with ``purchase-closed``."""
        notary = self.peers.notary
        if notary is None:
            return [_unknown_peer("notary", "NOTARY_URL")] * len(group)
        batches = _batches(group)
        answered = await asyncio.gather(
            *(self._notarize_batch(notary, [group[k] for k in batch]) for batch in batches)
        )
        outcome: dict[int, Notarized | LedgerError] = {
            k: result
            for batch, results in zip(batches, answered, strict=True)
            for k, result in zip(batch, results, strict=True)
        }
        paid = [(k, n) for k, n in outcome.items() if isinstance(n, PaymentNotarized)]
        signed = await self._sign_orders([(group[k], n) for k, n in paid]) if paid else []
        orders = {k: order for (k, _), order in zip(paid, signed, strict=True)}
        results: list[list[EventBody] | LedgerError] = []
        for k, opened in enumerate(group):
            result = outcome[k]
            if isinstance(result, LedgerError):
                results.append(result)
            elif isinstance(result, PaymentNotarized):
                results.append([result, orders[k]])
            else:
                closed = PurchaseClosed(purchase_id=opened.purchase_id, outcome="rejected")
                results.append([result, closed])
        return results

    async def _notarize_batch(
        self, notary: LeagueClient, batch: Sequence[PurchaseOpened]
    ) -> list[Notarized | LedgerError]:
        """One submission for ``batch``; refused, each purchase's payment on its own."""
        if len(batch) == 1:
            return [await self._notarize_one(notary, batch[0])]
        chains = [chain for opened in batch for chain in _submitted(opened)]
        try:
            answer = await notary.notarize(chains)
        except LeagueProblem:
            # Recorded all or nothing: a refusal may be one purchase's alone.
            return list(
                await asyncio.gather(*(self._notarize_one(notary, opened) for opened in batch))
            )
        except LeagueUnreachable as exc:
            return [_notary_unreachable(exc)] * len(batch)
        results: list[Notarized | LedgerError] = []
        at = 0
        for opened in batch:
            hops = _hops(_submitted(opened))
            results.append(_notarized(opened, [r.index for r in answer.receipts[at : at + hops]]))
            at += hops
        return results

    async def _notarize_one(
        self, notary: LeagueClient, opened: PurchaseOpened
    ) -> Notarized | LedgerError:
        pid = opened.purchase_id
        try:
            # The returned print's hop to the mint is notarized with the payment (L-20): all
            # of it recorded, or none of it.
            answer = await notary.notarize(_submitted(opened))
        except NotaryConflict as conflict:
            return PaymentRejected(
                purchase_id=pid,
                reason=conflict.problem.detail or "fraud",
                proofs=tuple(c.proof for c in conflict.conflicts),
            )
        except LeagueProblem as problem:
            if problem.status >= 500 or problem.status == 429:
                return RetryLater(f"the notary cannot record the payment now: {problem}", 5)
            return PaymentRejected(purchase_id=pid, reason=problem.problem.detail or problem.slug)
        except LeagueUnreachable as exc:
            return _notary_unreachable(exc)
        return _notarized(opened, [receipt.index for receipt in answer.receipts])

    async def _sign_orders(
        self, paid: Sequence[tuple[PurchaseOpened, PaymentNotarized]]
    ) -> list[OrderSigned]:
        """The treasury's signed order of each purchase (one clock reading for them all)."""
        at = int((await self.treasury.store.now()).astimezone(UTC).timestamp())
        return await asyncio.to_thread(
            lambda: [self._signed_order(opened, notarized, at) for opened, notarized in paid]
        )

    def _signed_order(
        self, opened: PurchaseOpened, notarized: PaymentNotarized, at: int
    ) -> OrderSigned:
        request = opened.request
        upgrade = request.upgrade
        returned = None
        if upgrade is not None:
            if notarized.returned is None:  # pragma: no cover (the saga's own)
                raise LedgerError(f"purchase {opened.purchase_id}: the print's hop is unknown")
            # The whole chain travels: the mint verifies the buyer's hop to it itself.
            returned = ReturnedPrint(chain=upgrade.returned, notarized=notarized.returned)
        order = mint_order(
            self.treasury.key,
            self.treasury.manifest,
            order_id=opened.purchase_id,
            owner=request.buyer,
            title=request.title,
            finish="standard" if upgrade is None else upgrade.finish,
            at=at,
            returned=returned,
        )
        return OrderSigned(purchase_id=opened.purchase_id, order=order)

    # -- the mint ------------------------------------------------------------------------------

    async def _order_group(self, group: Sequence[MintOrder]) -> list[OrderAnswer | LedgerError]:
        """``group``'s orders sent to the mint in as few requests as their size allows."""
        mint = self.peers.mint
        if mint is None:
            return [_unknown_peer("mint", "MINT_URL")] * len(group)
        batches: list[list[MintOrder]] = [[]]
        size = 0
        for order in group:
            # A single's order is ~1 kB; an upgrade's carries the returned print's chain.
            weight = 1024 + (
                2048 * len(order.returned.chain.endorsements) if order.returned is not None else 0
            )
            if batches[-1] and size + weight > MAX_ORDERS_BYTES:
                batches.append([])
                size = 0
            batches[-1].append(order)
            size += weight
        answered = await asyncio.gather(*(self._order_batch(mint, b) for b in batches))
        return [result for results in answered for result in results]

    @staticmethod
    async def _order_batch(
        mint: LeagueClient, batch: Sequence[MintOrder]
    ) -> list[OrderAnswer | LedgerError]:
        try:
            outcomes = await mint.orders(batch)
        except LeagueProblem as problem:
            return [RetryLater(f"the mint refused the order for now: {problem}", 5)] * len(batch)
        except LeagueUnreachable as exc:
            return [RetryLater(f"the mint does not answer: {exc.diagnostics()}", 5)] * len(batch)
        return [
            RetryLater(f"the mint refused the order for now: {outcome}", 5)
            if isinstance(outcome, LeagueProblem)
            else outcome
            for outcome in outcomes
        ]

    async def _order(
        self, steps: Sequence[EventBody], signed: OrderSigned, version: int
    ) -> list[Build]:
        """The mint's answer to the order, and the builds of the purchase's last commit."""
        opened = steps[0]
        assert isinstance(opened, PurchaseOpened)
        notarized = next(s for s in steps if isinstance(s, PaymentNotarized))
        answer = await self.ordering.submit(signed.order)
        item = answer.item
        pid = opened.purchase_id
        request = opened.request
        mint_key = PublicKey.from_text(self.treasury.manifest.mint)
        if isinstance(item, Stamped):
            certificate = item.certificate
            certificate.verify(mint_key)
            finish = "standard" if request.upgrade is None else request.upgrade.finish
            if (certificate.issued_to, certificate.title, certificate.finish) != (
                request.buyer,
                request.title,
                finish,
            ):
                raise VerificationError(f"the mint stamped another print for purchase {pid}")
            delivered = PrintDelivered(purchase_id=pid, certificate=certificate)
            return [
                _returning(opened, notarized, version + 1, delivered),
                self._closing(opened, version + 2),
            ]
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
                    "back (%s): it stays open for the operator",
                    pid,
                    item.reason,
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
            if returned is None or (reissued.serial, reissued.issue, reissued.issued_to) != (
                returned.serial,
                returned.issue + 1,
                request.buyer,
            ):
                raise VerificationError(f"the mint issued another print again for purchase {pid}")
        refused = OrderRefused(purchase_id=pid, reason=item.reason, reissued=reissued)
        return [self._refunding(opened, notarized, version + 1, refused)]

    # -- the last commit ------------------------------------------------------------------------

    def _closing(self, opened: PurchaseOpened, version: int) -> Build:
        """``purchase-closed`` ``delivered`` at ``version``, with the change issued; refused
        (RetryLater) while the reserve cannot make it."""
        change = opened.paid - opened.price
        pid = opened.purchase_id

        async def build(group: Group) -> list[Planned]:
            supply = await group.supply()
            denominations = make_change(change, {d: row.reserve for d, row in supply.items()})
            if denominations is None or len(denominations) > MAX_CHANGE_NOTES:
                raise RetryLater(f"the reserve cannot make {change} marks of change yet", 5)
            wanted = Counter(denominations)
            returned = await group.returned_notes(
                Counter(
                    {
                        d: min(wanted[d], row.first_issued - row.circulating)
                        for d, row in supply.items()
                    }
                )
            )
            queue = issue_queue(supply, wanted, returned)
            planned: list[Planned] = []
            notes = []
            for denomination in denominations:
                number, issues = queue[denomination].pop(0)
                certificate = self.treasury.issue_note(
                    denomination,
                    number,
                    opened.request.buyer,
                    issues + 1,
                    group.next_seq + len(planned),
                )
                body = NoteIssued(certificate=certificate, request_id=pid, reason="change")
                planned.append((body, 2 * issues))
                notes.append(certificate)
            closed = PurchaseClosed(purchase_id=pid, outcome="delivered", notes=tuple(notes))
            return [*planned, (closed, version)]

        return build

    def _refunding(
        self,
        opened: PurchaseOpened,
        notarized: PaymentNotarized,
        version: int,
        refused: OrderRefused | None = None,
    ) -> Build:
        """``purchase-closed`` ``refunded`` at ``version`` (after ``refused``, when given):
        every paid note returned and issued again to the buyer."""
        pid = opened.purchase_id

        async def build(group: Group) -> list[Planned]:
            planned: list[Planned] = [] if refused is None else [(refused, version - 1)]
            notes = []
            for returned in _returns(opened, notarized):
                n = returned.issue
                planned.append((returned, 2 * n - 1))
                denomination, number = split_note_serial(returned.serial)
                certificate = self.treasury.issue_note(
                    denomination,
                    number,
                    opened.request.buyer,
                    n + 1,
                    group.next_seq + len(planned),
                )
                issued = NoteIssued(certificate=certificate, request_id=pid, reason="refund")
                planned.append((issued, 2 * n))
                notes.append(certificate)
            closed = PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes))
            return [*planned, (closed, version)]

        return build

    async def close(self) -> None:
        """Let the steps already waiting be appended."""
        await self.notarizing.close()
        await self.ordering.close()
        await self.steps.close()

    # -- the resumer -------------------------------------------------------------------------

    async def resume_all(self, idle: float = RESUME_IDLE) -> int:
        """Drive every open purchase whose latest step is ``idle`` seconds old once, many at
        once; how many closed."""
        rows = await self.treasury.store.fetch(IDLE_PURCHASES, RESUME_BATCH, idle)
        at_once = asyncio.Semaphore(RESUME_AT_ONCE)

        async def resume(purchase_id: str) -> bool:
            async with at_once:
                try:
                    await self.drive(purchase_id)
                except RetryLater as exc:
                    log.info("purchase %s waits: %s", purchase_id, exc.diagnostics())
                    return False
                return True

        closed = await asyncio.gather(*(resume(pid) for (pid,) in rows if pid not in self._held))
        return sum(closed)

    async def run(self, interval: float = RESUME_INTERVAL) -> None:
        """Resume on start-up and every ``interval`` seconds until cancelled."""
        while True:
            try:
                await self.resume_all()
            except LedgerError as exc:
                log.warning("resuming purchases: %s", exc.diagnostics())
            await asyncio.sleep(interval)

    # -- plumbing ----------------------------------------------------------------------------

    async def _commit(self, builds: Sequence[Build]) -> list[EventBody]:
        """The purchase steps ``builds`` make, appended under the log's lock with the
        projection's changes, in a transaction shared with the other purchases' steps waiting
        (one commit for the group: the disk's flush is the price of a step, not of each)."""
        return await self.steps.submit(builds)

    async def _commit_group(
        self, group: Sequence[Sequence[Build]]
    ) -> list[list[EventBody] | LedgerError]:
        """One transaction for ``group``: each submission built in turn, seeing what those
        before it planned, then every event appended in one batch and the projection written
        once. A submission refused before it plans fails alone; a stream that moved under the
        group (another process's step) makes each submission be taken again alone."""
        try:
            async with self.treasury.store.transaction() as tx:
                first_seq = await tx.lock()
                writing = Group(tx, first_seq, tx.now)
                openings = [b.key for builds in group for b in builds if isinstance(b, Reads)]
                if openings:
                    await writing.read_openings(openings)
                results: list[list[EventBody] | LedgerError] = []
                for builds in group:
                    results.append(await writing.take(builds))
                appended = await tx.append_batch(writing.events)
                if appended and appended[0].seq != first_seq:
                    raise RuntimeError(
                        f"the log appended at seq {appended[0].seq}, not {first_seq}"
                    )
                await PROJECTION.write(tx, writing.changes)
            return results
        except StreamConflict as conflict:
            if len(group) == 1:
                return [conflict]
            alone: list[list[EventBody] | LedgerError] = []
            for builds in group:
                alone.extend(await self._commit_group([builds]))
            return alone


def _fixed(bodies: Sequence[EventBody], version: int) -> Build:
    """A build of purchase steps known beforehand, the first at stream ``version``."""

    async def build(group: Group) -> list[Planned]:
        return [(body, version + k) for k, body in enumerate(bodies)]

    return build


def _returning(
    opened: PurchaseOpened,
    notarized: PaymentNotarized,
    version: int,
    delivered: PrintDelivered | None = None,
) -> Build:
    """``payment-returned`` at ``version`` with a ``note-returned`` per paid note (after
    ``delivered``, at the version before, when given)."""

    async def build(group: Group) -> list[Planned]:
        planned: list[Planned] = [] if delivered is None else [(delivered, version - 1)]
        planned += [(returned, 2 * returned.issue - 1) for returned in _returns(opened, notarized)]
        paid = PaymentReturned(
            purchase_id=opened.purchase_id,
            notes=tuple(chain.serial for chain in opened.request.payment),
        )
        return [*planned, (paid, version)]

    return build


def _submitted(opened: PurchaseOpened) -> tuple[Chain, ...]:
    """What a purchase submits to the notary: the payment, and an upgrade's returned print."""
    request = opened.request
    if request.upgrade is None:
        return request.payment
    return (*request.payment, request.upgrade.returned)


def _hops(chains: Sequence[Chain]) -> int:
    return sum(len(chain.endorsements) for chain in chains)


def _batches(group: Sequence[PurchaseOpened]) -> list[list[int]]:
    """``group``'s purchases (by place) in submissions the notary takes: at most
    MAX_CHAINS_PER_SLIP chains and MAX_ENDORSEMENT_BATCH hops each (a purchase larger goes
    alone), each serial once."""
    batches: list[list[int]] = []
    chains = hops = 0
    serials: set[str] = set()
    for k, opened in enumerate(group):
        submitted = _submitted(opened)
        names = {chain.serial for chain in submitted}
        if not batches or (
            chains + len(submitted) > MAX_CHAINS_PER_SLIP
            or hops + _hops(submitted) > MAX_ENDORSEMENT_BATCH
            or not serials.isdisjoint(names)
        ):
            batches.append([])
            chains = hops = 0
            serials = set()
        batches[-1].append(k)
        chains += len(submitted)
        hops += _hops(submitted)
        serials |= names
    return batches


def _notarized(opened: PurchaseOpened, indices: Sequence[int]) -> PaymentNotarized:
    """The payment notarized, from the notary's index of every hop submitted, chain by chain,
    hop by hop: each chain's last is its payment (the returned print's, last of all)."""
    ends = []
    at = 0
    for chain in opened.request.payment:
        at += len(chain.endorsements)
        ends.append(indices[at - 1])
    return PaymentNotarized(
        purchase_id=opened.purchase_id,
        notarized=tuple(ends),
        returned=None if opened.request.upgrade is None else indices[-1],
    )


def _notary_unreachable(exc: LeagueUnreachable) -> RetryLater:
    return RetryLater(f"the notary does not answer: {exc.diagnostics()}", 5)


def _unknown_peer(name: str, setting: str) -> RetryLater:
    return RetryLater(f"the treasury does not know where the {name} answers (set {setting})", 60)


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
        replayed=False,
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
