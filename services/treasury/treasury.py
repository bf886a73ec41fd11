"""The treasury of one league (its manifest, its key and its event log: the root object every
piece of the treasury's work is given) and how it makes change: an amount as notes of the
reserve (:func:`make_change`) and which notes to issue for it (:func:`issue_queue`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from ledger.certificates import NoteCertificate
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.note_set import note_serial_for
from services.eventlog import EventStore
from services.treasury import tables


@dataclass(frozen=True, slots=True)
class Treasury:
    """The treasury of one league: its manifest, its key and its event log."""

    manifest: LeagueManifest
    key: SigningKey
    store: EventStore

    @property
    def manifest_hash(self) -> str:
        return self.manifest.hash_text()

    def issue_note(
        self, denomination: int, number: int, to: str, issue: int, event: int
    ) -> NoteCertificate:
        """The certificate of note ``number`` of ``denomination``'s ``issue``, made out to
        ``to`` (L-11) and naming ``event``, the treasury log's seq that will issue it."""
        return NoteCertificate.sign(
            self.key,
            serial=note_serial_for(denomination, number, self.manifest.note_set),
            denomination=denomination,
            issued_to=to,
            issue=issue,
            event=event,
            manifest=self.manifest_hash,
        )


def make_change(marks: int, reserve: Mapping[int, int]) -> list[int] | None:
    """``marks`` as notes of the reserve, largest denomination first, or None if the reserve
    cannot make it. Each denomination divides the next larger one (1, 5, 25, 100), so taking
    the largest that fits never prevents an exact composition that exists."""
    notes: list[int] = []
    left = marks
    for denomination in sorted(reserve, reverse=True):
        take = min(left // denomination, reserve[denomination])
        notes.extend([denomination] * take)
        left -= take * denomination
    return notes if left == 0 else None


def issue_queue(
    supply: Mapping[int, tables.SupplyRow],
    wanted: Counter[int],
    returned: Mapping[int, list[tuple[int, int]]],
) -> dict[int, list[tuple[int, int]]]:
    """The notes to issue per denomination: returned notes first (lowest number first), then
    notes never issued, in number order."""
    queue = {}
    for denomination, count in wanted.items():
        notes = list(returned.get(denomination, []))[:count]
        fresh = supply[denomination].first_issued
        notes += [(fresh + k, 0) for k in range(1, count - len(notes) + 1)]
        queue[denomination] = notes
    return queue
