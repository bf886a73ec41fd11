"""Prints (V.1): a serial-numbered instance of a certificate title, in a finish.

Offline play accrues *unstamped* prints (shown with the ⧗ badge): fully playable, not tradable,
no serial until the mint signs one. A stamped print (✓) carries the mint's serial. Finish is
styling and provenance only, never mechanics (R-11).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ledger.catalog import BY_NAME


class Finish(StrEnum):
    """The finishes of V.1, in rising order of rarity of style."""

    STANDARD = "standard"
    GILT = "gilt"
    HOLOFOIL = "holofoil"
    MISPRINT = "misprint"


UNSTAMPED_BADGE = "⧗"
STAMPED_BADGE = "✓"
#: The one Misprint (IV.6, V.8): a Tally, outside every run and the census, serial 000.
MISPRINT_TITLE = "Tally"
MISPRINT_SERIAL = "CZ-TALLY-000"


@dataclass(frozen=True, slots=True)
class Print:
    """One print in a collection: its title, finish, and the mint's serial once stamped.

    ``serial`` is ``None`` for an unstamped print, with one exception: the Misprint is awarded
    with its fixed serial ``CZ-TALLY-000`` but no mint signature, so offline it is still ⧗.
    """

    title: str
    finish: Finish = Finish.STANDARD
    stamped: bool = False
    serial: str | None = None

    def __post_init__(self) -> None:
        if self.title not in BY_NAME:
            raise ValueError(f"{self.title!r} is not a playing certificate")
        if self.stamped and self.serial is None:
            raise ValueError("a stamped print carries the mint's serial")
        if (self.finish is Finish.MISPRINT) != (self.serial == MISPRINT_SERIAL):
            raise ValueError(f"the misprint finish and serial {MISPRINT_SERIAL} go together")
        if self.finish is Finish.MISPRINT and self.title != MISPRINT_TITLE:
            raise ValueError("the only misprint is a Tally")

    @property
    def badge(self) -> str:
        return STAMPED_BADGE if self.stamped else UNSTAMPED_BADGE

    def label(self) -> str:
        """As the collection shows it: ``⧗ Tally (gilt)``, ``✓ Tally (standard) CZ-TALLY-0042``."""
        text = f"{self.badge} {self.title} ({self.finish.value})"
        return f"{text} {self.serial}" if self.serial else text


MISPRINT = Print(MISPRINT_TITLE, Finish.MISPRINT, stamped=False, serial=MISPRINT_SERIAL)
