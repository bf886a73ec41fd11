"""The certificates of THE WINDOW as data (I.4, Book II, Book III).

The one place that names every title, its cost, its set and its rarity. The engine, the
tables, the offline store and the mint's print runs all read from here.

I.1 says "Forty-three exist across five sets"; the sets as printed list 6 + 7 + 4 × 7 = 41
playing certificates. That is a defect of the book (docs/rulings.md, D-01): this catalog holds
the 41 the sets name, plus the two fixtures.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Rarity(StrEnum):
    """Rarity of mechanics: it lives in the sets (docs/architecture.md §5)."""

    COMMON = "common"
    UNCOMMON = "uncommon"
    RARE = "rare"
    SEALED = "sealed"


class CardSet(StrEnum):
    """The six sets of playing certificates, in the book's order.

    The book prints six: the base six (I.4), the Folded seven (Book II) and the Archive's four
    sets of seven (Book III numbers them Set II–V). I.1 says "Forty-three exist across five sets";
    that count is a defect of the book (docs/rulings.md, D-01).
    """

    BASE = "base"  # I.4, the base six
    FOLDED = "folded"  # Book II
    LETTERED = "lettered"  # Book III, Set II
    BEGOTTEN = "begotten"  # Book III, Set III
    COUNTED = "counted"  # Book III, Set IV
    SEALED = "sealed"  # Book III, Set V


SET_RARITY: dict[CardSet, Rarity] = {
    CardSet.BASE: Rarity.COMMON,
    CardSet.FOLDED: Rarity.UNCOMMON,
    CardSet.LETTERED: Rarity.RARE,
    CardSet.BEGOTTEN: Rarity.RARE,
    CardSet.COUNTED: Rarity.RARE,
    CardSet.SEALED: Rarity.SEALED,
}


@dataclass(frozen=True, slots=True)
class Certificate:
    """A certificate title as printed: name, cost in the ring, set."""

    name: str
    cost: int
    card_set: CardSet

    @property
    def rarity(self) -> Rarity:
        return SET_RARITY[self.card_set]

    @property
    def serial_title(self) -> str:
        """The title as it appears in a serial: upper case as printed (``MODEL-A``)."""
        return self.name.upper()


def _set(card_set: CardSet, *cards: tuple[str, int]) -> tuple[Certificate, ...]:
    return tuple(Certificate(name, cost, card_set) for name, cost in cards)


BASE_SIX = _set(
    CardSet.BASE,
    ("Tally", 5),
    ("Pairing", 4),
    ("Separation", 3),
    ("Escrow", 4),
    ("Reflection", 2),
    ("Exchange", 10),
)
FOLDED_SEVEN = _set(
    CardSet.FOLDED,
    ("Torsor", 6),
    ("Balance", 2),
    ("Descent", 3),
    ("Turn", 2),
    ("Keeping", 3),
    ("No-Go", 1),
    ("Spend-Covering", 5),
)
LETTERED = _set(
    CardSet.LETTERED,
    ("Alphabet", 2),
    ("Gram", 3),
    ("Canonical", 3),
    ("Wellformed", 4),
    ("Faithful", 3),
    ("Admission", 2),
    ("Interface", 4),
)
BEGOTTEN = _set(
    CardSet.BEGOTTEN,
    ("Constructor", 5),
    ("Generator", 6),
    ("Fork", 3),
    ("Genealogy", 5),
    ("Model-A", 2),
    ("Model-B", 2),
    ("Omegafam", 10),
)
COUNTED = _set(
    CardSet.COUNTED,
    ("Hemiring", 4),
    ("Primeladder", 5),
    ("Eulerfuse", 3),
    ("Trace", 4),
    ("Independence", 3),
    ("Selection", 3),
    ("Exhaustion", 1),
)
SEALED_SET = _set(
    CardSet.SEALED,
    ("Plenum", 6),
    ("Refusal", 2),
    ("Shadow", 2),
    ("Stage", 3),
    ("Transport", 2),
    ("Noninscript", 1),
    ("Zenoseal", 7),
)

#: The four Archive sets of Book III, in order (Set II–V), each the set a Registrar teaches.
ARCHIVE_SETS: dict[CardSet, tuple[Certificate, ...]] = {
    CardSet.LETTERED: LETTERED,
    CardSet.BEGOTTEN: BEGOTTEN,
    CardSet.COUNTED: COUNTED,
    CardSet.SEALED: SEALED_SET,
}

#: All 41 playing certificates, in book order.
PLAYING: tuple[Certificate, ...] = (
    BASE_SIX + FOLDED_SEVEN + LETTERED + BEGOTTEN + COUNTED + SEALED_SET
)

#: The fixtures (I.2): they convene the table and are never dealt, built, folded or scored.
FIXTURES: tuple[Certificate, ...] = (
    Certificate("Sponsorship", 1, CardSet.BASE),
    Certificate("Seal", 3, CardSet.BASE),
)
FIXTURE_NAMES = frozenset(c.name for c in FIXTURES)

BY_NAME: dict[str, Certificate] = {c.name: c for c in PLAYING}
BY_SERIAL_TITLE: dict[str, Certificate] = {c.serial_title: c for c in PLAYING}


def certificate(name: str) -> Certificate:
    """The playing certificate called ``name`` (exact spelling as printed)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no playing certificate is called {name!r}") from None


def cost(name: str) -> int:
    return certificate(name).cost
