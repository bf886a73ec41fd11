"""Rewards of witnessed tables paid from the reserve and stamped by the mint (Book IV.1–IV.6,
V.5; ``ledger.rewards``; docs/economy.md "Witnessed tables: rewards paid for real").

``POST /treasury/rewards`` takes a :class:`~ledger.api.rewards.RewardOrder` signed by the tables
key the manifest names (the tables service computes a closed table's due from the player's
witnessed campaign; the treasury pays what that key signs, and the auditor checks the
payment against the replayed tables). A table is paid once, like a purchase's step:

1. under the log's lock, ``reward-paid`` at version 0 of stream ``reward/<table>`` with the
   marks issued as notes of the reserve, largest denomination first (``note-issued``, reason
   ``reward``, request id the table, after it in the same transaction), and the treasury's
   signed mint orders of the prints (``reward.<table>.<k>``). A second order of the same table
   finds the stream written: the same order is answered the same payment (``replayed``),
   another order for that table is refused (409 ``request-id-reused``); two racing are decided
   one after the other by the lock, and the log's stream versions would refuse a second
   ``reward-paid`` anyway. A reserve that cannot make the marks now refuses it (503, retried);
2. the orders go to the mint through the purchases' order path (``Buyer.ordering``, ``POST
   /mint/orders/batch``); the mint stamps each once per order id inside its run (an exhausted
   run refuses it: the fixed supply is the bound) and answers a replay the same, so orders
   resent after any crash stamp nothing twice. A mint that does not answer is 503: the tables
   service asks again, and the same recorded orders are sent again.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC

from ledger.api.mint import Stamped
from ledger.api.rewards import RewardAnswer, RewardOrder, reward_order_id, reward_stream
from ledger.api.treasury import OrderAnswer, mint_order
from ledger.errors import RequestIdReused, RetryLater, VerificationError
from ledger.events import NoteIssued, RewardPaid
from ledger.keys import PublicKey
from services.treasury.buying import Buyer
from services.treasury.projection import PROJECTION
from services.treasury.treasury import Treasury, issue_queue, make_change
from services.treasury.writing import Group

#: The treasury's reward of one table, if it paid it: its seq and body.
PAID = "SELECT seq, body::text FROM treasury.events WHERE stream = $1 AND stream_version = 1"


class Rewarder:
    """The treasury's payments of witnessed tables' rewards."""

    def __init__(self, treasury: Treasury, buyer: Buyer) -> None:
        self.treasury = treasury
        self.buyer = buyer

    def check(self, order: RewardOrder) -> None:
        """The tables key signed ``order``, for this league and manifest."""
        manifest = self.treasury.manifest
        if manifest.tables is None:
            raise VerificationError("this league's manifest names no tables key: no rewards")
        manifest.check_addressed("treasury", "the reward order", order.league, order.manifest)
        order.verify(PublicKey.from_text(manifest.tables))

    async def pay(self, order: RewardOrder) -> RewardAnswer:
        """Pay ``order``'s table once (see the module), and answer how."""
        await asyncio.to_thread(self.check, order)
        seq, paid, replayed = await self._record(order)
        answers = await asyncio.gather(*(self.buyer.ordering.submit(o) for o in paid.orders))
        return RewardAnswer(
            table=order.table,
            replayed=replayed,
            paid=seq,
            notes=list(paid.notes),
            prints=[self._checked(order, answer) for answer in answers],
        )

    def _checked(self, order: RewardOrder, answer: OrderAnswer) -> OrderAnswer:
        item = answer.item
        if isinstance(item, Stamped):
            certificate = item.certificate
            certificate.verify(PublicKey.from_text(self.treasury.manifest.mint))
            if certificate.issued_to != order.player:
                raise VerificationError(f"the mint stamped table {order.table}'s print to another")
        return answer

    async def _record(self, order: RewardOrder) -> tuple[int, RewardPaid, bool]:
        """The table's ``reward-paid``: appended now, or as the log holds it (a replay)."""
        treasury = self.treasury
        stream = reward_stream(order.table)
        async with treasury.store.transaction() as tx:
            first_seq = await tx.lock()
            row = await tx.fetchrow(PAID, stream)
            if row is not None:
                paid = RewardPaid.from_wire(row[1])
                if paid.order.hash() != order.hash():
                    raise RequestIdReused(
                        f"table {order.table}'s reward was paid at the treasury's event {row[0]} "
                        f"on another order: a table is paid once"
                    )
                return row[0], paid, True
            group = Group(tx, first_seq, tx.now)
            supply = await group.supply()
            marks = order.due.marks
            denominations = make_change(marks, {d: r.reserve for d, r in supply.items()})
            if denominations is None:
                raise RetryLater(
                    f"the reserve cannot make {marks} marks now; notes return to it as they "
                    f"are spent",
                    60,
                )
            wanted = Counter(denominations)
            returned = await group.returned_notes(
                Counter(
                    {d: min(wanted[d], r.first_issued - r.circulating) for d, r in supply.items()}
                )
            )
            queue = issue_queue(supply, wanted, returned)
            issued = []
            for k, denomination in enumerate(denominations):
                number, issues = queue[denomination].pop(0)
                certificate = treasury.issue_note(
                    denomination, number, order.player, issues + 1, first_seq + 1 + k
                )
                body = NoteIssued(certificate=certificate, request_id=order.table, reason="reward")
                issued.append((body, 2 * issues))
            at = int(tx.now.astimezone(UTC).timestamp())
            orders = tuple(
                mint_order(
                    treasury.key,
                    treasury.manifest,
                    order_id=reward_order_id(order.table, k),
                    owner=order.player,
                    title=wanted_print.title,
                    finish=wanted_print.finish,
                    at=at,
                )
                for k, wanted_print in enumerate(order.due.prints)
            )
            paid = RewardPaid(
                order=order, notes=tuple(body.certificate for body, _ in issued), orders=orders
            )
            await tx.append_batch(
                [paid.new_event(0), *(body.new_event(version) for body, version in issued)]
            )
            for body, _ in issued:
                PROJECTION.apply(body, tx.now, group.changes)
            await PROJECTION.write(tx, group.changes)
        return first_seq, paid, False
