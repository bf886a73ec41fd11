"""The mint's projection: run counters, owned counts and daily allowances, from the log alone.

:meth:`MintProjection.project` is pure: what one ``print-stamped`` event adds. The stamping
transaction writes the sum for the events it appends; ``league verify`` and ``league rebuild``
fold the whole log through the same function (``services.kernel.projections``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ledger.address import address_of
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.print_runs import MISPRINT
from services.eventlog import StoreTransaction
from services.kernel.projections import Snapshot, read_tables
from services.mint.tables import columns


@dataclass
class MintChanges:
    """What some events add to the mint's tables."""

    #: Prints stamped, by (title, finish).
    runs: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: Prints stamped to a key, by (owner key, address, title, finish).
    owned: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    #: Prints stamped to a key on a UTC day (the day of the event's database time).
    allowances: Counter[tuple[str, object]] = field(default_factory=Counter)


#: Every mint write of one transaction as one statement (one round trip under the log lock);
#: each part is a no-op for empty arrays.
WRITE = """
WITH runs AS (
    UPDATE mint.runs r SET stamped = r.stamped + w.n
    FROM unnest($1::text[], $2::text[], $3::int[]) AS w(title, finish, n)
    WHERE r.title = w.title AND r.finish = w.finish
), owned AS (
    INSERT INTO mint.owned (owner_key, address, title, finish, owned)
    SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::int[])
    ON CONFLICT (owner_key, title, finish)
    DO UPDATE SET owned = mint.owned.owned + excluded.owned
)
INSERT INTO mint.allowances (owner_key, day, stamped)
SELECT * FROM unnest($9::text[], $10::date[], $11::int[])
ON CONFLICT (owner_key, day) DO UPDATE SET stamped = mint.allowances.stamped + excluded.stamped
"""


class MintProjection:
    """The mint's projection tables as a function of its log."""

    name = "mint"

    def empty(self) -> MintChanges:
        return MintChanges()

    def project(self, event: Event, into: MintChanges) -> None:
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintStamped):
            owner = PublicKey.from_text(body.certificate.issued_to)
            self.stamped(into, body, address_of(owner), event.recorded_at)

    @staticmethod
    def stamped(into: MintChanges, body: PrintStamped, address: str, at: datetime) -> None:
        """What one stamp adds. The stamping transaction calls it with the bodies it has just
        built (their owner's address already known), sparing a parse of what it made."""
        certificate = body.certificate
        if certificate.finish == MISPRINT:  # outside the census and every run (V.8)
            return
        owner = certificate.issued_to
        into.runs[(certificate.title, certificate.finish)] += 1
        into.owned[(owner, address, certificate.title, certificate.finish)] += 1
        if not body.ordered:  # a print bought with notes is outside the owner's allowance
            into.allowances[(owner, at.astimezone(UTC).date())] += 1

    async def write(self, tx: StoreTransaction, changes: MintChanges) -> None:
        await tx.execute(
            WRITE,
            *columns(changes.runs, 2),
            *columns(changes.owned, 4),
            *columns(changes.allowances, 2),
        )

    async def reset(self, tx: StoreTransaction) -> None:
        await tx.execute("UPDATE mint.runs SET stamped = 0 WHERE stamped <> 0")
        await tx.execute("DELETE FROM mint.owned")
        await tx.execute("DELETE FROM mint.allowances")

    async def snapshot(self, tx: StoreTransaction) -> Snapshot:
        queries = {
            "mint.runs": "SELECT title, finish, first_number, size, stamped FROM mint.runs",
            "mint.owned": "SELECT owner_key, address, title, finish, owned FROM mint.owned",
            "mint.allowances": "SELECT owner_key, day, stamped FROM mint.allowances",
        }
        return await read_tables(tx, queries)


PROJECTION = MintProjection()
