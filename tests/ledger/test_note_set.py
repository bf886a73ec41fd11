"""The note set and note serials (docs/architecture.md §5, Book V.5: 1,500,000 marks minted
once)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.errors import SchemaError, SerialError
from ledger.note_set import (
    DEFAULT_NOTE_SET,
    NoteIssue,
    NoteSet,
    note_serial_for,
    parse_note_serial,
    split_note_serial,
)


def test_published_note_set_is_one_and_a_half_million_marks() -> None:
    """6,000 × M100 + 24,000 × M25 + 40,000 × M5 + 100,000 × M1 = 1,500,000 in 170,000 notes."""
    assert {i.denomination: i.count for i in DEFAULT_NOTE_SET.issues} == {
        100: 6_000,
        25: 24_000,
        5: 40_000,
        1: 100_000,
    }
    assert DEFAULT_NOTE_SET.total_marks == 1_500_000
    assert DEFAULT_NOTE_SET.total_notes == 170_000


def test_note_serials_count_within_their_denomination() -> None:
    """CZ-M<d>-<NNNNNN>: six digits, 1..count per denomination; past the end nothing exists."""
    assert note_serial_for(100, 1) == "CZ-M100-000001"
    assert note_serial_for(1, 100_000) == "CZ-M1-100000"
    assert parse_note_serial("CZ-M25-024000") == (25, 24_000)
    with pytest.raises(SerialError):
        note_serial_for(100, 6_001)
    with pytest.raises(SerialError):
        parse_note_serial("CZ-M100-006001")
    with pytest.raises(SchemaError):
        note_serial_for(50, 1)


@pytest.mark.parametrize(
    "serial",
    [
        "CZ-M100-000000",
        "CZ-M50-000001",
        "CZ-M1-00001",
        "CZ-m1-000001",
        "CZ-M1-000001\n",
        "CZ-TALLY-0001",
    ],
)
def test_malformed_note_serials_are_refused(serial: str) -> None:
    """Note serials parse strictly: a denomination of the set, six digits, a number in range."""
    with pytest.raises(SerialError):
        parse_note_serial(serial)


def test_note_set_lists_each_denomination_once_largest_first() -> None:
    """A set with a repeated or misordered denomination, or a count out of range, is refused."""
    for issues in (
        [{"denomination": 1, "count": 1}, {"denomination": 5, "count": 1}],
        [{"denomination": 5, "count": 1}, {"denomination": 5, "count": 2}],
        [{"denomination": 5, "count": 0}],
        [{"denomination": 3, "count": 1}],
        [{"denomination": True, "count": 1}],
        [],
    ):
        with pytest.raises(SchemaError):
            NoteSet.from_wire({"issues": issues})


def test_note_set_hash_names_its_content() -> None:
    """Two different note sets hash differently; equal sets hash the same."""
    small = NoteSet(issues=(NoteIssue(denomination=5, count=2),))
    assert small.hash() != DEFAULT_NOTE_SET.hash()
    assert NoteSet.from_wire(small.to_wire()).hash() == small.hash()


@given(
    st.lists(
        st.tuples(st.sampled_from([100, 25, 5, 1]), st.integers(1, 999_999)),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t[0],
    )
)
def test_note_set_wire_round_trip(pairs: list[tuple[int, int]]) -> None:
    """Any valid note set survives to_wire/from_wire, and its serials parse back."""
    pairs.sort(reverse=True)
    notes = NoteSet(issues=tuple(NoteIssue(denomination=d, count=c) for d, c in pairs))
    assert NoteSet.from_wire(notes.to_wire()) == notes
    for denomination, count in pairs:
        assert parse_note_serial(note_serial_for(denomination, count, notes), notes) == (
            denomination,
            count,
        )


def test_a_serial_is_split_by_its_form_and_parsed_against_the_set() -> None:
    """The form alone gives (denomination, number); the note set decides whether it exists."""
    assert split_note_serial("CZ-M25-000007") == (25, 7)
    assert split_note_serial("CZ-M100-999999") == (100, 999_999)  # well formed ...
    with pytest.raises(SerialError, match="note set"):
        parse_note_serial("CZ-M100-999999")  # ... but not one of the 6,000 M100 notes
    for bad in ("CZ-M3-000001", "CZ-M25-7", "CZ-TALLY-0001"):
        with pytest.raises(SerialError, match="not a note serial"):
            split_note_serial(bad)
