"""A collection's plain form (V.3 save codes carry it): exact round trip, strict refusal."""

from __future__ import annotations

import pytest

from game.window.economy.collection import Collection
from game.window.economy.prints import MISPRINT, Finish, Print
from ledger.errors import SchemaError

SAMPLE = Collection(
    marks=77,
    bundles=2,
    prints=(
        Print("Tally"),
        Print("Zenoseal", Finish.HOLOFOIL),
        Print("Gram", Finish.GILT, stamped=True, serial="CZ-GRAM-0003"),
        MISPRINT,
    ),
)


def test_round_trip_is_exact() -> None:
    """to_json/from_json return the same collection, ⧗ and ✓ alike, the Misprint included."""
    assert Collection.from_json(SAMPLE.to_json()) == SAMPLE
    assert [p.badge for p in SAMPLE.prints] == ["⧗", "⧗", "✓", "⧗"]
    assert SAMPLE.has_misprint()


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.pop("marks"),
        lambda d: d.update(marks=-1),
        lambda d: d.update(marks=True),
        lambda d: d.update(bundles="2"),
        lambda d: d.update(prints={}),
        lambda d: d.update(extra=1),
        lambda d: d["prints"][0].update(title="Seal"),
        lambda d: d["prints"][0].update(finish="chrome"),
        lambda d: d["prints"][0].update(stamped=True),
        lambda d: d["prints"][0].update(serial="CZ-TALLY-000"),
        lambda d: d["prints"].append(dict(d["prints"][3])),
        lambda d: d["prints"][1].pop("serial"),
    ],
)
def test_malformed_collections_are_refused(mutate) -> None:  # type: ignore[no-untyped-def]
    """A save code's collection that is not exactly well formed is a SchemaError, never half read:
    missing or extra fields, negative or non-integer counts, fixtures, unknown finishes, a stamped
    print without serial, a second Misprint."""
    data = SAMPLE.to_json()
    mutate(data)
    with pytest.raises(SchemaError):
        Collection.from_json(data)
