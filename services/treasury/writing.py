"""The purchases' steps of one transaction, appended together (``services.treasury.buying``).

Steps of many purchases wait for the treasury's purchase writer, which takes those waiting into
one transaction under the log's lock: each step is built in turn against what the database
holds *and* what the steps before it in the transaction changed (kept in memory as the
projection's changes, never written and read back), then the whole group is appended in one
batch and its projection written in one statement. A step built on the reserve, the notes or
the open purchases so sees exactly what it would see had each step before it committed alone.

A submission is a sequence of builds (a purchase's steps that may share a commit): each sees
the ones before it; the first refused fails the submission, a later one refused keeps those
before it (the purchase goes on from there later).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ledger.errors import (
    ChainError,
    LedgerError,
    RequestIdReused,
    RetryLater,
    RunExhaustedError,
    StaleIssueError,
)
from ledger.events import EventBody, PurchaseStep
from ledger.leaf import NewEvent
from services.eventlog import StoreTransaction
from services.treasury import tables
from services.treasury.projection import PROJECTION, TreasuryChanges

#: A body to append and the version its stream is expected at.
Planned = tuple[EventBody, int]
#: Builds a step's events in a group (reading through it), or refuses.
Build = Callable[["Group"], Awaitable[list[Planned]]]
#: Refusals a build may raise before it plans anything: they fail its submission alone.
REFUSED = (RetryLater, RequestIdReused, RunExhaustedError, StaleIssueError, ChainError)

#: What an opening reads of its purchase and paid notes, in one round trip.
READ_OPENING = """
SELECT
    (SELECT request_hash FROM treasury.purchases WHERE purchase_id = $1),
    (SELECT coalesce(json_agg(json_build_array(n.serial, n.issue, n.issued_to, p.purchase_id)),
                     '[]')
     FROM treasury.notes n LEFT JOIN treasury.paying p USING (serial)
     WHERE n.serial = ANY($2::text[])),
    (SELECT purchase_id FROM treasury.print_returns WHERE serial = $3 AND issue = $4)
"""


@dataclass(frozen=True, slots=True)
class Opening:
    """What the log holds of a purchase about to open: the request hash of a purchase of
    its id, each paid note's (issue, holder or None once returned, purchase it is paid into),
    and the purchase a returned print (serial, issue) went back in."""

    prior: bytes | None
    notes: dict[str, tuple[int, str | None, str | None]]
    print_returned: str | None


@dataclass
class Group:
    """One transaction's steps so far: their events and the projection's changes."""

    tx: StoreTransaction
    #: The seq of the group's first event.
    first_seq: int
    now: datetime
    events: list[NewEvent] = field(default_factory=list)
    changes: TreasuryChanges = field(default_factory=TreasuryChanges)
    _supply: dict[int, tables.SupplyRow] | None = None

    @property
    def next_seq(self) -> int:
        """The seq the next event planned will get."""
        return self.first_seq + len(self.events)

    async def take(self, builds: Sequence[Build]) -> list[EventBody] | LedgerError:
        """Build and plan a submission's steps: the purchase steps planned, or the first
        build's refusal."""
        steps: list[EventBody] = []
        for k, build in enumerate(builds):
            try:
                planned = await build(self)
            except REFUSED as refused:
                if k == 0:
                    return refused
                break
            for body, version in planned:
                self.events.append(body.new_event(expected_version=version))
                PROJECTION.apply(body, self.now, self.changes)
                if isinstance(body, PurchaseStep):
                    steps.append(body)
        return steps

    # -- reads through the group ---------------------------------------------------------

    async def supply(self) -> dict[int, tables.SupplyRow]:
        """The supply counters with the group's steps so far (read once a transaction)."""
        if self._supply is None:
            self._supply = await tables.supply(self.tx)
        first, out = self.changes.first_issued, self.changes.circulating
        return {
            d: tables.SupplyRow(d, row.notes, row.first_issued + first[d],
                                row.circulating + out[d])
            for d, row in self._supply.items()
        }

    async def opening(
        self, purchase_id: str, serials: Sequence[str], returned: tuple[str, int] | None
    ) -> Opening:
        """What an opening checks, as the group's steps so far left it."""
        row = await self.tx.fetchrow(
            READ_OPENING, purchase_id, list(serials),
            returned[0] if returned else None, returned[1] if returned else None,
        )
        assert row is not None  # a SELECT without FROM returns one row
        changes = self.changes
        stepped = changes.purchases.get(purchase_id)
        prior = stepped.request_hash if stepped is not None and stepped.buyer else (
            None if row[0] is None else bytes(row[0])
        )
        notes: dict[str, tuple[int, str | None, str | None]] = {}
        for serial, issue, holder, paying in json.loads(row[1]):
            if paying in changes.paid_off:
                paying = None
            notes[serial] = (issue, holder, paying)
        for serial in serials:
            state = changes.notes.get(serial)
            if state is not None:
                notes[serial] = (state[2], state[3], notes.get(serial, (0, None, None))[2])
            if serial in changes.paying:
                issue, holder, _ = notes[serial]
                notes[serial] = (issue, holder, changes.paying[serial][1])
        print_returned = None
        if returned is not None:
            print_returned = changes.print_returns.get(returned)
            if print_returned is None and row[2] is not None and row[2] not in (
                changes.unreturned
            ):
                print_returned = row[2]
        return Opening(prior, notes, print_returned)

    async def returned_notes(self, wanted: Counter[int]) -> dict[int, list[tuple[int, int]]]:
        """Up to ``wanted[d]`` notes of each denomination ``d`` in the reserve that were
        issued before, lowest number first, as (number, issue of the last issue): as
        ``tables.returned_notes`` with the group's returns and issues so far."""
        wanted = +wanted
        found: dict[int, list[tuple[int, int]]] = {d: [] for d in wanted}
        if not wanted:
            return found
        # The group's own: a note it touched is as the group left it.
        touched: dict[tuple[int, int], tuple[int, str | None]] = {
            (d, number): (issue, holder)
            for d, number, issue, holder in self.changes.notes.values()
        }
        reissued = Counter(d for (d, _), (_, holder) in touched.items() if holder is not None)
        rows = await tables.returned_notes(
            self.tx, Counter({d: k + reissued[d] for d, k in wanted.items()})
        )
        for d, notes in rows.items():
            for number, issue in notes:
                if (d, number) not in touched:
                    found.setdefault(d, []).append((number, issue))
        for (d, number), (issue, holder) in touched.items():
            if holder is None and d in wanted:
                found[d].append((number, issue))
        return {d: sorted(notes)[: wanted[d]] for d, notes in found.items()}
