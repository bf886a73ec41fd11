"""Convening (I.5, IV.2, IV.3): counts, the set-aside, the single-copy rule, finishes travel,
and the same seed gives the same table and the same game."""

from __future__ import annotations

import pytest

from game.window import DealError, replay
from game.window.ai.roster import chair_player
from game.window.economy.prints import Finish, Print
from game.window.notation import format_action
from game.window.records import Record
from game.window.tables import Holding, convene_base, convene_market, convene_portfolio, play_out
from ledger.catalog import BASE_SIX, FOLDED_SEVEN, LETTERED, SEALED_SET

BASE = [c.name for c in BASE_SIX]
FOLDED = [c.name for c in FOLDED_SEVEN]
LETTERED_TITLES = [c.name for c in LETTERED]
SEALED_TITLES = [c.name for c in SEALED_SET]


def _portfolio(titles: list[str], finish: Finish = Finish.STANDARD) -> list[Holding]:
    return [Holding(t, Print(t, finish)) for t in titles]


def test_base_table_counts() -> None:
    """I.5: the base six, three to each seat, no market; first seat three strokes (plenum 27)."""
    for seed in range(30):
        table = convene_base(seed)
        assert [len(h) for h in table.hands] == [3, 3]
        assert table.market == table.aside == ()
        assert sorted(table.titles_in_deal_order()) == sorted(BASE)
        state = table.new_state()
        assert (state.plenum, state.hoards, state.seal) == (27, [3, 0], 0)


def test_market_table_counts() -> None:
    """IV.2: the base six and the Folded seven, five to each seat, three to the market."""
    for seed in range(30):
        table = convene_market(seed)
        assert [len(h) for h in table.hands] == [5, 5]
        assert len(table.market) == 3
        assert table.aside == ()
        assert sorted(table.titles_in_deal_order()) == sorted(BASE + FOLDED)
    assert len({convene_market(s).hands for s in range(30)}) > 25


def test_portfolio_table_counts_and_set_aside() -> None:
    """IV.3: sixteen distinct certificates pooled: five each, three to the market, three set
    aside — and the set-aside is out of reach: never in a hand, the market or a chain."""
    first = _portfolio(BASE + FOLDED[:2])
    second = _portfolio(FOLDED[2:] + LETTERED_TITLES[:3])
    table = convene_portfolio(first, second, seed=11)
    assert [len(h) for h in table.hands] == [5, 5]
    assert len(table.market) == 3
    assert len(table.aside) == 3
    assert sorted(table.titles_in_deal_order()) == sorted(BASE + FOLDED + LETTERED_TITLES[:3])
    state = table.new_state()
    reachable = {state.title_of(c) for c in [*state.hands[0], *state.hands[1], *state.market]}
    assert reachable.isdisjoint(table.aside)
    assert {state.title_of(c) for c in state.aside} == set(table.aside)
    # The position and the record name the table for what it is (IV.3), not a bare deal.
    assert state.table_kind == "portfolio"
    assert table.deal_record().table == "portfolio"


def test_single_copy_rule_one_print_per_shared_title() -> None:
    """M-10: when both portfolios bring a title the pool takes one print of it (seeded); the
    other stays home. Two shared titles leave a pool of fourteen: one card set aside."""
    first = _portfolio(BASE + FOLDED[:2], Finish.GILT)
    second = _portfolio(BASE[:2] + FOLDED[2:] + LETTERED_TITLES[:1], Finish.HOLOFOIL)
    owners = set()
    for seed in range(40):
        table = convene_portfolio(first, second, seed)
        assert len(table.aside) == 1
        deal = table.titles_in_deal_order()
        assert len(deal) == len(set(deal)) == 14
        assert sorted(h.title for h in table.stayed_home) == sorted(BASE[:2])
        for title in BASE[:2]:
            owner = table.provenance[deal.index(title)].owner
            home = next(h for h in table.stayed_home if h.title == title)
            assert home.print.finish is (Finish.GILT if owner == 1 else Finish.HOLOFOIL)
            owners.add(owner)
    assert owners == {0, 1}


def test_too_many_shared_titles_cannot_convene() -> None:
    """M-10: a pool of fewer than thirteen distinct titles is refused with a typed error."""
    first = _portfolio(BASE + FOLDED[:2])
    second = _portfolio(BASE[:4] + FOLDED[2:6])
    with pytest.raises(DealError, match="12 distinct titles"):
        convene_portfolio(first, second, seed=1)


def test_portfolio_must_be_eight_distinct() -> None:
    """IV.3: each player brings eight distinct certificates."""
    with pytest.raises(DealError):
        convene_portfolio(_portfolio(BASE + FOLDED[:1]), _portfolio([*SEALED_TITLES, "Tally"]), 1)
    doubled = [*_portfolio(BASE + FOLDED[:1]), Holding("Tally")]
    with pytest.raises(DealError):
        convene_portfolio(doubled, _portfolio([*SEALED_TITLES, "Turn"]), 1)


def test_finishes_travel_with_their_prints() -> None:
    """IV.3: a holofoil is a holofoil in whosever hand it lands — each dealt card id maps to the
    print its owner brought."""
    first = _portfolio(BASE + FOLDED[:2], Finish.HOLOFOIL)
    second = _portfolio(FOLDED[2:] + SEALED_TITLES[:3], Finish.GILT)
    table = convene_portfolio(first, second, seed=5)
    state = table.new_state()
    for seat in (0, 1):
        for card in state.hands[seat]:
            origin = table.provenance[card]
            assert origin.print.title == state.title_of(card)
            assert origin.print.finish is (Finish.HOLOFOIL if origin.owner == 0 else Finish.GILT)
    crossing = [c for c in state.hands[1] if table.provenance[c].owner == 0]
    assert crossing, "with this seed a first-seat print lands in the second seat's hand"


def test_same_seed_same_table_and_same_game() -> None:
    """Seeded and reproducible: the same seed convenes the same deal, the same Chairs with the
    same seeds play the same actions, and the record replays to the same position."""
    first = _portfolio(BASE + FOLDED[:2])
    second = _portfolio(FOLDED[2:] + SEALED_TITLES[:3])
    assert convene_portfolio(first, second, 3) == convene_portfolio(first, second, 3)
    games = []
    for _ in range(2):
        table = convene_portfolio(first, second, 3)
        state = table.new_state()
        games.append((play_out(state, [chair_player(3, 9), chair_player(4, 9)]), state))
    assert games[0][0] == games[1][0]
    assert games[0][1] == games[1][1]
    state = table.new_state()
    texts = []
    for action in games[0][0]:
        texts.append(format_action(state, action))
        state.apply(action)
    record = Record(format="cz-table-record/1", deal=table.deal_record(), actions=texts)
    assert replay(record) == games[0][1]
