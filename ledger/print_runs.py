"""The print runs: how many prints of each title exist in each finish, and their serials.

Rarity of style lives in the runs (Book V.1, docs/architecture.md §5): per title, standard / gilt /
holofoil
is 6000/1500/500 for common sets, 3000/750/250 uncommon, 1200/300/100 rare, 400/100/40 sealed.
Runs are fixed and never extended. A serial is ``CZ-<TITLE>-<NNNN>``, the title upper case as
printed; numbers run through standard first (1..standard), then gilt, then holofoil, contiguous.
The Misprint ``CZ-TALLY-000`` (finish ``misprint``) is outside every run and the census (V.8):
the parser knows it, the table never holds it.

The runs are data: the league manifest carries a :class:`PrintRunTable`, by default the one
built here from the catalog (the 41 playing certificates; the two fixtures convene the table
and are never printed).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Literal, NamedTuple, Self

from pydantic import Field, model_validator

from ledger.catalog import PLAYING, Rarity
from ledger.errors import RunExhaustedError, SchemaError, SerialError
from ledger.limits import MAX_RUN_TOTAL, MAX_SERIAL_CHARS
from ledger.wire import WireModel, WireTuple

#: The finishes a run holds, in numbering order.
RunFinish = Literal["standard", "gilt", "holofoil"]
RUN_FINISHES: tuple[RunFinish, ...] = ("standard", "gilt", "holofoil")
#: Every finish a print certificate may name: the run finishes and the unique misprint.
PrintFinish = Literal["standard", "gilt", "holofoil", "misprint"]
#: The card sets a run may belong to (values of ``ledger.catalog.CardSet``).
SetName = Literal["base", "folded", "lettered", "begotten", "counted", "sealed"]

MISPRINT: Literal["misprint"] = "misprint"
MISPRINT_TITLE = "Tally"
MISPRINT_SET: SetName = "base"
MISPRINT_SERIAL = "CZ-TALLY-000"

#: Run sizes per title by rarity of the title's set: (standard, gilt, holofoil).
RUN_SIZES: dict[Rarity, tuple[int, int, int]] = {
    Rarity.COMMON: (6000, 1500, 500),
    Rarity.UNCOMMON: (3000, 750, 250),
    Rarity.RARE: (1200, 300, 100),
    Rarity.SEALED: (400, 100, 40),
}

#: A title as printed: words of letters joined by hyphens (``Model-A``, ``Spend-Covering``).
TitleText = Annotated[str, Field(pattern=r"^[A-Za-z]+(-[A-Za-z]+)*$", max_length=40)]
_SERIAL = re.compile(r"CZ-(?P<title>[A-Z]+(?:-[A-Z]+)*)-(?P<number>[0-9]{4})")


class ParsedSerial(NamedTuple):
    """A print serial taken apart: the title as printed, the number, the finish it falls in."""

    title: str
    number: int
    finish: PrintFinish


class PrintRun(WireModel):
    """One title's run: its set and the size of each finish."""

    WHAT = "print run"

    title: TitleText
    set: SetName
    standard: Annotated[int, Field(ge=0)]
    gilt: Annotated[int, Field(ge=0)]
    holofoil: Annotated[int, Field(ge=0)]

    @model_validator(mode="after")
    def _total_fits_serials(self) -> Self:
        if not 1 <= self.total <= MAX_RUN_TOTAL:
            raise ValueError(f"a run totals 1 to {MAX_RUN_TOTAL} prints, not {self.total}")
        return self

    @property
    def total(self) -> int:
        return self.standard + self.gilt + self.holofoil

    def size(self, finish: RunFinish) -> int:
        """How many prints of ``finish`` the run holds."""
        return {"standard": self.standard, "gilt": self.gilt, "holofoil": self.holofoil}[finish]

    def first_number(self, finish: RunFinish) -> int:
        """The serial number of the first print of ``finish`` (numbering is contiguous)."""
        before = RUN_FINISHES[: RUN_FINISHES.index(finish)]
        return 1 + sum(self.size(f) for f in before)

    def finish_of(self, number: int) -> RunFinish:
        """The finish whose range holds serial number ``number``."""
        for finish in RUN_FINISHES:
            if number < self.first_number(finish) + self.size(finish):
                return finish
        raise SerialError(f"{self.title} has {self.total} prints; there is no number {number}")


class PrintRunTable(WireModel):
    """Every title's run: the whole fixed supply of prints."""

    WHAT = "print-run table"

    runs: Annotated[tuple[PrintRun, ...], WireTuple, Field(min_length=1, max_length=256)]

    @model_validator(mode="after")
    def _titles_unique(self) -> Self:
        if len(self.by_serial_title) != len(self.runs):
            raise ValueError("a title appears twice in the print-run table")
        return self

    @cached_property
    def by_serial_title(self) -> dict[str, PrintRun]:
        return {run.title.upper(): run for run in self.runs}

    def run(self, title: str) -> PrintRun:
        """The run of ``title`` (as printed or upper case as in a serial)."""
        try:
            return self.by_serial_title[title.upper()]
        except KeyError:
            raise SerialError(f"no print run for the title {title!r}") from None

    @property
    def total(self) -> int:
        """Every print that can ever be stamped."""
        return sum(run.total for run in self.runs)


def default_print_runs() -> PrintRunTable:
    """The published table: every playing certificate, sized by the rarity of its set."""
    runs = []
    for card in PLAYING:
        standard, gilt, holofoil = RUN_SIZES[card.rarity]
        runs.append(
            PrintRun(
                title=card.name,
                set=card.card_set.value,
                standard=standard,
                gilt=gilt,
                holofoil=holofoil,
            )
        )
    return PrintRunTable(runs=tuple(runs))


DEFAULT_PRINT_RUNS = default_print_runs()


def serial_for(
    title: str, finish: RunFinish, k: int, runs: PrintRunTable = DEFAULT_PRINT_RUNS
) -> str:
    """The serial of the ``k``-th print (1-based) of ``title`` in ``finish``.

    Raises :class:`RunExhaustedError` past the end of the finish's run: runs are never extended.
    """
    run = runs.run(title)
    if finish not in RUN_FINISHES:
        raise SchemaError(f"{finish!r} is not a finish with a print run")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise SchemaError(f"print index {k!r} is not a positive integer")
    if k > run.size(finish):
        raise RunExhaustedError(
            f"the {finish} run of {run.title} holds {run.size(finish)} prints; "
            f"print {k} does not exist"
        )
    return f"CZ-{run.title.upper()}-{run.first_number(finish) + k - 1:04d}"


def parse_serial(serial: str, runs: PrintRunTable = DEFAULT_PRINT_RUNS) -> ParsedSerial:
    """Take a print serial apart; anything not in ``runs`` (or the Misprint) is refused."""
    if not isinstance(serial, str) or len(serial) > MAX_SERIAL_CHARS:
        raise SerialError("a print serial is text like CZ-MODEL-A-0042")
    if serial == MISPRINT_SERIAL:
        return ParsedSerial(MISPRINT_TITLE, 0, MISPRINT)
    match = _SERIAL.fullmatch(serial)
    if match is None:
        raise SerialError(f"{serial!r} is not a print serial (CZ-<TITLE>-<NNNN>, upper case)")
    run = runs.run(match["title"])
    number = int(match["number"])
    if number < 1:
        raise SerialError(f"{serial!r}: print numbers start at 0001")
    return ParsedSerial(run.title, number, run.finish_of(number))
