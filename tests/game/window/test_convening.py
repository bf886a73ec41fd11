"""Convening (I.5, IV.2) and explicit deals: counts, reproducibility, refusals."""

from __future__ import annotations

import re

import pytest

from game.window import DealError, from_deal, new_base_table, new_market_table, to_json
from ledger.catalog import BASE_SIX, FOLDED_SEVEN


# I.5
def test_base_table_deals_three_each_and_three_strokes_to_the_first_seat() -> None:
    """I.5: the base six, three to each seat; the first seat takes three strokes; Seal 0."""
    s = new_base_table(7)
    position = to_json(s)
    assert sorted(position["hands"][0] + position["hands"][1]) == sorted(c.name for c in BASE_SIX)
    assert [len(h) for h in position["hands"]] == [3, 3]
    assert position["market"] == []
    assert (position["hoards"], position["plenum"], position["seal"]) == ([3, 0], 27, 0)
    assert s.current_player == 0


# IV.2, Q-09
def test_market_table_deals_five_each_and_three_to_the_market() -> None:
    """IV.2, Q-09: thirteen shuffled, five to each seat, three to the market; I.5 otherwise."""
    position = to_json(new_market_table(3))
    dealt = position["hands"][0] + position["hands"][1] + position["market"]
    assert sorted(dealt) == sorted(c.name for c in BASE_SIX + FOLDED_SEVEN)
    assert [len(h) for h in position["hands"]] == [5, 5]
    assert len(position["market"]) == 3
    assert position["plenum"] == 27


#
def test_seeded_deals_are_reproducible_and_documented() -> None:
    """Q-09: random.Random(seed).shuffle of the titles in book order, dealt from the front."""
    import random

    deck = [c.name for c in BASE_SIX]
    random.Random(42).shuffle(deck)
    assert to_json(new_base_table(42))["hands"] == [deck[:3], deck[3:]]
    assert new_market_table(5) == new_market_table(5)
    assert new_market_table(5) != new_market_table(6)


# IV.3
def test_explicit_deal_with_set_aside_and_stable_card_ids() -> None:
    """IV.3: an explicit deal; card ids follow deal order and the set-aside is out of reach."""
    s = from_deal([["Tally", "Gram"], ["Trace"]], ["Plenum"], ["Zenoseal"])
    assert [s.title_of(c) for c in range(5)] == ["Tally", "Gram", "Trace", "Plenum", "Zenoseal"]
    assert s.card_of("Zenoseal") == 4
    assert "build Zenoseal" not in {a for a in map(str, s.legal_actions())}
    assert 4 not in [a >> 5 & 63 for a in s.legal_actions()]


#
def test_a_title_dealt_twice_is_refused() -> None:
    """Q-05: a table holds one copy of each title."""
    with pytest.raises(DealError, match="dealt twice"):
        from_deal([["Tally"], ["Tally"]])


# I.4
def test_an_unknown_title_is_refused() -> None:
    """I.4, I.2: fixtures and unknown names are never dealt."""
    with pytest.raises(DealError, match="Seal"):
        from_deal([["Seal"], []])


# IV.3
def test_portfolio_kind_is_kept_through_json_and_records() -> None:
    """IV.3: a portfolio table says so in its position, and its record replays as one."""
    from game.window import from_json, parse_record, replay

    s = from_deal([["Tally"], ["Gram"]], kind="portfolio")
    assert from_json(to_json(s)) == s
    record = {
        "format": "cz-table-record/1",
        "deal": {"table": "portfolio", "hands": [["Tally"], ["Gram"]]},
        "actions": [],
    }
    assert replay(parse_record(record)) == s
    with pytest.raises(DealError, match="not 'arena'"):
        from_deal([["Tally"], []], kind="arena")


# I.5, IV.2, IV.3 (one check for deals and positions: a named table is dealt as the book says)
@pytest.mark.parametrize(
    ("hands", "market", "kind", "section"),
    [
        (
            [["Tally", "Pairing", "Separation"], ["Escrow", "Reflection", "Torsor"]],
            [],
            "base",
            "I.5",
        ),
        (
            [["Tally", "Pairing"], ["Separation", "Escrow", "Reflection", "Exchange"]],
            [],
            "base",
            "I.5",
        ),
        (
            [["Tally", "Pairing", "Separation"], ["Escrow", "Reflection"]],
            ["Exchange"],
            "base",
            "I.5",
        ),
        ([["Tally"], ["Gram"]], ["Torsor", "Balance", "Descent", "Turn"], "portfolio", "IV.3"),
    ],
)
def test_a_named_table_is_dealt_as_the_book_says(hands, market, kind: str, section: str) -> None:
    """I.5, IV.3: from_deal refuses a base or portfolio deal the book does not make."""
    with pytest.raises(DealError, match=re.escape(section)):
        from_deal(hands, market, kind=kind)


# IV.2
def test_a_market_deal_is_five_five_and_three_of_the_thirteen() -> None:
    """IV.2: the thirteen, five to each seat, three to the market; and it reads back."""
    state = new_market_table(11)
    deal = to_json(state)
    hands, market = deal["hands"], deal["market"]
    assert from_deal(hands, market, kind="market") == state
    with pytest.raises(DealError, match=r"IV\.2"):
        from_deal([hands[0][:4], hands[1]], [*market, hands[0][4]], kind="market")
