"""The offline store (V.5): singles by rarity, finish upgrades, bundles, marks only."""

from __future__ import annotations

import pytest

from game.window.economy.collection import Collection
from game.window.economy.prints import MISPRINT, Finish, Print
from game.window.economy.store import (
    StoreRefusal,
    buy_bundle,
    buy_single,
    open_bundle,
    upgrade,
    upgrade_price,
)


@pytest.mark.parametrize(
    ("title", "price"),
    [
        ("Tally", 30),
        ("Exchange", 30),
        ("No-Go", 60),
        ("Gram", 120),
        ("Omegafam", 120),
        ("Hemiring", 120),
        ("Zenoseal", 240),
    ],
)
def test_singles_cost_by_rarity(title: str, price: int) -> None:
    """V.5: singles by rarity M30/M60/M120/M240; the print is unstamped and standard."""
    after = buy_single(Collection(marks=500), title)
    assert after.marks == 500 - price
    assert after.prints == (Print(title),)
    assert not after.prints[0].stamped
    assert after.prints[0].badge == "⧗"


def test_too_few_marks_is_refused_and_nothing_moves() -> None:
    """V.5: the store refuses what the marks do not cover; the collection is unchanged."""
    wallet = Collection(marks=239)
    with pytest.raises(StoreRefusal) as refused:
        buy_single(wallet, "Zenoseal")
    assert "M240" in refused.value.diagnostics()
    assert wallet == Collection(marks=239)


def test_unknown_titles_and_fixtures_are_not_sold() -> None:
    """I.2: the fixtures are never dealt or built; the store sells playing certificates only."""
    for title in ("Seal", "Sponsorship", "Nonesuch"):
        with pytest.raises(StoreRefusal):
            buy_single(Collection(marks=1000), title)


def test_finish_upgrades_priced_by_finish_reached() -> None:
    """V.5: finish upgrade gilt M80, holofoil M200 (from standard or gilt, docs/modes.md M-03)."""
    wallet = Collection(marks=1000, prints=(Print("Tally"), Print("Turn", Finish.GILT)))
    gilt = upgrade(wallet, 0, Finish.GILT)
    assert gilt.marks == 920
    assert gilt.prints[0].finish is Finish.GILT
    holo = upgrade(gilt, 1, Finish.HOLOFOIL)
    assert holo.marks == 720
    assert holo.prints[1] == Print("Turn", Finish.HOLOFOIL)
    assert upgrade_price(Finish.STANDARD, Finish.HOLOFOIL) == 200


def test_finishes_never_go_down_and_the_misprint_is_not_upgraded() -> None:
    """M-03: a finish is only raised; the Misprint is unique and outside the store."""
    wallet = Collection(marks=1000, prints=(Print("Tally", Finish.HOLOFOIL), MISPRINT))
    for index, target in ((0, Finish.GILT), (0, Finish.HOLOFOIL), (1, Finish.HOLOFOIL)):
        with pytest.raises(StoreRefusal):
            upgrade(wallet, index, target)
    with pytest.raises(StoreRefusal):
        upgrade(wallet, 5, Finish.GILT)


def test_stamped_prints_are_upgraded_at_the_mint_not_offline() -> None:
    """V.1/docs/architecture.md §3: a stamped print's finish changes only by return and re-issue at
    the mint."""
    stamped = Print("Tally", stamped=True, serial="CZ-TALLY-0042")
    with pytest.raises(StoreRefusal, match="mint"):
        upgrade(Collection(marks=1000, prints=(stamped,)), 0, Finish.GILT)


def test_bundles_cost_fifty_marks_and_open_into_three_prints() -> None:
    """V.5: a bundle costs M50 in unstamped marks and yields three unstamped prints."""
    bought = buy_bundle(Collection(marks=120))
    assert bought.marks == 70
    assert bought.bundles == 1
    assert bought.prints == ()
    opened, prints = open_bundle(bought, seed=9)
    assert opened.bundles == 0
    assert opened.prints == prints
    assert len(prints) == 3
    with pytest.raises(StoreRefusal):
        open_bundle(opened, seed=10)
    with pytest.raises(StoreRefusal):
        buy_bundle(Collection(marks=49))
