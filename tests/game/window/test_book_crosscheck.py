"""Book I read again, clause by clause, as scenarios: the convening, the turn, each action,
conservation, the close. How they are built and why they are worked out apart:
tests/game/window/crosscheck.py."""

from __future__ import annotations

import random

import pytest

from game.window import (
    TERMINAL,
    DealError,
    IllegalActionError,
    NotationError,
    State,
    from_deal,
    new_base_table,
    new_market_table,
    parse_action,
    to_json,
)
from tests.game.window.crosscheck import (
    BALANCE,
    BASE_SIX,
    LOSS,
    WIN,
    closed,
    everything_somewhere,
    hand,
    position,
    refused,
    spoils,
    verdicts,
)
from tests.game.window.tables import chain, legal, play

# --------------------------------------------------------------------------- I.5 convening


def test_i5_base_table_deals_three_face_down_to_each_hand_row() -> None:
    """I.5: the base six shuffled, three to each hand row, chains empty, nothing in a market."""
    s = new_base_table(4)  # I.5
    j = to_json(s)
    assert len(j["hands"][0]) == len(j["hands"][1]) == 3
    assert sorted(j["hands"][0] + j["hands"][1]) == sorted(BASE_SIX)
    assert j["chains"] == [[], []]
    assert j["market"] == []
    assert j["spoils"] == [[], []]


def test_i5_first_seat_takes_three_strokes_and_the_seal_shows_zero() -> None:
    """I.5: the first seat takes three strokes (the plenum shows 27); the Seal shows 0."""
    s = from_deal([["Tally", "Pairing", "Separation"], ["Escrow", "Reflection", "Exchange"]])
    j = to_json(s)  # I.5
    assert j["hoards"] == [3, 0]
    assert j["plenum"] == 27
    assert j["seal"] == 0
    assert s.current_player == 0
    assert not s.is_over


def test_i5_everything_is_open_both_hands_are_in_the_position() -> None:
    """I.5: all information is open — both hand rows can be inspected by anyone."""
    s = from_deal([["Tally"], ["Exchange"]])  # I.5
    assert hand(s, 0) == ["Tally"]
    assert hand(s, 1) == ["Exchange"]


@pytest.mark.parametrize("fixture", ["Sponsorship", "Seal"])
def test_i2_fixtures_are_never_dealt(fixture: str) -> None:
    """I.1, I.2: Sponsorship and Seal convene the table and are never dealt."""
    with pytest.raises(DealError):  # I.2
        from_deal([[fixture], ["Tally"]])


def test_q05_a_title_twice_is_refused() -> None:
    """Q-05 (Book II BALANCE's single copy rule): a deal naming one title twice is refused."""
    with pytest.raises(DealError):
        from_deal([["Tally"], ["Tally"]])


# --------------------------------------------------------------------------- I.6 the turn


def test_i6_seats_alternate_and_the_seal_steps_after_the_second_seat() -> None:
    """I.6: one action per turn, seats alternate; the Seal steps once when the second seat acts."""
    s = from_deal([["Tally", "Pairing"], ["Escrow", "Exchange"]])
    play(s, "build Tally")  # I.6
    assert s.current_player == 1
    assert s.seal == 0
    play(s, "build Escrow")
    assert s.current_player == 0
    assert s.seal == 1


def test_i6_there_is_no_pass() -> None:
    """I.6, I.8: you may never pass — the notation has no such action."""
    s = from_deal([["Tally"], ["Escrow"]])
    with pytest.raises(NotationError):  # I.8 never pass
        parse_action(s, "pass")


def test_i6_compelled_accelerate_when_every_action_is_closed() -> None:
    """I.6, R-01: with every action closed, Accelerate is compelled even twice running."""
    s = position(last=("accelerate", None))  # I.6, R-01
    assert legal(s) == {"accelerate"}
    play(s, "accelerate")
    assert s.seal == 1


def test_i6_compelled_accelerate_twice_running_over_two_rounds() -> None:
    """R-01: an empty-handed seat Accelerates on consecutive turns of its own."""
    s = position()  # seat 0 has nothing at all, nor has seat 1
    play(s, "accelerate")  # 1
    play(s, "accelerate")  # seat 1: 2, round end: 3
    assert s.seal == 3
    assert s.current_player == 0
    assert legal(s) == {"accelerate"}  # twice running on seat 0's own turns
    play(s, "accelerate")
    assert s.seal == 4
    assert to_json(s)["last_action"] == ["accelerate", "accelerate"]


def test_i7_accelerate_not_twice_in_a_row_when_something_else_is_open() -> None:
    """I.7 ACCELERATE: not twice in a row on your own turns unless the law of the turn compels."""
    s = position(hands=(["Tally"], []), last=("accelerate", None))
    assert legal(s) == {"build Tally"}  # I.7 ACCELERATE
    refused(s, "accelerate", "twice")


def test_r09_stage_cannot_forbid_a_compelled_accelerate() -> None:
    """R-09, Book III STAGE: Stage closes Accelerate unless the law of the turn compels it."""
    s = position(theirs=["Stage"])
    assert legal(s) == {"accelerate"}
    play(s, "accelerate")
    assert s.seal == 1


def test_book3_stage_closes_accelerate_when_another_action_is_open() -> None:
    """Book III STAGE: with any other action open, the opponent of Stage cannot Accelerate."""
    s = position(theirs=["Stage"], hands=(["Tally"], []))
    assert legal(s) == {"build Tally"}  # Book III STAGE
    refused(s, "accelerate", "Stage")


def test_r09_exhaustion_cannot_forbid_a_compelled_accelerate() -> None:
    """R-09, Book III EXHAUSTION: Exhaustion plus Stage leave only the compelled Accelerate."""
    s = position(theirs=["Stage"], hands=(["Tally"], []), last=("build", None))
    assert legal(s) == {"build Tally"}  # Stage alone leaves the Build
    s = position(
        theirs=["Stage"], hands=(["Tally"], []), last=("build", None), exhausted=(True, False)
    )  # build is banned by Exhaustion, Accelerate by Stage
    assert legal(s) == {"accelerate"}
    play(s, "accelerate")
    assert s.seal == 1


def test_r09_exhaustion_after_a_compelled_accelerate_still_compels_it() -> None:
    """R-09: a seat whose last turn was Accelerate and who is exhausted still Accelerates."""
    s = position(last=("accelerate", None), exhausted=(True, False))
    assert legal(s) == {"accelerate"}


def test_i6_twelve_closes_at_once_the_second_seat_does_not_act() -> None:
    """I.6, R-07: the first seat Accelerates 11 to 12; the table closes, nothing follows."""
    s = position(hands=(["Tally"], ["Escrow"]), seal=11)  # I.6
    play(s, "accelerate")
    assert s.seal == 12
    assert s.is_over
    assert s.current_player == TERMINAL
    assert s.legal_actions() == ()
    assert hand(s, 1) == ["Escrow"]
    with pytest.raises(IllegalActionError):
        s.apply(parse_action(s, "build Escrow"))


def test_i6_the_round_end_step_to_twelve_closes_the_table() -> None:
    """I.6: the automatic step at round end from 11 reaches 12 and closes the table."""
    s = position(hands=(["Tally"], ["Escrow"]), seal=11, to_move=1)
    play(s, "build Escrow")  # I.6
    assert s.seal == 12
    assert s.is_over
    assert s.verdict(0) in (WIN, LOSS, BALANCE)


def test_i1_no_verdict_before_the_close() -> None:
    """I.1 Settling: a table settles only when it produces a verdict at the close."""
    s = position(hands=(["Tally"], ["Escrow"]))
    with pytest.raises(ValueError, match="not closed"):  # I.1
        s.verdict(0)


# --------------------------------------------------------------------------- I.7 BUILD


def test_i7_build_places_face_up_at_the_outer_end_and_is_free() -> None:
    """I.7 BUILD, I.3, I.8: the card goes face up to the outer end; no stroke moves."""
    s = position(["Tally"], [], hands=(["Exchange"], []), hoards=(3, 0))
    play(s, "build Exchange")  # I.7 BUILD
    assert chain(s, 0) == ["Tally", "Exchange"]
    assert s.hoards == [3, 0]
    assert s.plenum == 27


def test_i7_build_from_the_market() -> None:
    """I.7 BUILD: at a market table the Build may take from the market."""
    s = position(market=["Exchange"], hands=(["Tally"], []))
    assert {"build Exchange", "build Tally"} <= legal(s)  # I.7 BUILD
    play(s, "build Exchange")
    assert chain(s, 0) == ["Exchange"]
    assert to_json(s)["market"] == []


def test_i7_build_cannot_take_from_the_opponents_hand() -> None:
    """I.7 BUILD: take one card from *your* hand row."""
    s = position(hands=(["Tally"], ["Exchange"]))
    refused(s, "build Exchange", "hand")  # I.7 BUILD


# --------------------------------------------------------------------------- I.7 COLLECT


def test_i7_collect_counts_the_axis_and_every_face_up_chained_card_both_sides() -> None:
    """I.7 COLLECT: N = 1 (axis) + face-up chained cards on both sides; folded ones not."""
    s = position(["Pairing", "Tally", "~Escrow"], ["Exchange", "~Reflection"], hoards=(3, 0))
    play(s, "collect")  # I.7 COLLECT: 1 + Pairing, Tally + Exchange = 4
    assert s.hoards == [7, 0]
    assert s.plenum == 23


def test_i7_collect_needs_pairing_face_up() -> None:
    """I.7 COLLECT: a folded Pairing gives no Collect."""
    s = position(["~Pairing", "Tally"], [], hands=(["Exchange"], []))
    assert "collect" not in legal(s)  # I.7 COLLECT
    refused(s, "collect", "Pairing")


def test_i7_collect_closed_when_the_plenum_holds_fewer_than_n() -> None:
    """I.7 COLLECT: if the plenum holds fewer than N the Collect is closed; never partial."""
    s = position(["Pairing", "Tally"], ["Exchange"], hands=(["Escrow"], []), hoards=(24, 3))
    assert s.plenum == 3  # N = 4
    assert "collect" not in legal(s)  # I.7 COLLECT
    refused(s, "collect", "fewer")


def test_i7_collect_exactly_what_remains_is_allowed() -> None:
    """I.7 COLLECT: a plenum holding exactly N pays exactly N."""
    s = position(["Pairing", "Tally"], ["Exchange"], hoards=(23, 3))
    play(s, "collect")  # I.7 COLLECT: N = 4 = plenum
    assert s.plenum == 0
    assert s.hoards == [27, 3]


# --------------------------------------------------------------------------- I.7 CUT


def test_i7_cut_the_smaller_inner_piece_yields_its_outermost_card() -> None:
    """I.7 CUT: seam 2 of five cards: the inner piece (2) is smaller; its outermost yields."""
    s = position(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange", "Reflection"])
    play(s, "cut 2")  # I.7 CUT
    assert spoils(s, 0) == ["Pairing"]
    assert chain(s, 1) == ["Tally", "Escrow", "Exchange", "Reflection"]  # closes up in order
    assert chain(s, 0) == ["~Separation"]  # spent
    assert s.current_player == 1


def test_i7_cut_the_smaller_outer_piece_yields_the_chains_outermost_card() -> None:
    """I.7 CUT: seam 3 of five: the outer piece (2) is smaller; the outermost card yields."""
    s = position(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange", "Reflection"])
    play(s, "cut 3")  # I.7 CUT
    assert spoils(s, 0) == ["Reflection"]
    assert chain(s, 1) == ["Tally", "Pairing", "Escrow", "Exchange"]


def test_i7_cut_equal_pieces_the_defender_chooses() -> None:
    """I.7 CUT: equal pieces — the defender (not the cutter) chooses which piece yields."""
    s = position(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"])
    play(s, "cut 2")  # I.7 CUT: pieces 2 and 2
    assert s.current_player == 1  # the defender decides
    assert legal(s) == {"yield Pairing", "yield Exchange"}
    play(s, "yield Pairing")
    assert spoils(s, 0) == ["Pairing"]
    assert chain(s, 1) == ["Tally", "Escrow", "Exchange"]
    assert s.current_player == 1
    assert s.pending is None


def test_i7_cut_spoils_lie_face_down_and_score_holdings() -> None:
    """I.7 CUT, I.9 HOLDINGS: spoils lie beside the taker's chain and score one Holding each."""
    s = position(["Separation"], ["Tally", "Exchange", "Pairing"])
    play(s, "cut 2")  # I.7 CUT: outer piece of one yields Pairing
    assert spoils(s, 0) == ["Pairing"]
    assert s.columns()[0][2] == 1
    assert s.columns()[1][2] == 0
    assert s.columns()[0][0] == 0  # spoils add no Substance; the folded Separation neither


def test_i7_cut_needs_separation_face_up() -> None:
    """I.7 CUT: a folded Separation cuts nothing."""
    s = position(["~Separation"], ["Tally", "Exchange"], hands=(["Pairing"], []))
    assert not any(a.startswith("cut") for a in legal(s))
    refused(s, "cut 1", "Separation")  # I.7 CUT


def test_q22_a_chain_of_one_card_has_no_seam() -> None:
    """I.1 seam, Q-22: a border between two adjacent cards; a single card offers none."""
    s = position(["Separation"], ["Exchange"], hands=(["Pairing"], []))
    assert not any(a.startswith("cut") for a in legal(s))


def test_i7_cut_a_seam_whose_yielding_card_keeping_shields_cannot_be_named() -> None:
    """I.7 CUT, Book II KEEPING: only seams whose yielding card is unshielded may be named."""
    s = position(["Separation"], ["Tally", "Keeping", "Pairing", "Escrow", "Exchange"])
    cuts = {a for a in legal(s) if a.startswith("cut")}
    # seam 1 yields Tally (shielded); seam 2 yields Keeping (never protects itself);
    # seams 3 and 4 yield Exchange.
    assert cuts == {"cut 2", "cut 3", "cut 4"}  # Book II KEEPING
    refused(s, "cut 1", "Keeping")


def test_q06_equal_pieces_with_one_candidate_shielded_yield_the_other() -> None:
    """Q-06: equal pieces, Keeping shields one candidate; the other yields with no choice."""
    s = position(["Separation"], ["Keeping", "Pairing", "Tally", "Exchange"])
    play(s, "cut 2")  # candidates Pairing (shielded) and Exchange
    assert spoils(s, 0) == ["Exchange"]
    assert s.pending is None
    assert s.current_player == 1


def test_q06_equal_pieces_both_shielded_the_seam_cannot_be_named() -> None:
    """Q-06: equal pieces, Keeping shields both yielding cards: the seam cannot be named."""
    s = position(["Separation"], ["Tally", "Pairing", "Keeping", "Exchange"])
    cuts = {a for a in legal(s) if a.startswith("cut")}
    # seam 1 yields Tally; seam 2 (equal) offers Pairing and Exchange, both Keeping's
    # neighbours; seam 3 yields Exchange (shielded).
    assert cuts == {"cut 1"}


# --------------------------------------------------------------------------- I.7 SWAP


def test_i7_swap_moves_only_the_chains_and_folds_the_mirror() -> None:
    """I.7 SWAP: chains change owners; Reflection folds; hands, strokes and spoils stay."""
    s = position(
        ["Reflection", "Tally"],
        ["Exchange"],
        hands=(["Pairing"], ["Escrow"]),
        spoils=(["Separation"], []),
        hoards=(3, 5),
    )
    play(s, "swap")  # I.7 SWAP
    assert chain(s, 0) == ["Exchange"]
    assert chain(s, 1) == ["~Reflection", "Tally"]
    assert hand(s, 0) == ["Pairing"]
    assert hand(s, 1) == ["Escrow"]
    assert spoils(s, 0) == ["Separation"]
    assert s.hoards == [3, 5]


@pytest.mark.parametrize("where", ["mine", "theirs"])
def test_book3_faithful_face_up_anywhere_closes_swap_to_both_seats(where: str) -> None:
    """Book III FAITHFUL: face up anywhere on the table, the chains cannot change owners."""
    mine, theirs = (["Reflection", "Faithful"], ["Tally"])
    if where == "theirs":
        mine, theirs = ["Reflection"], ["Faithful"]
    s = position(mine, theirs, hands=(["Pairing"], []))
    assert "swap" not in legal(s)  # Book III FAITHFUL
    refused(s, "swap", "Faithful")


def test_book3_faithful_folded_does_not_close_swap() -> None:
    """Book III FAITHFUL: only *while face up*; folded, its rule is silent (I.1)."""
    s = position(["Reflection"], ["~Faithful"])
    assert "swap" in legal(s)  # Book III FAITHFUL


def test_book3_faithful_in_hand_does_not_close_swap() -> None:
    """Book III FAITHFUL: a Faithful in a hand row is not face up on the table."""
    s = position(["Reflection"], ["Tally"], hands=([], ["Faithful"]))
    assert "swap" in legal(s)  # Book III FAITHFUL, I.1 face up = in force


# --------------------------------------------------------------------------- I.7 HOLD


def test_i7_hold_names_a_face_up_card_other_than_the_innermost() -> None:
    """I.7 HOLD: only face-up cards other than their innermost may be named."""
    s = position(["Escrow"], ["Tally", "Pairing", "~Exchange", "Reflection"])
    holds = {a for a in legal(s) if a.startswith("hold")}
    assert holds == {"hold Pairing", "hold Reflection"}  # I.7 HOLD
    refused(s, "hold Tally", "innermost")
    refused(s, "hold Exchange", "face-up")


def test_i7_hold_the_named_card_leaves_the_chain_and_sits_beside_the_axis() -> None:
    """I.7 HOLD: the card leaves (the chain closes) and is the hostage; Holdings +1 (I.9)."""
    s = position(["Escrow"], ["Tally", "Pairing", "Reflection"])
    play(s, "hold Pairing")  # I.7 HOLD
    assert chain(s, 1) == ["Tally", "Reflection"]
    assert to_json(s)["hostage"] == {"card": "Pairing", "owner": 1}
    assert s.columns()[0][2] == 1  # I.9 HOLDINGS: hostage under my Escrow


def test_i7_hold_only_one_hostage_at_a_time() -> None:
    """I.7 HOLD: the table must hold no hostage already."""
    s = position(["Escrow"], ["Tally", "Pairing", "Reflection"], hostage=("Exchange", 1))
    assert not any(a.startswith("hold") for a in legal(s))  # I.7 HOLD
    refused(s, "hold Pairing", "hostage")


def test_i7_hold_needs_escrow_face_up() -> None:
    """I.7 HOLD: a folded Escrow holds nothing."""
    s = position(["~Escrow"], ["Tally", "Pairing"], hands=(["Exchange"], []))
    assert not any(a.startswith("hold") for a in legal(s))  # I.7 HOLD


def test_book2_keeping_shields_its_two_neighbours_from_hold() -> None:
    """Book II KEEPING: its neighbours cannot be taken by Hold; Keeping itself can."""
    s = position(["Escrow"], ["Tally", "Pairing", "Keeping", "Reflection", "Exchange"])
    holds = {a for a in legal(s) if a.startswith("hold")}
    assert holds == {"hold Keeping", "hold Exchange"}  # Book II KEEPING


def test_book2_a_folded_keeping_shields_nothing() -> None:
    """Book II KEEPING: only *while face up*."""
    s = position(["Escrow"], ["Tally", "Pairing", "~Keeping", "Reflection"])
    holds = {a for a in legal(s) if a.startswith("hold")}
    assert holds == {"hold Pairing", "hold Reflection"}  # Book II KEEPING


# --------------------------------------------------------------------------- I.7 RANSOM


def test_i7_ransom_pays_the_printed_cost_to_the_escrow_holder() -> None:
    """I.7 RANSOM: pay the hostage's printed cost to whoever controls Escrow; card to hand."""
    s = position(["Escrow"], ["Tally"], hostage=("Exchange", 1), hoards=(0, 12), to_move=1)
    play(s, "ransom")  # I.7 RANSOM: Exchange costs 10
    assert s.hoards == [10, 2]
    assert s.plenum == 18
    assert hand(s, 1) == ["Exchange"]
    assert to_json(s)["hostage"] is None
    assert to_json(s)["ransoms"] == [0, 1]


def test_i7_ransom_needs_the_full_price_in_strokes() -> None:
    """I.7 RANSOM, I.3(2): the price is the printed cost; no partial payment."""
    s = position(["Escrow"], ["Tally"], hostage=("Exchange", 1), hoards=(0, 9), to_move=1)
    assert "ransom" not in legal(s)  # I.7 RANSOM
    refused(s, "ransom", "less than")


def test_i7_ransom_only_your_own_hostage() -> None:
    """I.7 RANSOM: *if the hostage is yours*; the holder cannot ransom it."""
    s = position(["Escrow"], ["Tally"], hostage=("Pairing", 1), hoards=(10, 0))
    assert "ransom" not in legal(s)  # I.7 RANSOM
    refused(s, "ransom", "not yours")


def test_i7_ransom_at_most_twice_per_game() -> None:
    """I.7 RANSOM: each player may ransom at most twice per game; a third is refused."""
    s = position(
        ["Escrow"], ["Tally"], hostage=("Pairing", 1), hoards=(0, 10), to_move=1, ransoms=(0, 2)
    )
    assert "ransom" not in legal(s)  # I.7 RANSOM
    refused(s, "ransom", "twice")


def test_i7_two_ransoms_in_one_game_then_no_third() -> None:
    """I.7 RANSOM: the count runs over the whole game: two ransoms, then no third."""
    s = position(
        ["Escrow"],
        ["Tally", "Pairing"],
        hands=(["Exchange", "Turn", "Keeping"], []),
        hoards=(0, 20),
    )
    play(s, "hold Pairing", "ransom")  # first ransom: 4 to seat 0
    play(s, "build Exchange", "build Pairing")
    play(s, "hold Pairing", "ransom")  # second
    play(s, "build Turn", "build Pairing")
    play(s, "hold Pairing")
    assert to_json(s)["ransoms"] == [0, 2]
    assert s.hoards == [8, 12]
    assert "ransom" not in legal(s)  # I.7 RANSOM: at most twice


def test_i7_ransom_released_free_when_escrow_is_cut_away() -> None:
    """I.7 RANSOM: Escrow cut away releases the hostage at once, free, to its owner's hand."""
    s = position(
        ["Tally", "Exchange", "Escrow"],
        ["Separation"],
        hostage=("Pairing", 1),
        hoards=(3, 0),
        to_move=1,
    )
    play(s, "cut 2")  # I.7 CUT: outer piece of one yields Escrow
    assert spoils(s, 1) == ["Escrow"]
    assert to_json(s)["hostage"] is None
    assert hand(s, 1) == ["Pairing"]
    assert s.hoards == [3, 0]  # free


def test_i7_ransom_released_when_escrow_is_challenged_face_down() -> None:
    """I.7 RANSOM, Book II NO-GO: Escrow challenged down releases its hostage."""
    s = position(["Tally", "Escrow"], ["No-Go"], hostage=("Pairing", 1), to_move=1)
    play(s, "nogo Escrow", "drill success")  # Book II NO-GO
    assert chain(s, 0) == ["Tally", "~Escrow"]
    assert to_json(s)["hostage"] is None
    assert hand(s, 1) == ["Pairing"]


def test_r04_a_swap_giving_the_owner_escrow_releases_the_hostage() -> None:
    """R-04, I.7 RANSOM: a Swap that puts Escrow in the victim's control releases the hostage."""
    s = position(["Escrow", "Tally"], ["Reflection"], hostage=("Pairing", 1), to_move=1)
    play(s, "swap")
    assert chain(s, 1) == ["Escrow", "Tally"]
    assert to_json(s)["hostage"] is None
    assert hand(s, 1) == ["Pairing"]
    assert s.columns()[1][2] == 0
    assert s.columns()[0][2] == 0


def test_book3_interface_ransom_to_the_plenum() -> None:
    """Book III INTERFACE: your Ransom may be paid to the plenum; the card still returns."""
    s = position(["Escrow"], ["Interface"], hostage=("Pairing", 1), hoards=(0, 6), to_move=1)
    assert {"ransom", "ransom to plenum"} <= legal(s)  # Book III INTERFACE
    play(s, "ransom to plenum")
    assert s.hoards == [0, 2]
    assert s.plenum == 28
    assert hand(s, 1) == ["Pairing"]
    assert to_json(s)["ransoms"] == [0, 1]


def test_book3_interface_is_the_ransomers_not_the_holders() -> None:
    """Book III INTERFACE: *your* Ransom — the holder's Interface gives the payer nothing."""
    s = position(
        ["Escrow", "Interface"], ["Tally"], hostage=("Pairing", 1), hoards=(0, 6), to_move=1
    )
    assert "ransom to plenum" not in legal(s)  # Book III INTERFACE
    refused(s, "ransom to plenum", "Interface")


# --------------------------------------------------------------------------- I.7 CONVERT


def test_i7_convert_both_directions() -> None:
    """I.7 CONVERT: give 3 take 7, or give 7 take 3, with the plenum."""
    s = position(["Exchange"], [], hoards=(7, 0))
    assert {"convert 3>7", "convert 7>3"} <= legal(s)  # I.7 CONVERT
    play(s, "convert 3>7")
    assert s.hoards == [11, 0]
    assert s.plenum == 19
    s = position(["Exchange"], [], hoards=(7, 0))
    play(s, "convert 7>3")
    assert s.hoards == [3, 0]
    assert s.plenum == 27


def test_i7_convert_needs_exchange_face_up_and_the_strokes() -> None:
    """I.7 CONVERT: needs your Exchange face up; 7>3 needs seven strokes to give."""
    s = position(["~Exchange"], [], hoards=(7, 0), hands=(["Tally"], []))
    assert not any(a.startswith("convert") for a in legal(s))
    s = position(["Exchange"], [], hoards=(6, 0))
    assert "convert 7>3" not in legal(s)
    assert "convert 3>7" in legal(s)


def test_q08_convert_3_to_7_when_the_plenum_covers_it_once_paid() -> None:
    """Q-08: 3>7 needs the plenum to hold 7 once the 3 are given (4 before)."""
    s = position(["Exchange"], [], hoards=(26, 0))
    play(s, "convert 3>7")  # plenum 4 + 3 = 7
    assert s.plenum == 0
    assert s.hoards == [30, 0]
    s = position(["Exchange"], [], hoards=(27, 0), hands=(["Tally"], []))
    assert "convert 3>7" not in legal(s)


def test_r03_convert_on_consecutive_turns_without_limit() -> None:
    """R-03: Convert is once per turn (one action), unlimited per game."""
    s = position(["Exchange"], [], hoards=(3, 0), last=("convert", None))
    play(s, "convert 3>7", "accelerate", "convert 3>7", "accelerate", "convert 7>3")
    assert s.hoards == [7, 0]
    assert s.plenum == 23


# --------------------------------------------------------------------------- I.8, E-01


def _random_table(state: State, rng: random.Random, limit: int = 3000) -> State:
    """Play uniformly random legal actions (drills included) to the close, checking I.8."""
    seal = state.seal
    for _ in range(limit):
        if state.is_over:
            return state
        actions = state.legal_actions()
        assert actions  # I.6: nothing may ever leave a seat without an action
        state.apply(rng.choice(actions))
        everything_somewhere(state)  # I.8
        assert state.seal >= seal  # I.8: the Seal never runs backward
        seal = state.seal
    raise AssertionError("the table did not close")


@pytest.mark.parametrize("seed", range(12))
def test_i8_market_tables_conserve_thirty_strokes_and_every_certificate(seed: int) -> None:
    """I.8: thirty strokes at the start and the close; every certificate always somewhere."""
    s = _random_table(new_market_table(seed), random.Random(seed))
    assert s.seal == 12
    assert s.verdict(0) in (WIN, LOSS, BALANCE)


@pytest.mark.parametrize("seed", range(12))
def test_i8_archive_deals_conserve_thirty_strokes_and_every_certificate(seed: int) -> None:
    """I.8 over the Archive: sixteen distinct titles dealt 5/5, 3 to the market, 3 aside."""
    from ledger.catalog import PLAYING

    rng = random.Random(1000 + seed)
    pool = rng.sample([c.name for c in PLAYING], 16)
    s = from_deal([pool[:5], pool[5:10]], pool[10:13], pool[13:], kind="portfolio")
    _random_table(s, rng)
    assert s.is_over


def test_e01_conservation_forces_24_then_21() -> None:
    """E-01: with thirty conserved, two Collects of three from 27 show the plenum 24, then 21."""
    s = from_deal([["Pairing", "Escrow"], ["Tally", "Exchange"]])
    play(s, "build Pairing", "build Tally")  # plenum 27, hoards 3/0
    play(s, "collect")  # E-01: N = axis + Pairing + Tally = 3
    assert (s.plenum, s.hoards) == (24, [6, 0])
    play(s, "accelerate", "collect")
    assert (s.plenum, s.hoards) == (21, [9, 0])  # E-01: 24/21, never off by three
    assert s.plenum + sum(s.hoards) == 30


# --------------------------------------------------------------------------- I.9, I.10


def test_i9_substance_form_holdings_and_a_balance_verdict() -> None:
    """I.9, I.10: costs of face-up chained cards plus strokes; longest face-up run; spoils.

    Substance to seat 0, Form level, Holdings to seat 1: no majority forms, a Balance.
    """
    s = closed(
        ["Exchange", "~Tally", "Pairing", "Escrow"],
        ["Separation", "Reflection"],
        spoils=([], ["Keeping"]),
        hoards=(5, 0),
    )
    assert s.columns() == ((23, 2, 0), (5, 2, 1))  # I.9
    assert verdicts(s) == (BALANCE, BALANCE)  # I.10


def test_i9_two_columns_of_three_win_with_one_level() -> None:
    """I.9: whoever takes the majority of columns (two) wins."""
    s = closed(["Exchange", "Tally"], ["Reflection"])
    assert s.columns() == ((15, 2, 0), (2, 1, 0))
    assert verdicts(s) == (WIN, LOSS)


def test_i9_columns_are_never_added() -> None:
    """I.8, I.9: thirty Substance does not outweigh losing Form and Holdings."""
    s = closed(
        ["Exchange", "~Tally"],
        ["Reflection", "Pairing"],
        spoils=([], ["Separation"]),
        hoards=(20, 0),
    )
    assert s.columns() == ((30, 1, 0), (6, 2, 1))
    assert verdicts(s) == (LOSS, WIN)  # I.9 never added


def test_i9_all_three_level_is_a_balance() -> None:
    """I.9: all three columns level — a Balance."""
    s = closed(["Tally"], ["Exchange"], hoards=(5, 0))
    assert s.columns() == ((10, 1, 0), (10, 1, 0))
    assert verdicts(s) == (BALANCE, BALANCE)


def test_i9_a_hostage_under_your_escrow_at_the_close_is_a_holding() -> None:
    """I.9 HOLDINGS: plus one if a hostage sits under an Escrow you control at the close."""
    s = closed(["Escrow"], ["Tally"], hostage=("Pairing", 1))
    assert (s.columns()[0][2], s.columns()[1][2]) == (1, 0)  # I.9 HOLDINGS
    assert s.columns()[1][0] == 5  # the hostage adds nothing to its owner's Substance
