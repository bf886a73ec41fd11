"""The treasury's projection: supply counters, issued notes, faucet days and purchases, from
the log alone.

:meth:`TreasuryProjection.project` is pure: what one ``note-issued``, ``note-returned`` or
purchase event changes. The claiming transaction writes the sum for the events it appends; ``league
verify`` and ``league rebuild`` fold the whole log through the same function
(``services.kernel.projections``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ledger.events import (
    TREASURY_EVENTS,
    EventBody,
    NoteIssued,
    NoteReturned,
    PurchaseClosed,
    PurchaseOpened,
    PurchaseStep,
    parse_event,
)
from ledger.leaf import Event
from ledger.note_set import split_note_serial
from services.eventlog import StoreTransaction
from services.kernel.projections import Snapshot, read_tables


@dataclass
class Stepped:
    """What events change of one purchase's row: its buyer and request hash (from its opening
    event, when among them), its latest step and how many steps they add."""

    buyer: str = ""
    request_hash: bytes = b"\0" * 32
    step: str = ""
    steps: int = 0


@dataclass
class TreasuryChanges:
    """What some events change in the treasury's tables."""

    #: Notes issued for the first time, by denomination.
    first_issued: Counter[int] = field(default_factory=Counter)
    #: Notes out, by denomination (issues add one, returns take one away).
    circulating: Counter[int] = field(default_factory=Counter)
    #: Each touched note's state after the events: serial -> (denomination, number, issue,
    #: issued to, or None once returned).
    notes: dict[str, tuple[int, int, int, str | None]] = field(default_factory=dict)
    #: Marks the faucet issued to a key on a UTC day (the day of the event's database time).
    faucet: Counter[tuple[str, object]] = field(default_factory=Counter)
    #: Purchases stepped, by purchase id.
    purchases: dict[str, Stepped] = field(default_factory=dict)
    #: Notes newly paid into an open purchase: serial -> (issue, purchase id).
    paying: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: Purchases closed whose paid notes were paying before these events.
    paid_off: set[str] = field(default_factory=set)
    #: Prints newly returned into a purchase (L-20): (serial, issue) -> purchase id.
    print_returns: dict[tuple[str, int], str] = field(default_factory=dict)
    #: Purchases rejected whose returned print was recorded before these events.
    unreturned: set[str] = field(default_factory=set)


#: Every treasury write of one transaction as one statement (one round trip under the lock);
#: each part is a no-op for empty arrays.
WRITE = """
WITH supply AS (
    UPDATE treasury.supply s
    SET first_issued = s.first_issued + w.f, circulating = s.circulating + w.c
    FROM unnest($1::int[], $2::int[], $3::int[]) AS w(d, f, c)
    WHERE s.denomination = w.d
), notes AS (
    INSERT INTO treasury.notes (serial, denomination, number, issue, issued_to)
    SELECT * FROM unnest($4::text[], $5::int[], $6::int[], $7::int[], $8::text[])
    ON CONFLICT (serial)
    DO UPDATE SET issue = excluded.issue, issued_to = excluded.issued_to
)
INSERT INTO treasury.faucet (owner_key, day, marks)
SELECT * FROM unnest($9::text[], $10::date[], $11::int[])
ON CONFLICT (owner_key, day) DO UPDATE SET marks = treasury.faucet.marks + excluded.marks
"""

#: The purchases' part of a transaction's writes (a no-op for empty arrays).
WRITE_PURCHASES = """
WITH purchases AS (
    INSERT INTO treasury.purchases AS p (purchase_id, buyer, request_hash, step, steps)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::int[])
    ON CONFLICT (purchase_id)
    DO UPDATE SET step = excluded.step, steps = p.steps + excluded.steps
), paying AS (
    INSERT INTO treasury.paying (serial, issue, purchase_id)
    SELECT * FROM unnest($6::text[], $7::int[], $8::text[])
)
DELETE FROM treasury.paying WHERE purchase_id = ANY($9::text[])
"""

#: The prints returned into purchases (L-20; a no-op for empty arrays).
WRITE_PRINT_RETURNS = """
WITH returns AS (
    INSERT INTO treasury.print_returns (serial, issue, purchase_id)
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
)
DELETE FROM treasury.print_returns WHERE purchase_id = ANY($4::text[])
"""


class TreasuryProjection:
    """The treasury's projection tables as a function of its log."""

    name = "treasury"

    def empty(self) -> TreasuryChanges:
        return TreasuryChanges()

    def project(self, event: Event, into: TreasuryChanges) -> None:
        self.apply(parse_event(event, TREASURY_EVENTS), event.recorded_at, into)

    def apply(self, body: EventBody, at: datetime, into: TreasuryChanges) -> None:
        """What one event's body, recorded at ``at``, changes: a transaction that builds its
        events projects them from the bodies it made, sparing a parse of each."""
        if isinstance(body, NoteIssued):
            self.issued(into, body, at)
        elif isinstance(body, NoteReturned):
            self.returned(into, body)
        elif isinstance(body, PurchaseStep):
            self.stepped(into, body)

    @staticmethod
    def returned(into: TreasuryChanges, body: NoteReturned) -> None:
        """What one return changes: the note is back in the reserve."""
        denomination, number = split_note_serial(body.serial)
        into.circulating[denomination] -= 1
        into.notes[body.serial] = (denomination, number, body.issue, None)

    @staticmethod
    def stepped(into: TreasuryChanges, body: PurchaseStep) -> None:
        """What one step of a purchase's saga changes."""
        row = into.purchases.setdefault(body.purchase_id, Stepped())
        row.step = body.TYPE
        row.steps += 1
        if isinstance(body, PurchaseOpened):
            row.buyer, row.request_hash = body.request.buyer, body.request.hash()
            for chain in body.request.payment:
                into.paying[chain.serial] = (chain.issue, body.purchase_id)
            if body.request.upgrade is not None:
                returned = body.request.upgrade.returned
                into.print_returns[(returned.serial, returned.issue)] = body.purchase_id
        elif isinstance(body, PurchaseClosed):
            paid = [s for s, (_, p) in into.paying.items() if p == body.purchase_id]
            for serial in paid:
                del into.paying[serial]
            if not paid:
                into.paid_off.add(body.purchase_id)
            if body.outcome == "rejected":  # its print never moved: it may be returned again
                back = [k for k, p in into.print_returns.items() if p == body.purchase_id]
                for key in back:
                    del into.print_returns[key]
                if not back:
                    into.unreturned.add(body.purchase_id)

    @staticmethod
    def issued(into: TreasuryChanges, body: NoteIssued, at: datetime) -> None:
        """What one issue adds. The claiming transaction calls it with the bodies it has just
        built, sparing a parse of what it made."""
        certificate = body.certificate
        number = split_note_serial(certificate.serial).number
        if certificate.issue == 1:
            into.first_issued[certificate.denomination] += 1
        into.circulating[certificate.denomination] += 1
        into.notes[certificate.serial] = (
            certificate.denomination,
            number,
            certificate.issue,
            certificate.issued_to,
        )
        if body.reason == "claim":
            into.faucet[(certificate.issued_to, at.astimezone(UTC).date())] += (
                certificate.denomination
            )

    async def write(self, tx: StoreTransaction, changes: TreasuryChanges) -> None:
        denominations = sorted(set(changes.first_issued) | set(changes.circulating))
        notes = list(changes.notes.items())
        await tx.execute(
            WRITE,
            denominations,
            [changes.first_issued[d] for d in denominations],
            [changes.circulating[d] for d in denominations],
            [serial for serial, _ in notes],
            *[[state[i] for _, state in notes] for i in range(4)],
            [owner for owner, _ in changes.faucet],
            [day for _, day in changes.faucet],
            list(changes.faucet.values()),
        )
        if changes.purchases or changes.paid_off:
            purchases = list(changes.purchases.items())
            paying = list(changes.paying.items())
            await tx.execute(
                WRITE_PURCHASES,
                [purchase for purchase, _ in purchases],
                [row.buyer for _, row in purchases],
                [row.request_hash for _, row in purchases],
                [row.step for _, row in purchases],
                [row.steps for _, row in purchases],
                [serial for serial, _ in paying],
                [issue for _, (issue, _) in paying],
                [purchase for _, (_, purchase) in paying],
                sorted(changes.paid_off),
            )
        if changes.print_returns or changes.unreturned:
            returns = list(changes.print_returns.items())
            await tx.execute(
                WRITE_PRINT_RETURNS,
                [serial for (serial, _), _ in returns],
                [issue for (_, issue), _ in returns],
                [purchase for _, purchase in returns],
                sorted(changes.unreturned),
            )

    async def reset(self, tx: StoreTransaction) -> None:
        await tx.execute(
            "UPDATE treasury.supply SET first_issued = 0, circulating = 0 "
            "WHERE first_issued <> 0 OR circulating <> 0"
        )
        await tx.execute("DELETE FROM treasury.notes")
        await tx.execute("DELETE FROM treasury.faucet")
        await tx.execute("DELETE FROM treasury.purchases")
        await tx.execute("DELETE FROM treasury.paying")
        await tx.execute("DELETE FROM treasury.print_returns")

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        queries = {
            "treasury.supply": "SELECT denomination, notes, first_issued, circulating "
            "FROM treasury.supply",
            "treasury.notes": "SELECT serial, denomination, number, issue, issued_to "
            "FROM treasury.notes",
            "treasury.faucet": "SELECT owner_key, day, marks FROM treasury.faucet",
            "treasury.purchases": "SELECT purchase_id, buyer, request_hash, step, steps "
            "FROM treasury.purchases",
            "treasury.paying": "SELECT serial, issue, purchase_id FROM treasury.paying",
            "treasury.print_returns": "SELECT serial, issue, purchase_id "
            "FROM treasury.print_returns",
        }
        return await read_tables(tx, queries)


PROJECTION = TreasuryProjection()
