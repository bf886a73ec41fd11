"""The Registrars (IV.5): portfolio tables built around their set, the player's portfolio from
their prints (or house copies, M-11), and a Registrar that teaches its cards by playing them."""

from __future__ import annotations

import pytest

from game.window import DealError
from game.window import actions as A
from game.window.ai.roster import REGISTRAR_STRENGTH
from game.window.economy.collection import Collection
from game.window.economy.prints import Finish, Print
from game.window.registrars import (
    HOUSE_TITLES,
    RegistrarPlayer,
    convene_registrar_table,
    player_portfolio,
    registrar_portfolio,
    set_titles,
)
from ledger.catalog import CardSet

STARTER = list(HOUSE_TITLES[:8])


def test_registrar_portfolio_is_its_set_plus_one_the_player_lacks() -> None:
    """IV.5: built around its set — its seven, plus one of the Assessor's thirteen that the
    player did not bring, so the two portfolios pool sixteen titles."""
    for seed in range(20):
        ours = registrar_portfolio(CardSet.COUNTED, STARTER, seed)
        titles = [h.title for h in ours]
        assert titles[:7] == list(set_titles(CardSet.COUNTED))
        assert titles[7] in HOUSE_TITLES
        assert titles[7] not in STARTER


def test_registrar_table_deals_its_cards() -> None:
    """IV.3/IV.5: the Registrar's table is a portfolio table: 5/5/3 and three set aside, and
    the Registrar's set is in the pool."""
    table = convene_registrar_table(CardSet.SEALED, player_portfolio(Collection(), STARTER), 9)
    assert [len(h) for h in table.hands] == [5, 5]
    assert len(table.market) == 3
    assert len(table.aside) == 3
    assert set(set_titles(CardSet.SEALED)) <= set(table.titles_in_deal_order())


def test_player_portfolio_uses_finest_print_or_house_copy() -> None:
    """M-11: each title is carried by the player's finest print of it; titles of the
    Assessor's thirteen they hold no print of come as house copies; an Archive title they do
    not own is refused."""
    collection = Collection(
        prints=(Print("Tally"), Print("Tally", Finish.HOLOFOIL), Print("Gram", Finish.GILT))
    )
    titles = ["Tally", "Gram", *HOUSE_TITLES[1:7]]
    portfolio = player_portfolio(collection, titles)
    assert portfolio[0].print == Print("Tally", Finish.HOLOFOIL)
    assert portfolio[1].print == Print("Gram", Finish.GILT)
    assert all(h.print is None for h in portfolio[2:])
    with pytest.raises(DealError, match="Zenoseal"):
        player_portfolio(collection, ["Zenoseal", *HOUSE_TITLES[:7]])
    with pytest.raises(DealError):
        player_portfolio(collection, STARTER[:7])


def test_registrar_slips_teach_its_set() -> None:
    """M-16: when a Registrar slips, it builds one of its own set's cards if it can."""
    table = convene_registrar_table(CardSet.LETTERED, player_portfolio(Collection(), STARTER), 2)
    state = table.new_state()
    teaching = set(set_titles(CardSet.LETTERED))
    state.apply(A.ACCELERATE)  # the first seat acts; now the Registrar (second seat) decides
    buildable = [
        a
        for a in state.legal_actions()
        if a & 31 == A.BUILD and state.title_of(a >> 5 & 63) in teaching
    ]
    assert buildable
    slipping = RegistrarPlayer(CardSet.LETTERED, REGISTRAR_STRENGTH, seed=1)
    for _ in range(30):
        assert slipping.slip(state, state.legal_actions()) in buildable
