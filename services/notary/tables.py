"""The notary's tables (schema ``notary``), read and written in SQL through its event store.

``hops``, ``holders`` and ``conflicts`` are the projection (``services.notary.projection``);
``prints`` is the mint's feed as followed, ``notes`` and ``note_returns`` the treasury's
(``services.notary.following``); ``receipts`` keeps each receipt once made
(``services.notary.receipts``). See migrations 0004 and 0007.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ledger.endorsements import Endorsement
from services.eventlog import EventStore, StoreTransaction


@dataclass(frozen=True, slots=True)
class FollowedPrint:
    """One issue of a print as the mint's feed stamped it (or issued it again, L-20), and its
    return if it came back."""

    serial: str
    issue: int
    certificate: dict[str, Any]
    certificate_hash: bytes
    mint_seq: int
    leaf_hash: bytes
    #: The seq of its print-returned event in the mint's log, once it came back.
    returned: int | None = None


@dataclass(frozen=True, slots=True)
class FollowedNote:
    """One issue of a note as the treasury's feed issued it, and its return if it came back."""

    serial: str
    issue: int
    certificate: dict[str, Any]
    certificate_hash: bytes
    treasury_seq: int
    leaf_hash: bytes
    #: The seq of its note-returned event in the treasury's log, once it came back.
    returned: int | None = None


@dataclass(frozen=True, slots=True)
class FollowedReturn:
    """A certificate handed back to its issuer, as the issuer's feed recorded it: a note paid
    to the treasury, or a print returned to the mint for an upgrade (L-20)."""

    serial: str
    issue: int
    notarized: int
    #: The purchase it was paid in (a print's: the mint order's id, the purchase's).
    purchase_id: str
    #: The returning event's seq in the issuer's log.
    seq: int


@dataclass(frozen=True, slots=True)
class RecordedHop:
    """The endorsement recorded at one hop, and its event's ``seq`` in the notary's log."""

    endorsement: Endorsement
    hash: bytes
    seq: int


@dataclass
class ItemState:
    """What a notarizing transaction knows of one item, read under the log's lock."""

    #: Recorded hops by (issue, hop).
    hops: dict[tuple[int, int], RecordedHop] = field(default_factory=dict)
    #: The hashes of the conflicting endorsements already refused, by (issue, hop).
    conflicts: set[tuple[int, int, bytes]] = field(default_factory=set)
    #: Events of the item's stream in the notary's log.
    events: int = 0


CURRENT_PRINTS = """
SELECT DISTINCT ON (p.serial)
       p.serial, p.issue, p.certificate_hash, p.certificate->>'sig', p.mint_seq, r.mint_seq
FROM notary.prints p LEFT JOIN notary.print_returns r USING (serial, issue)
WHERE p.serial = ANY($1::text[]) ORDER BY p.serial, p.issue DESC
"""
PRINT_ISSUES = """
SELECT p.serial, p.issue, p.certificate::text, p.certificate_hash, p.mint_seq, p.leaf_hash,
       r.mint_seq
FROM notary.prints p LEFT JOIN notary.print_returns r USING (serial, issue)
WHERE p.serial = $1 ORDER BY p.issue
"""


def _print(row: Any) -> FollowedPrint:
    return FollowedPrint(
        row[0], row[1], orjson.loads(row[2]), bytes(row[3]), row[4], bytes(row[5]), row[6]
    )


@dataclass(frozen=True, slots=True)
class CurrentIssue:
    """The newest issue of an item as its issuer's feed issued it: what a chain is held
    against before it is notarized (``following.check_current``), and what its certificate
    must be, byte for byte with its signature, to be the one followed."""

    serial: str
    issue: int
    certificate_hash: bytes
    sig: str
    #: The seq of its issuing event in the issuer's log.
    seq: int
    #: The seq of its return in the issuer's log, once it came back.
    returned: int | None

    def issued(self, hash_: bytes, sig: str) -> bool:
        """Whether a certificate of this hash and signature is this issue, as followed."""
        return hmac.compare_digest(self.certificate_hash, hash_) and self.sig == sig


def _current(row: Any) -> CurrentIssue:
    return CurrentIssue(row[0], row[1], bytes(row[2]), row[3], row[4], row[5])


async def followed_prints(
    reader: EventStore | StoreTransaction, serials: Iterable[str]
) -> dict[str, CurrentIssue]:
    """The newest issue of each of ``serials`` the mint's feed has stamped or issued again."""
    rows = await reader.fetch(CURRENT_PRINTS, sorted(set(serials)))
    return {row[0]: _current(row) for row in rows}


async def print_issues(reader: EventStore, serial: str) -> list[FollowedPrint]:
    """Every issue of ``serial`` (its stamp first), with its return if it came back."""
    return [_print(row) for row in await reader.fetch(PRINT_ISSUES, serial)]


PRINT_RETURNS = """
SELECT serial, issue, notarized, order_id, mint_seq FROM notary.print_returns
WHERE serial = $1 ORDER BY issue
"""


async def print_returns(reader: EventStore, serial: str) -> list[FollowedReturn]:
    """Every return of ``serial`` to the mint, oldest first."""
    return [FollowedReturn(*row) for row in await reader.fetch(PRINT_RETURNS, serial)]


CURRENT_NOTES = """
SELECT DISTINCT ON (n.serial)
       n.serial, n.issue, n.certificate_hash, n.certificate->>'sig', n.treasury_seq, r.treasury_seq
FROM notary.notes n LEFT JOIN notary.note_returns r USING (serial, issue)
WHERE n.serial = ANY($1::text[]) ORDER BY n.serial, n.issue DESC
"""
NOTE_ISSUES = """
SELECT serial, issue, certificate::text, certificate_hash, treasury_seq, leaf_hash
FROM notary.notes WHERE serial = $1 ORDER BY issue
"""


def _note(row: Any) -> FollowedNote:
    returned = row[6] if len(row) > 6 else None
    return FollowedNote(
        row[0], row[1], orjson.loads(row[2]), bytes(row[3]), row[4], bytes(row[5]), returned
    )


async def current_notes(
    reader: EventStore | StoreTransaction, serials: Iterable[str]
) -> dict[str, CurrentIssue]:
    """The newest issue of each of ``serials`` the treasury's feed has issued."""
    rows = await reader.fetch(CURRENT_NOTES, sorted(set(serials)))
    return {row[0]: _current(row) for row in rows}


async def note_issues(store: EventStore, serial: str) -> list[FollowedNote]:
    """Every issue of ``serial``, oldest first."""
    rows = await store.fetch(NOTE_ISSUES, serial)
    return [_note(row) for row in rows]


async def note_returns(store: EventStore, serial: str) -> list[FollowedReturn]:
    """Every return of ``serial`` to the treasury, oldest first."""
    rows = await store.fetch(
        "SELECT serial, issue, notarized, purchase_id, treasury_seq FROM notary.note_returns"
        " WHERE serial = $1 ORDER BY issue",
        serial,
    )
    return [FollowedReturn(*row) for row in rows]


#: The hops, refused conflicts and stream versions of some items, as one statement.
READ_ITEMS = """
SELECT
    (SELECT coalesce(json_agg(json_build_array(serial, issue, hop, endorsement::text, seq)), '[]')
     FROM notary.hops WHERE serial = ANY($1::text[])),
    (SELECT coalesce(json_agg(json_build_array(serial, issue, hop,
                                               encode(endorsement_hash, 'hex'))), '[]')
     FROM notary.conflicts WHERE serial = ANY($1::text[])),
    (SELECT coalesce(json_agg(json_build_array(serial, events)), '[]')
     FROM notary.holders WHERE serial = ANY($1::text[]))
"""


async def read_items(tx: StoreTransaction, serials: Iterable[str]) -> dict[str, ItemState]:
    """Every recorded hop, refused conflict and stream version of ``serials``."""
    wanted = sorted(set(serials))
    items = {serial: ItemState() for serial in wanted}
    row = await tx.fetchrow(READ_ITEMS, wanted)
    if row is None:  # a SELECT without FROM returns exactly one row
        return items
    hops, conflicts, versions = (orjson.loads(column) for column in row)
    for serial, issue, hop, text, seq in hops:
        endorsement = Endorsement.from_wire(text)
        items[serial].hops[(issue, hop)] = RecordedHop(endorsement, endorsement.hash(), seq)
    for serial, issue, hop, digest in conflicts:
        items[serial].conflicts.add((issue, hop, bytes.fromhex(digest)))
    for serial, events in versions:
        items[serial].events = events
    return items


async def hops_of(store: EventStore, serial: str) -> list[tuple[int, RecordedHop]]:
    """(issue, hop) of every hop recorded of ``serial``, by issue and hop."""
    rows = await store.fetch(
        "SELECT issue, endorsement::text, seq FROM notary.hops WHERE serial = $1"
        " ORDER BY issue, hop",
        serial,
    )
    found = []
    for issue, text, seq in rows:
        endorsement = Endorsement.from_wire(text)
        found.append((issue, RecordedHop(endorsement, endorsement.hash(), seq)))
    return found


async def conflicts_of(store: EventStore, serial: str) -> list[tuple[int, int, str]]:
    """(seq, issue, fraud proof JSON) of every conflict refused for ``serial``, in log order."""
    rows = await store.fetch(
        "SELECT seq, issue, proof::text FROM notary.conflicts WHERE serial = $1 ORDER BY seq",
        serial,
    )
    return [(row[0], row[1], row[2]) for row in rows]


async def holder_of(store: EventStore, serial: str) -> str | None:
    value: str | None = await store.fetchval(
        "SELECT holder FROM notary.holders WHERE serial = $1", serial
    )
    return value
