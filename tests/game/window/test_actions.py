"""The eight actions of I.7, each with its conditions: position, action, expected position."""

from __future__ import annotations

import pytest

from game.window import IllegalActionError, parse_action
from tests.game.window.tables import chain, legal, play, setup


def refused(state, text: str) -> str:
    """Apply ``text``, expect a refusal, and return its rule sentence."""
    before = state.clone()
    with pytest.raises(IllegalActionError) as info:
        state.apply(parse_action(state, text))
    assert state == before  # a refused action moves nothing
    return info.value.rule


# I.7 BUILD
def test_build_places_face_up_at_the_outer_end() -> None:
    """I.7 BUILD: a card from the hand row enters force at the outer end of the chain."""
    s = setup(chains=(["Tally"], []), hands=(["Pairing"], []))
    play(s, "build Pairing")
    assert chain(s, 0) == ["Tally", "Pairing"]
    assert s.hands[0] == []


# I.7 BUILD
def test_build_takes_from_the_market() -> None:
    """I.7 BUILD, IV.2: at a market table a Build may take a market card."""
    s = setup(market=["Torsor"], hands=(["Tally"], []))
    play(s, "build Torsor")
    assert chain(s, 0) == ["Torsor"]
    assert s.market == []


# I.7 BUILD
def test_build_of_a_card_not_in_reach_is_refused() -> None:
    """I.7 BUILD: the opponent's hand row is not yours to build from."""
    s = setup(hands=(["Tally"], ["Pairing"]))
    assert "not in your hand row or the market" in refused(s, "build Pairing")


# I.3, I.7 BUILD
def test_build_is_free() -> None:
    """I.3: building costs nothing; every stroke stays where it stands."""
    s = setup(hands=(["Exchange"], []), hoards=(3, 0))
    play(s, "build Exchange")
    assert (s.hoards, s.plenum) == ([3, 0], 27)


# I.7 COLLECT
def test_collect_counts_axis_and_face_up_cards_on_both_sides() -> None:
    """I.7 COLLECT: N = 1 (axis) + each face-up chained card, both sides; folded ones not."""
    s = setup(chains=(["Pairing", "Tally", "~Escrow"], ["Exchange", "~Reflection"]))
    play(s, "collect")
    assert s.hoards[0] == 1 + 2 + 1
    assert s.plenum == 26


# I.7 COLLECT
def test_collect_needs_pairing_face_up() -> None:
    """I.7 COLLECT needs your Pairing face up."""
    s = setup(chains=(["~Pairing", "Tally"], []))
    assert "Pairing face up" in refused(s, "collect")


# I.7 COLLECT
def test_collect_is_closed_when_the_plenum_is_short() -> None:
    """I.7 COLLECT: no partial collection — with the plenum below N the Collect is closed."""
    s = setup(chains=(["Pairing", "Tally", "Escrow"], ["Exchange"]), hoards=(27, 0))
    assert s.collect_count(0) == 5
    assert "collect" not in legal(s)
    assert "no partial collection" in refused(s, "collect")


# I.7 CUT
def test_cut_takes_the_smaller_pieces_outermost_card_as_spoils() -> None:
    """I.7 CUT: seam 1 of four leaves pieces 1|3: the inner piece yields its outermost card."""
    s = setup(chains=(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"]))
    play(s, "cut 1")
    assert chain(s, 1) == ["Pairing", "Escrow", "Exchange"]  # the chain closes up in order
    assert [s.title_of(c) for c in s.spoils[0]] == ["Tally"]
    assert chain(s, 0) == ["~Separation"]  # Cut spends Separation
    assert s.columns()[0][2] == 1  # spoils score one Holding


# I.7 CUT
def test_cut_near_the_outer_end_takes_the_outermost_card() -> None:
    """I.7 CUT: seam 3 of four cards leaves pieces 3|1: the outer piece yields the chain's end."""
    s = setup(chains=(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"]))
    play(s, "cut 3")
    assert chain(s, 1) == ["Tally", "Pairing", "Escrow"]
    assert [s.title_of(c) for c in s.spoils[0]] == ["Exchange"]


# I.7 CUT
def test_cut_equal_pieces_the_defender_chooses() -> None:
    """I.7 CUT: equal pieces — the defender (now the current player) chooses which piece yields."""
    s = setup(chains=(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"]))
    play(s, "cut 2")
    assert s.current_player == 1
    assert legal(s) == {"yield Pairing", "yield Exchange"}
    play(s, "yield Exchange")
    assert chain(s, 1) == ["Tally", "Pairing", "Escrow"]
    assert s.current_player == 1
    assert s.to_move == 1


# I.7 CUT, Q-22
def test_cut_needs_a_seam_between_two_cards() -> None:
    """Q-22: a chain of one card has no seam; seam numbers run 1…L-1 from the axis."""
    s = setup(chains=(["Separation"], ["Tally"]))
    assert not any(a.startswith("cut") for a in legal(s))
    assert "no seam 1" in refused(s, "cut 1")


# I.7 CUT
def test_cut_needs_separation_face_up() -> None:
    """I.7 CUT needs your Separation face up."""
    s = setup(chains=(["~Separation"], ["Tally", "Pairing"]))
    assert "Separation face up" in refused(s, "cut 1")


# I.7 SWAP
def test_swap_exchanges_chains_and_folds_reflection() -> None:
    """I.7 SWAP: chains change owners; hands, strokes and spoils stay; every Reflection folds."""
    s = setup(
        chains=(["Reflection", "Tally"], ["Exchange"]),
        hands=(["Pairing"], []),
        spoils=([], ["Escrow"]),
        hoards=(4, 1),
    )
    play(s, "swap")
    assert chain(s, 0) == ["Exchange"]
    assert chain(s, 1) == ["~Reflection", "Tally"]
    assert s.hoards == [4, 1]
    assert [s.title_of(c) for c in s.hands[0]] == ["Pairing"]
    assert [s.title_of(c) for c in s.spoils[1]] == ["Escrow"]


# I.7 HOLD
def test_hold_takes_a_face_up_card_other_than_the_innermost() -> None:
    """I.7 HOLD: the named face-up card leaves the chain and sits beside the axis as the hostage."""
    s = setup(chains=(["Escrow"], ["Tally", "Pairing", "~Exchange"]))
    assert legal(s) >= {"hold Pairing"}
    assert "hold Tally" not in legal(s)  # their innermost
    assert "hold Exchange" not in legal(s)  # face down
    play(s, "hold Pairing")
    assert chain(s, 1) == ["Tally", "~Exchange"]
    assert s.title_of(s.hostage) == "Pairing"
    assert s.hostage_owner == 1
    assert s.columns()[0][2] == 1  # a hostage under your Escrow is a Holding (I.9)


# I.7 HOLD
def test_only_one_hostage_at_a_time() -> None:
    """I.7 HOLD: the table must hold no hostage already."""
    s = setup(chains=(["Escrow"], ["Tally", "Pairing"]), hostage=("Exchange", 1))
    assert "already holds a hostage" in refused(s, "hold Pairing")


# I.7 HOLD
def test_hold_of_the_innermost_card_is_refused() -> None:
    """I.7 HOLD: their innermost card cannot be named."""
    s = setup(chains=(["Escrow"], ["Tally", "Pairing"]))
    assert "innermost" in refused(s, "hold Tally")


# I.7 RANSOM
def test_ransom_pays_the_escrow_controller_and_returns_the_card() -> None:
    """I.7 RANSOM: pay the printed cost to whoever controls Escrow; the card returns to hand."""
    s = setup(chains=(["Escrow"], ["Tally"]), hostage=("Pairing", 1), hoards=(0, 6), to_move=1)
    play(s, "ransom")
    assert s.hoards == [4, 2]
    assert s.hostage == -1
    assert [s.title_of(c) for c in s.hands[1]] == ["Pairing"]
    assert s.ransoms == [0, 1]


# I.7 RANSOM
def test_ransom_needs_the_printed_cost() -> None:
    """I.7 RANSOM, I.3(2): the price is the printed cost; a short hoard cannot pay it."""
    s = setup(chains=(["Escrow"], ["Tally"]), hostage=("Exchange", 1), hoards=(0, 9), to_move=1)
    assert "less than the ransom" in refused(s, "ransom")


# I.7 RANSOM
def test_ransom_at_most_twice_per_game() -> None:
    """I.7 RANSOM: each player may ransom at most twice per game."""
    s = setup(
        chains=(["Escrow"], ["Tally"]),
        hostage=("Pairing", 1),
        hoards=(0, 6),
        to_move=1,
        ransoms=(0, 2),
    )
    assert "at most twice" in refused(s, "ransom")


# I.7 RANSOM
def test_only_the_owner_ransoms() -> None:
    """I.7 RANSOM: only a hostage that is yours can be ransomed."""
    s = setup(chains=(["Escrow"], ["Tally"]), hostage=("Pairing", 1), hoards=(6, 0))
    assert "not yours" in refused(s, "ransom")


# I.7 CONVERT, R-03
def test_convert_both_directions() -> None:
    """I.7 CONVERT: give 3 take 7, or give 7 take 3; unlimited per game (R-03)."""
    s = setup(chains=(["Exchange"], ["Tally"]), hoards=(3, 0), last_action=("convert", None))
    play(s, "convert 3>7")
    assert s.hoards[0] == 7
    assert s.plenum == 23
    play(s, "accelerate", "convert 7>3")
    assert s.hoards[0] == 3
    assert s.plenum == 27


# I.7 CONVERT, Q-08
def test_convert_needs_the_strokes_on_both_sides() -> None:
    """Q-08: 3>7 needs 3 in your hoard and 4 in the plenum (the 3 paid make 7)."""
    s = setup(chains=(["Exchange"], []), hoards=(2, 24))
    assert "convert 3>7" not in legal(s)
    s = setup(chains=(["Exchange"], []), hoards=(3, 23))  # plenum 4
    play(s, "convert 3>7")
    assert s.plenum == 0
    assert s.hoards == [7, 23]


# I.7 ACCELERATE
def test_accelerate_steps_the_seal_at_once() -> None:
    """I.7 ACCELERATE: the Seal steps immediately, besides the step at the round's end."""
    s = setup(hands=(["Tally"], ["Pairing"]))
    play(s, "accelerate")
    assert s.seal == 1
    play(s, "build Pairing")
    assert s.seal == 2  # the round's own step


# I.7 ACCELERATE
def test_accelerate_not_twice_in_a_row() -> None:
    """I.7 ACCELERATE: not twice in a row on your own turns while another action is open."""
    s = setup(hands=(["Tally", "Escrow"], ["Pairing", "Exchange"]))
    play(s, "accelerate", "build Pairing")
    assert "accelerate" not in legal(s)
    assert "twice in a row" in refused(s, "accelerate")
