"""The print runs and serials (docs/architecture.md §5, Book V.1, V.8)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.catalog import FIXTURE_NAMES, PLAYING, Rarity
from ledger.errors import RunExhaustedError, SchemaError, SerialError
from ledger.print_runs import (
    DEFAULT_PRINT_RUNS,
    MISPRINT_SERIAL,
    RUN_FINISHES,
    PrintRun,
    PrintRunTable,
    parse_serial,
    serial_for,
)

PUBLISHED = {
    Rarity.COMMON: (6000, 1500, 500),
    Rarity.UNCOMMON: (3000, 750, 250),
    Rarity.RARE: (1200, 300, 100),
    Rarity.SEALED: (400, 100, 40),
}


def test_default_table_sizes_every_playing_certificate_by_its_sets_rarity() -> None:
    """One run per playing certificate (41), standard/gilt/holofoil as published for the
    rarity of its set; the fixtures are not printed."""
    assert len(DEFAULT_PRINT_RUNS.runs) == len(PLAYING) == 41
    for card in PLAYING:
        run = DEFAULT_PRINT_RUNS.run(card.name)
        assert (run.standard, run.gilt, run.holofoil) == PUBLISHED[card.rarity]
        assert run.set == card.card_set.value
    for name in FIXTURE_NAMES:
        with pytest.raises(SerialError):
            DEFAULT_PRINT_RUNS.run(name)
    # 6 common, 7 uncommon, 21 rare, 7 sealed titles
    assert DEFAULT_PRINT_RUNS.total == 6 * 8000 + 7 * 4000 + 21 * 1600 + 7 * 540


@pytest.mark.parametrize(
    ("title", "finish", "k", "serial"),
    [
        ("Model-A", "standard", 42, "CZ-MODEL-A-0042"),
        ("Spend-Covering", "standard", 7, "CZ-SPEND-COVERING-0007"),
        ("No-Go", "standard", 1, "CZ-NO-GO-0001"),
        ("Tally", "standard", 6000, "CZ-TALLY-6000"),
        ("Tally", "gilt", 1, "CZ-TALLY-6001"),
        ("Tally", "holofoil", 1, "CZ-TALLY-7501"),
        ("Tally", "holofoil", 500, "CZ-TALLY-8000"),
        ("Zenoseal", "holofoil", 40, "CZ-ZENOSEAL-0540"),
        ("NO-GO", "gilt", 1, "CZ-NO-GO-3001"),
    ],
)
def test_serials_as_printed(title: str, finish: str, k: int, serial: str) -> None:
    """Serials are CZ-<TITLE>-<NNNN>, title upper case as printed, numbered standard first,
    then gilt, then holofoil, contiguous, zero-padded to four digits."""
    assert serial_for(title, finish, k) == serial  # type: ignore[arg-type]
    parsed = parse_serial(serial)
    assert (parsed.title.upper(), parsed.finish) == (title.upper(), finish)


def test_every_serial_of_every_run_round_trips_and_runs_are_contiguous() -> None:
    """For every title, the numbers 1..total are each exactly one (finish, k), and parsing
    gives that finish back: no gap, no overlap between finishes."""
    for run in DEFAULT_PRINT_RUNS.runs:
        numbers = []
        for finish in RUN_FINISHES:
            for k in (1, run.size(finish)):
                serial = serial_for(run.title, finish, k)
                parsed = parse_serial(serial)
                assert (parsed.title, parsed.finish) == (run.title, finish)
                numbers.append(parsed.number)
        assert numbers[0] == 1
        assert numbers[-1] == run.total
        assert all(b == a + 1 for a, b in zip(numbers[1::2], numbers[2::2], strict=False))


def test_runs_are_never_extended() -> None:
    """The print after the last of a finish's run does not exist."""
    with pytest.raises(RunExhaustedError, match="holds 6000"):
        serial_for("Tally", "standard", 6001)
    with pytest.raises(SerialError, match="no number 8001"):
        parse_serial("CZ-TALLY-8001")


def test_misprint_is_outside_every_run() -> None:
    """CZ-TALLY-000 parses as the one misprint Tally, number 0; the table never holds it."""
    parsed = parse_serial(MISPRINT_SERIAL)
    assert parsed == ("Tally", 0, "misprint")
    with pytest.raises(SchemaError):
        serial_for("Tally", "misprint", 1)  # type: ignore[arg-type]
    with pytest.raises(SerialError):
        parse_serial("CZ-TALLY-0000")


@pytest.mark.parametrize(
    "serial",
    [
        "CZ-tally-0001",
        "CZ-TALLY-1",
        "CZ-TALLY-00001",
        "CZ-TALLY-0001 ",
        "CZ-TALLY-0001\n",
        "cz-TALLY-0001",
        "CZ-TALLY",
        "CZ-NOSUCH-0001",
        "CZ-M25-000001",
        "CZ-TALLY-٠٠٠١",
        "CZ-" + "A" * 80 + "-0001",
    ],
)
def test_malformed_serials_are_refused(serial: str) -> None:
    """Serials parse strictly: upper case, four ASCII digits, a known title, no padding."""
    with pytest.raises(SerialError):
        parse_serial(serial)


def test_a_custom_table_carries_a_run_of_three() -> None:
    """Runs are data: a table with a three-print run numbers and exhausts it."""
    table = PrintRunTable(
        runs=(PrintRun(title="Tally", set="base", standard=3, gilt=0, holofoil=0),)
    )
    assert [serial_for("Tally", "standard", k, table) for k in (1, 2, 3)] == [
        "CZ-TALLY-0001",
        "CZ-TALLY-0002",
        "CZ-TALLY-0003",
    ]
    with pytest.raises(RunExhaustedError):
        serial_for("Tally", "standard", 4, table)
    with pytest.raises(RunExhaustedError):
        serial_for("Tally", "gilt", 1, table)
    with pytest.raises(SerialError):
        parse_serial("CZ-TALLY-0004", table)
    with pytest.raises(SerialError):
        parse_serial("CZ-MODEL-A-0001", table)


@pytest.mark.parametrize(
    "run",
    [
        {"title": "Tally", "set": "base", "standard": 0, "gilt": 0, "holofoil": 0},
        {"title": "Tally", "set": "base", "standard": 9000, "gilt": 1000, "holofoil": 0},
        {"title": "Tally", "set": "base", "standard": -1, "gilt": 2, "holofoil": 0},
        {"title": "Tally9", "set": "base", "standard": 1, "gilt": 0, "holofoil": 0},
        {"title": "Tally", "set": "nosuch", "standard": 1, "gilt": 0, "holofoil": 0},
        {"title": "Tally", "set": "base", "standard": True, "gilt": 0, "holofoil": 0},
        {"title": "Tally", "set": "base", "standard": "1", "gilt": 0, "holofoil": 0},
        {"title": "Tally", "set": "base", "standard": 1, "gilt": 0, "holofoil": 0, "x": 1},
    ],
)
def test_bad_runs_are_refused(run: dict[str, object]) -> None:
    """A run totals 1..9999 prints, has a letters-and-hyphens title, a known set, strict
    integers and nothing else."""
    with pytest.raises(SchemaError):
        PrintRunTable.from_wire({"runs": [run]})


def test_a_title_twice_is_refused() -> None:
    """One run per title (compared as in serials, case-insensitively)."""
    run = {"title": "Tally", "set": "base", "standard": 1, "gilt": 0, "holofoil": 0}
    with pytest.raises(SchemaError, match="twice"):
        PrintRunTable.from_wire({"runs": [run, {**run, "title": "TALLY"}]})


runs = st.builds(
    PrintRun,
    title=st.from_regex(r"\A[A-Za-z]{1,8}(-[A-Za-z]{1,8}){0,2}\Z"),
    set=st.sampled_from(["base", "folded", "lettered", "begotten", "counted", "sealed"]),
    standard=st.integers(1, 3000),
    gilt=st.integers(0, 3000),
    holofoil=st.integers(0, 3000),
)


@given(st.lists(runs, min_size=1, max_size=6, unique_by=lambda r: r.title.upper()))
def test_print_run_table_wire_round_trip(table_runs: list[PrintRun]) -> None:
    """Any valid table survives to_wire/from_wire, as an object and as JSON text."""
    table = PrintRunTable(runs=tuple(table_runs))
    assert PrintRunTable.from_wire(table.to_wire()) == table
    import json

    assert PrintRunTable.from_wire(json.dumps(table.to_wire())) == table


@given(runs, st.data())
def test_any_serial_of_any_run_parses_back(run: PrintRun, data: st.DataObject) -> None:
    """serial_for and parse_serial are inverse over every finish and index of a run."""
    table = PrintRunTable(runs=(run,))
    finish = data.draw(st.sampled_from([f for f in RUN_FINISHES if run.size(f)]))
    k = data.draw(st.integers(1, run.size(finish)))
    parsed = parse_serial(serial_for(run.title, finish, k, table), table)
    assert (parsed.title, parsed.finish, parsed.number) == (
        run.title,
        finish,
        run.first_number(finish) + k - 1,
    )
