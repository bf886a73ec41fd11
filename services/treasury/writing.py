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

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import orjson

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

#: Returned notes a group reads at least per denomination, for the closings after the first.
RETURNED_AHEAD = 32

#: What the openings of a group read, for all of them in one round trip.
READ_OPENINGS = """
SELECT
    (SELECT coalesce(json_agg(json_build_array(purchase_id, encode(request_hash, 'hex'))), '[]')
     FROM treasury.purchases WHERE purchase_id = ANY($1::text[])),
    (SELECT coalesce(json_agg(json_build_array(n.serial, n.issue, n.issued_to, p.purchase_id)),
                     '[]')
     FROM treasury.notes n LEFT JOIN treasury.paying p USING (serial)
     WHERE n.serial = ANY($2::text[])),
    (SELECT coalesce(json_agg(json_build_array(r.serial, r.issue, r.purchase_id)), '[]')
     FROM treasury.print_returns r JOIN unnest($3::text[], $4::int[]) AS w(serial, issue)
     ON r.serial = w.serial AND r.issue = w.issue)
"""


@dataclass(frozen=True, slots=True)
class OpeningKey:
    """What an opening reads: its purchase id, the serials it pays with, and an upgrade's
    returned print (serial, issue)."""

    purchase_id: str
    serials: tuple[str, ...]
    returned: tuple[str, int] | None


@dataclass(frozen=True, slots=True)
class Reads:
    """An opening's build, with what it reads: the writer reads it for every opening of its
    group at once, before the first is built (nothing of the group is written before its
    end, so each sees what it would have read alone)."""

    key: OpeningKey
    build: Build

    async def __call__(self, group: Group) -> list[Planned]:
        return await self.build(group)


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
    #: What the group's openings read, read together (:meth:`read_openings`): the purchase
    #: ids read, the request hashes found, the notes (issue, holder, purchase paid into) and
    #: the prints returned into a purchase.
    _read: set[str] = field(default_factory=set)
    _priors: dict[str, bytes] = field(default_factory=dict)
    _notes: dict[str, tuple[int, str | None, str | None]] = field(default_factory=dict)
    _returns: dict[tuple[str, int], str] = field(default_factory=dict)
    #: The returned notes read so far, per denomination (as the transaction began), and
    #: whether that is every one the reserve holds.
    _returned_rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    _returned_all: dict[int, bool] = field(default_factory=dict)

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
            d: tables.SupplyRow(d, row.notes, row.first_issued + first[d], row.circulating + out[d])
            for d, row in self._supply.items()
        }

    async def read_openings(self, keys: Sequence[OpeningKey]) -> None:
        """Read what ``keys``' openings check, in one round trip, before any is built."""
        returned = [key.returned for key in keys if key.returned is not None]
        row = await self.tx.fetchrow(
            READ_OPENINGS,
            [key.purchase_id for key in keys],
            sorted({serial for key in keys for serial in key.serials}),
            [serial for serial, _ in returned],
            [issue for _, issue in returned],
        )
        assert row is not None  # a SELECT without FROM returns one row
        self._read.update(key.purchase_id for key in keys)
        self._priors.update((pid, bytes.fromhex(digest)) for pid, digest in orjson.loads(row[0]))
        self._notes.update(
            (serial, (issue, holder, paying))
            for serial, issue, holder, paying in orjson.loads(row[1])
        )
        self._returns.update(((serial, issue), pid) for serial, issue, pid in orjson.loads(row[2]))

    async def opening(
        self, purchase_id: str, serials: Sequence[str], returned: tuple[str, int] | None
    ) -> Opening:
        """What an opening checks, as the group's steps so far left it."""
        if purchase_id not in self._read:
            await self.read_openings([OpeningKey(purchase_id, tuple(serials), returned)])
        found_prior = self._priors.get(purchase_id)
        found = [(serial, *self._notes[serial]) for serial in serials if serial in self._notes]
        found_return = None if returned is None else self._returns.get(returned)
        changes = self.changes
        stepped = changes.purchases.get(purchase_id)
        prior = stepped.request_hash if stepped is not None and stepped.buyer else found_prior
        notes: dict[str, tuple[int, str | None, str | None]] = {}
        for serial, issue, holder, paying in found:
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
            if (
                print_returned is None
                and found_return is not None
                and found_return not in (changes.unreturned)
            ):
                print_returned = found_return
        return Opening(prior, notes, print_returned)

    async def _returned(self, wanted: Counter[int]) -> dict[int, list[tuple[int, int]]]:
        """``tables.returned_notes`` as the transaction began, read once for the group's
        closings: the first read takes more than it is asked (:data:`RETURNED_AHEAD` a
        denomination at least), a later one asking beyond what was read reads again. Nothing
        but the group writes the notes under the log's lock, and :meth:`returned_notes`
        lays the group's own changes over these rows."""
        short = {
            d: k
            for d, k in wanted.items()
            if k > len(self._returned_rows.get(d, ())) and not self._returned_all.get(d, False)
        }
        if short:
            ask = Counter({d: max(2 * k, RETURNED_AHEAD) for d, k in short.items()})
            for d, notes in (await tables.returned_notes(self.tx, ask)).items():
                self._returned_rows[d] = notes
                self._returned_all[d] = len(notes) < ask[d]
        return {d: self._returned_rows.get(d, [])[:k] for d, k in wanted.items()}

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
            (d, number): (issue, holder) for d, number, issue, holder in self.changes.notes.values()
        }
        reissued = Counter(d for (d, _), (_, holder) in touched.items() if holder is not None)
        rows = await self._returned(Counter({d: k + reissued[d] for d, k in wanted.items()}))
        for d, notes in rows.items():
            for number, issue in notes:
                if (d, number) not in touched:
                    found.setdefault(d, []).append((number, issue))
        for (d, number), (issue, holder) in touched.items():
            if holder is None and d in wanted:
                found[d].append((number, issue))
        return {d: sorted(notes)[: wanted[d]] for d, notes in found.items()}
