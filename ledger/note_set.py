"""The note set: every note the treasury will ever hold, minted once (Book V.5,
docs/architecture.md §5).

6,000 × M100 + 24,000 × M25 + 40,000 × M5 + 100,000 × M1 = 1,500,000 marks in 170,000 notes.
A note serial is ``CZ-M<denomination>-<NNNNNN>``, the number counting 1..count within its
denomination, six digits (``CZ-M100-000001`` .. ``CZ-M100-006000``). Note serials hold digits
in the title part and print titles never do, so the two serial spaces cannot collide.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, NamedTuple, Self

from pydantic import AfterValidator, Field, model_validator

from ledger.canonical import object_hash
from ledger.errors import SchemaError, SerialError
from ledger.limits import MAX_NOTES_PER_DENOMINATION, MAX_SERIAL_CHARS
from ledger.wire import WireModel, WireTuple

DENOMINATIONS: tuple[int, ...] = (100, 25, 5, 1)


def _check_denomination(value: int) -> int:
    if value not in DENOMINATIONS:
        raise ValueError(f"a denomination is one of 1, 5, 25, 100, not {value}")
    return value


#: A note denomination: a strict integer (pydantic's Literal would let ``true`` pass as 1).
Denomination = Annotated[int, AfterValidator(_check_denomination)]
_NOTE_SERIAL = re.compile(r"CZ-M(?P<denomination>100|25|5|1)-(?P<number>[0-9]{6})")


class ParsedNoteSerial(NamedTuple):
    """A note serial taken apart."""

    denomination: int
    number: int


class NoteIssue(WireModel):
    """How many notes of one denomination exist."""

    WHAT = "note issue"

    denomination: Denomination
    count: Annotated[int, Field(ge=1, le=MAX_NOTES_PER_DENOMINATION)]


class NoteSet(WireModel):
    """Every note of the league, by denomination, largest first."""

    WHAT = "note set"

    issues: Annotated[tuple[NoteIssue, ...], WireTuple, Field(min_length=1, max_length=4)]

    @model_validator(mode="after")
    def _one_issue_per_denomination_in_order(self) -> Self:
        denominations = [issue.denomination for issue in self.issues]
        if denominations != sorted(set(denominations), reverse=True):
            raise ValueError("a note set lists each denomination once, largest first")
        return self

    @cached_property
    def count_of(self) -> dict[int, int]:
        return {issue.denomination: issue.count for issue in self.issues}

    @property
    def total_marks(self) -> int:
        return sum(issue.denomination * issue.count for issue in self.issues)

    @property
    def total_notes(self) -> int:
        return sum(issue.count for issue in self.issues)

    def hash(self) -> bytes:
        """The hash the manifest names the note set by."""
        return object_hash("note-set", self.to_wire())


def default_note_set() -> NoteSet:
    """The published set: 1,500,000 marks."""
    counts = {100: 6_000, 25: 24_000, 5: 40_000, 1: 100_000}
    return NoteSet(issues=tuple(NoteIssue(denomination=d, count=counts[d]) for d in DENOMINATIONS))


DEFAULT_NOTE_SET = default_note_set()


def note_serial_for(denomination: int, k: int, notes: NoteSet = DEFAULT_NOTE_SET) -> str:
    """The serial of the ``k``-th note (1-based) of ``denomination``."""
    if denomination not in notes.count_of:
        raise SchemaError(f"M{denomination} is not a denomination of this note set")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= notes.count_of[denomination]:
        raise SerialError(
            f"there are {notes.count_of[denomination]} M{denomination} notes; no note {k!r}"
        )
    return f"CZ-M{denomination}-{k:06d}"


def split_note_serial(serial: str) -> ParsedNoteSerial:
    """Take a note serial apart by its form alone (``CZ-M25-000007`` is (25, 7)); whether the
    league's note set holds it is :func:`parse_note_serial`'s question."""
    if not isinstance(serial, str) or len(serial) > MAX_SERIAL_CHARS:
        raise SerialError("a note serial is text like CZ-M25-000001")
    match = _NOTE_SERIAL.fullmatch(serial)
    if match is None:
        raise SerialError(f"{serial!r} is not a note serial (CZ-M<1|5|25|100>-<NNNNNN>)")
    return ParsedNoteSerial(int(match["denomination"]), int(match["number"]))


def parse_note_serial(serial: str, notes: NoteSet = DEFAULT_NOTE_SET) -> ParsedNoteSerial:
    """Take a note serial apart; a note outside ``notes`` is refused."""
    denomination, number = split_note_serial(serial)
    if denomination not in notes.count_of or not 1 <= number <= notes.count_of[denomination]:
        raise SerialError(f"{serial!r} is not a note of this league's note set")
    return ParsedNoteSerial(denomination, number)
