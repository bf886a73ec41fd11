"""The treasury's projection: supply counters, issued notes and faucet days, from the log alone.

:meth:`TreasuryProjection.project` is pure: what one ``note-issued`` or ``note-returned``
event changes. The claiming transaction writes the sum for the events it appends; ``league
verify`` and ``league rebuild`` fold the whole log through the same function
(``services.kernel.projections``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ledger.events import TREASURY_EVENTS, NoteIssued, NoteReturned, parse_event
from ledger.leaf import Event
from services.eventlog import StoreTransaction
from services.kernel.projections import Snapshot


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


def note_number(serial: str) -> tuple[int, int]:
    """(denomination, number) of a serial the log holds (``CZ-M25-000007``): the log's
    certificates were checked against the note set when they were made."""
    _, denomination, number = serial.split("-")
    return int(denomination[1:]), int(number)


class TreasuryProjection:
    """The treasury's projection tables as a function of its log."""

    name = "treasury"

    def empty(self) -> TreasuryChanges:
        return TreasuryChanges()

    def project(self, event: Event, into: TreasuryChanges) -> None:
        body = parse_event(event, TREASURY_EVENTS)
        if isinstance(body, NoteIssued):
            self.issued(into, body, event.recorded_at)
        elif isinstance(body, NoteReturned):
            denomination, number = note_number(body.serial)
            into.circulating[denomination] -= 1
            into.notes[body.serial] = (denomination, number, body.issue, None)

    @staticmethod
    def issued(into: TreasuryChanges, body: NoteIssued, at: datetime) -> None:
        """What one issue adds. The claiming transaction calls it with the bodies it has just
        built, sparing a parse of what it made."""
        certificate = body.certificate
        number = note_number(certificate.serial)[1]
        if certificate.issue == 1:
            into.first_issued[certificate.denomination] += 1
        into.circulating[certificate.denomination] += 1
        into.notes[certificate.serial] = (
            certificate.denomination, number, certificate.issue, certificate.issued_to
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

    async def reset(self, tx: StoreTransaction) -> None:
        await tx.execute(
            "UPDATE treasury.supply SET first_issued = 0, circulating = 0 "
            "WHERE first_issued <> 0 OR circulating <> 0"
        )
        await tx.execute("DELETE FROM treasury.notes")
        await tx.execute("DELETE FROM treasury.faucet")

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        queries = {
            "treasury.supply": "SELECT denomination, notes, first_issued, circulating "
            "FROM treasury.supply",
            "treasury.notes": "SELECT serial, denomination, number, issue, issued_to "
            "FROM treasury.notes",
            "treasury.faucet": "SELECT owner_key, day, marks FROM treasury.faucet",
        }
        return {
            table: frozenset(tuple(row) for row in await tx.fetch(query))
            for table, query in queries.items()
        }


PROJECTION = TreasuryProjection()
