"""A player's offline holdings: unstamped marks, prints, and sealed bundles not yet opened.

Immutable: the store and the campaign return a new :class:`Collection`. ``to_json`` and
``from_json`` give the plain form a save code carries (V.3); reading it back is a parse of
untrusted input and refuses anything malformed with a :class:`~ledger.errors.SchemaError`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from game.window.economy.prints import MISPRINT_SERIAL, Finish, Print
from ledger.errors import SchemaError, SizeLimitError

#: Limits on a collection read from a save code (offline play accrues prints without limit in
#: principle; a save code bigger than this is refused rather than read).
MAX_PRINTS = 200_000
MAX_MARKS = 10**12
MAX_BUNDLES = 100_000


@dataclass(frozen=True, slots=True)
class Collection:
    """Unstamped marks (V.5), prints (V.1) and unopened bundles, all offline and self-attested."""

    marks: int = 0
    prints: tuple[Print, ...] = field(default_factory=tuple)
    bundles: int = 0

    def __post_init__(self) -> None:
        if self.marks < 0 or self.bundles < 0:
            raise ValueError("marks and bundles are never negative")

    def add(
        self, *, marks: int = 0, prints: tuple[Print, ...] = (), bundles: int = 0
    ) -> Collection:
        """The collection with ``marks``, ``prints`` and ``bundles`` added."""
        return replace(
            self,
            marks=self.marks + marks,
            prints=self.prints + tuple(prints),
            bundles=self.bundles + bundles,
        )

    def titles(self) -> Counter[str]:
        """How many prints of each title the collection holds, any finish."""
        return Counter(p.title for p in self.prints)

    def has_misprint(self) -> bool:
        return any(p.serial == MISPRINT_SERIAL for p in self.prints)

    def to_json(self) -> dict[str, Any]:
        return {
            "marks": self.marks,
            "bundles": self.bundles,
            "prints": [_print_to_json(p) for p in self.prints],
        }

    @classmethod
    def from_json(cls, data: object) -> Collection:
        """Read a collection back; anything that is not exactly the shape above is refused."""
        if not isinstance(data, dict) or set(data) != {"marks", "bundles", "prints"}:
            raise SchemaError("a collection is an object with exactly marks, bundles and prints")
        marks = _count(data["marks"], "marks", MAX_MARKS)
        bundles = _count(data["bundles"], "bundles", MAX_BUNDLES)
        raw_prints = data["prints"]
        if not isinstance(raw_prints, list):
            raise SchemaError("a collection's prints are a list")
        if len(raw_prints) > MAX_PRINTS:
            raise SizeLimitError(f"a collection holds at most {MAX_PRINTS} prints")
        prints = tuple(_print_from_json(item) for item in raw_prints)
        if sum(p.serial == MISPRINT_SERIAL for p in prints) > 1:
            raise SchemaError("the Misprint exists exactly once")
        return cls(marks=marks, prints=prints, bundles=bundles)


def _count(value: object, name: str, limit: int) -> int:
    if type(value) is not int or not 0 <= value <= limit:
        raise SchemaError(f"{name} is a whole number from 0 to {limit}")
    return value


def _print_to_json(p: Print) -> dict[str, Any]:
    return {"title": p.title, "finish": p.finish.value, "stamped": p.stamped, "serial": p.serial}


def _print_from_json(item: object) -> Print:
    if not isinstance(item, dict) or set(item) != {"title", "finish", "stamped", "serial"}:
        raise SchemaError("a print is an object with exactly title, finish, stamped and serial")
    title, finish, stamped, serial = item["title"], item["finish"], item["stamped"], item["serial"]
    if not isinstance(title, str) or not isinstance(stamped, bool):
        raise SchemaError("a print's title is text and its stamped flag a boolean")
    if serial is not None and (not isinstance(serial, str) or len(serial) > 64):
        raise SchemaError("a print's serial is null or text of at most 64 characters")
    try:
        return Print(title, Finish(finish), stamped=stamped, serial=serial)
    except ValueError as exc:
        raise SchemaError(f"not a valid print: {exc}") from None
