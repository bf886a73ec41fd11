"""Books I, II, III and VI read again, clause by clause, as scenarios: a second pair of eyes.

Each test builds a position through the engine's public API only (a deal with ``from_deal``
or a hand-written cz-position/1 read by ``from_json``), plays actions in the notation of
docs/formats.md, and compares the position, the columns, the verdict, the set of legal
actions or the refusal with the book's own words, worked out by hand from the text (never
read back from the engine). The scenarios and their expected results are worked out apart
from the other window tests, so the two readings do not share a mistake; the mechanical
helpers (write a position document, play notation) hold no reading and are shared with them
(tests/game/window/tables.py). Findings where the engine and the book part ways live in
/work/notes/engine-review.md, not here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from game.window import (
    CHANCE,
    TERMINAL,
    DealError,
    IllegalActionError,
    NotationError,
    State,
    Verdict,
    from_deal,
    from_json,
    new_base_table,
    new_market_table,
    parse_action,
    to_json,
)
from ledger.errors import SchemaError
from tests.game.window.tables import chain, legal, play, setup

BASE_SIX = ("Tally", "Pairing", "Separation", "Escrow", "Reflection", "Exchange")
WIN, LOSS, BALANCE = Verdict.WIN, Verdict.LOSS, Verdict.BALANCE


# --------------------------------------------------------------------------- helpers


def position(
    mine: Sequence[str] = (),
    theirs: Sequence[str] = (),
    *,
    last: tuple[str | None, str | None] = (None, None),
    **kw: Any,
) -> State:
    """A hand-written cz-position/1: ``mine`` is seat 0's chain, ``theirs`` seat 1's.

    Chains run from the axis outward; ``~`` marks a folded card. Seal 12 writes a closed table.
    """
    return setup((mine, theirs), last_action=last, **kw)


def closed(mine: Sequence[str] = (), theirs: Sequence[str] = (), **kw: Any) -> State:
    """A table the Seal has closed (twelve), ready to be reckoned."""
    return position(mine, theirs, seal=12, **kw)


def hand(state: State, seat: int) -> list[str]:
    return to_json(state)["hands"][seat]


def spoils(state: State, seat: int) -> list[str]:
    return to_json(state)["spoils"][seat]


def refused(state: State, text: str, match: str | None = None) -> None:
    """``text`` is refused with :class:`IllegalActionError` and nothing moves."""
    before = to_json(state)
    with pytest.raises(IllegalActionError, match=match):
        state.apply(parse_action(state, text))
    assert to_json(state) == before


def verdicts(state: State) -> tuple[Verdict, Verdict]:
    return state.verdict(0), state.verdict(1)


def everything_somewhere(state: State) -> None:
    """I.8: every certificate is in exactly one place; thirty strokes in the world."""
    j = to_json(state)
    places = [
        *(t for h in j["hands"] for t in h),
        *(c["card"] for ch in j["chains"] for c in ch),
        *(t for sp in j["spoils"] for t in sp),
        *j["market"],
        *j["aside"],
        *([j["hostage"]["card"]] if j["hostage"] else []),
    ]
    assert sorted(places) == sorted(j["cards"])
    assert sum(j["hoards"]) + j["plenum"] == 30


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


# --------------------------------------------------------------------------- Book II


def test_book2_torsor_adds_the_difference_of_the_substances() -> None:
    """Book II TORSOR: face up at scoring, add |S0 - S1| to your Substance."""
    s = closed(["Torsor"], ["Exchange"])
    assert s.columns()[0][0] == 10  # Book II TORSOR: 6 + |6 - 10|
    assert s.columns()[1][0] == 10


def test_r06_torsor_acts_after_the_debts() -> None:
    """R-06: Torsor reads the Substances after Spend-Covering's debt is settled."""
    s = closed(["Torsor"], ["Spend-Covering", "Exchange"], hoards=(0, 10))
    # theirs 5 + 10 + 10 - 10 = 15; mine 6 + |6 - 15| = 15 (not 6 + 19)
    assert (s.columns()[0][0], s.columns()[1][0]) == (15, 15)


def test_book2_torsor_folded_adds_nothing() -> None:
    """Book II TORSOR: only while face up at scoring."""
    s = closed(["~Torsor"], ["Exchange"])
    assert s.columns()[0][0] == 0


def test_r12_independence_blocks_their_torsor() -> None:
    """R-12, Book III INDEPENDENCE: their Torsor gains nothing from the difference."""
    s = closed(["Torsor"], ["Exchange", "Independence"])
    assert (s.columns()[0][0], s.columns()[1][0]) == (6, 13)


def test_r12_your_own_independence_leaves_your_torsor_alone() -> None:
    """R-12: your own scoring cards are unaffected by your Independence."""
    s = closed(["Torsor", "Independence"], ["Exchange"])
    assert s.columns()[0][0] == 10  # 9 + |9 - 10|


def test_book2_balance_claims_the_single_level_column() -> None:
    """Book II BALANCE: exactly one column level — it is the Balance holder's; two of three win."""
    s = closed(["Balance", "Exchange"], ["Tally", "Pairing", "Reflection"])
    assert s.columns() == ((12, 2, 0), (11, 3, 0))  # Holdings level
    assert verdicts(s) == (WIN, LOSS)  # Book II BALANCE


def test_book2_balance_cannot_claim_two_level_columns() -> None:
    """Book II BALANCE: *exactly one* level column; with two level it claims nothing."""
    s = closed(["Balance", "Exchange"], ["Tally", "Escrow", "Separation"])
    assert s.columns() == ((12, 2, 0), (12, 3, 0))
    assert verdicts(s) == (BALANCE, BALANCE)  # I.9: one column of three is no majority


def test_r12_independence_stops_their_balance_claim() -> None:
    """R-12: their Balance cannot claim the level column."""
    s = closed(["Balance", "Exchange"], ["Tally", "Independence", "Reflection"])
    assert s.columns() == ((12, 2, 0), (10, 3, 0))
    assert verdicts(s) == (BALANCE, BALANCE)


def test_book2_balance_folded_claims_nothing() -> None:
    """Book II BALANCE: only while face up at scoring."""
    s = closed(["Exchange", "~Balance", "Tally"], ["Pairing", "Escrow", "Reflection"])
    assert s.columns() == ((15, 1, 0), (10, 3, 0))
    assert verdicts(s) == (BALANCE, BALANCE)


def test_book2_descent_folded_scores_the_seals_final_step() -> None:
    """Book II DESCENT: face down in your chain it scores the Seal's final step (12)."""
    assert closed(["~Descent", "Tally"]).columns()[0][0] == 17
    assert closed(["Descent", "Tally"]).columns()[0][0] == 8  # built and standing: a plain 3


def test_book2_descent_in_spoils_scores_nothing_but_a_holding() -> None:
    """Book II DESCENT: *in your chain* — as spoils it is a Holding, not the clock."""
    s = closed([], [], spoils=(["Descent"], []))
    assert s.columns()[0] == (0, 0, 1)


def test_q20_descent_before_the_close_reads_the_seal_as_it_stands() -> None:
    """Q-20: columns asked before the close use the Seal as it stands."""
    s = position(["~Descent"], seal=5)
    assert s.columns()[0][0] == 5


def test_book2_turn_reorders_their_chain_keeping_faces() -> None:
    """Book II TURN, Q-16: spend Turn; the turner places their cards in any order."""
    s = position(["Turn"], ["Tally", "~Pairing", "Escrow"])
    play(s, "turn theirs")
    assert chain(s, 0) == ["~Turn"]
    assert s.current_player == 0  # the turner chooses the order
    assert legal(s) == {"place Tally", "place Pairing", "place Escrow"}
    play(s, "place Escrow", "place Tally")
    assert chain(s, 1) == ["Escrow", "Tally", "~Pairing"]
    assert s.current_player == 1


def test_book2_turn_reorders_your_own_chain() -> None:
    """Book II TURN: yours or theirs; the spent Turn moves with the rest."""
    s = position(["Turn", "Tally", "Exchange"])
    play(s, "turn mine", "place Exchange", "place Turn")
    assert chain(s, 0) == ["Exchange", "~Turn", "Tally"]


def test_book2_turn_folded_reorders_nothing() -> None:
    """Book II TURN: a spent Turn has no power until raised."""
    s = position(["~Turn", "Tally"], ["Pairing", "Escrow"], hands=(["Exchange"], []))
    assert not any(a.startswith("turn") for a in legal(s))


def test_book2_keeping_never_protects_itself_from_cut() -> None:
    """Book II KEEPING: the seam that yields Keeping may be named."""
    s = position(["Separation"], ["Keeping", "Tally", "Pairing"])
    play(s, "cut 1")  # pieces 1/2: Keeping yields
    assert spoils(s, 0) == ["Keeping"]


def test_book2_nogo_success_folds_the_challenged_card() -> None:
    """Book II NO-GO, R-02: No-Go is spent, the drill is the caller's; success folds."""
    s = position(["No-Go"], ["Tally", "Pairing"])
    play(s, "nogo Pairing")
    assert chain(s, 0) == ["~No-Go"]
    assert s.current_player == CHANCE
    assert legal(s) == {"drill success", "drill failure"}
    play(s, "drill success")
    assert chain(s, 1) == ["Tally", "~Pairing"]
    assert s.current_player == 1


def test_book2_nogo_failure_spends_nogo_for_nothing() -> None:
    """Book II NO-GO, IV.4: failure spends No-Go for nothing."""
    s = position(["No-Go"], ["Tally", "Pairing"])
    play(s, "nogo Pairing", "drill failure")
    assert chain(s, 0) == ["~No-Go"]
    assert chain(s, 1) == ["Tally", "Pairing"]


def test_book2_nogo_challenges_only_their_face_up_cards() -> None:
    """Book II NO-GO: one face-up card *of the opponent's*."""
    s = position(["No-Go", "Tally"], ["Pairing", "~Escrow"])
    assert {a for a in legal(s) if a.startswith("nogo")} == {"nogo Pairing"}


def test_book2_spend_covering_takes_five_on_building() -> None:
    """Book II SPEND-COVERING: on building it, take five strokes at once from the plenum."""
    s = position(hands=(["Spend-Covering"], []), hoards=(3, 0))
    play(s, "build Spend-Covering")
    assert (s.hoards, s.plenum) == ([8, 0], 22)


def test_book2_spend_covering_takes_all_that_remain_if_fewer() -> None:
    """Book II SPEND-COVERING: or all that remain, if fewer."""
    s = position(hands=(["Spend-Covering"], []), hoards=(0, 27))
    play(s, "build Spend-Covering")
    assert (s.hoards, s.plenum) == ([3, 27], 0)


def test_book2_spend_covering_debt_is_the_most_expensive_card_in_the_chain() -> None:
    """Book II SPEND-COVERING: owe the cost of the most expensive card in your chain."""
    s = closed(["Spend-Covering", "Exchange"], hoards=(5, 0))
    assert s.columns()[0][0] == 10  # 5 + 10 + 5 - 10
    s = closed(["Spend-Covering", "~Exchange", "Tally"], hoards=(12, 0))
    assert s.columns()[0][0] == 12  # the folded Exchange is still in the chain: 22 - 10


def test_i9_a_debt_greater_than_what_you_hold_stops_at_zero() -> None:
    """I.9: a debt greater than what you hold takes all of it and stops there."""
    s = closed(["~Spend-Covering", "~Exchange"], hoards=(3, 0))
    assert s.columns()[0][0] == 0


def test_r05_the_debt_binds_a_folded_spend_covering() -> None:
    """R-05: Spend-Covering's reckoning applies face up or down."""
    s = closed(["~Spend-Covering", "Tally"], hoards=(2, 0))
    assert s.columns()[0][0] == 2  # 5 + 2 - 5


def test_book2_spend_covering_in_spoils_owes_nothing() -> None:
    """Book II SPEND-COVERING, I.9: the debt is of *your chain*; spoils are not in it."""
    s = closed(["Exchange"], [], spoils=(["Spend-Covering"], []))
    assert s.columns()[0] == (10, 1, 1)


# --------------------------------------------------------------------------- Book III, Set II


def test_book3_alphabet_lets_a_build_go_to_the_inner_end() -> None:
    """Book III ALPHABET: your Build may place the new card against the axis."""
    s = position(["Alphabet", "Tally"], hands=(["Exchange"], []))
    assert {"build Exchange", "build Exchange inner"} <= legal(s)
    play(s, "build Exchange inner")
    assert chain(s, 0) == ["Exchange", "Alphabet", "Tally"]


def test_book3_without_alphabet_in_force_no_inner_build() -> None:
    """I.1 inner and outer, Book III ALPHABET: folded, Alphabet places nothing inner."""
    s = position(["~Alphabet", "Tally"], hands=(["Exchange"], []))
    assert "build Exchange inner" not in legal(s)
    refused(s, "build Exchange inner", "Alphabet")


def test_book3_gram_bridges_a_single_folded_card_without_adding_length() -> None:
    """Book III GRAM: one face-down card between two face-up cards does not break the run."""
    assert closed(["Gram", "~Tally", "Pairing"]).columns()[0][1] == 2
    assert closed(["Exchange", "~Tally", "Pairing"]).columns()[0][1] == 1  # no Gram


def test_book3_gram_two_folded_cards_together_still_break_the_run() -> None:
    """Book III GRAM: two face-down cards together still break it."""
    assert closed(["Gram", "~Tally", "~Pairing", "Escrow"]).columns()[0][1] == 1


def test_q14_gram_spans_every_single_folded_card() -> None:
    """Q-14: every lone folded card between face-up cards is spanned."""
    s = closed(["Gram", "~Tally", "Pairing", "~Escrow", "Exchange"])
    assert s.columns()[0][1] == 3


def test_book3_canonical_guards_its_other_cards_from_nogo() -> None:
    """Book III CANONICAL: no power may turn another card of yours face down (No-Go included)."""
    s = position(["No-Go"], ["Canonical", "Tally"])
    play(s, "nogo Tally", "drill success")
    assert chain(s, 1) == ["Canonical", "Tally"]
    assert chain(s, 0) == ["~No-Go"]  # the challenge is still spent


def test_book3_canonical_never_protects_itself() -> None:
    """Book III CANONICAL: Canonical may always be challenged."""
    s = position(["No-Go"], ["Canonical", "Tally"])
    play(s, "nogo Canonical", "drill success")
    assert chain(s, 1) == ["~Canonical", "Tally"]


def test_q03_canonical_does_not_stop_a_card_spending_itself() -> None:
    """Q-03: Separation under its own Canonical is still spent by its Cut."""
    s = position(["Separation", "Canonical"], ["Tally", "Pairing", "Exchange"])
    play(s, "cut 2")  # 2/1: Exchange yields
    assert chain(s, 0) == ["~Separation", "Canonical"]


def test_book3_wellformed_adds_two_to_a_chain_without_folded_cards() -> None:
    """Book III WELLFORMED: no face-down card in your chain — add two to your Form."""
    assert closed(["Wellformed", "Tally"]).columns()[0][1] == 4
    assert closed(["Wellformed", "~Tally", "Pairing"]).columns()[0][1] == 1


def test_book3_wellformed_excepts_a_folded_noninscript() -> None:
    """Book III WELLFORMED: transparent Noninscript excepted."""
    assert closed(["Wellformed", "~Noninscript", "Tally"]).columns()[0][1] == 4


def test_book3_admission_takes_a_market_card_into_the_hand_row() -> None:
    """Book III ADMISSION: spend it, take any one market card into your hand row."""
    s = position(["Admission"], market=["Exchange", "Tally"])
    assert {"admit Exchange", "admit Tally"} <= legal(s)
    play(s, "admit Exchange")
    assert (chain(s, 0), hand(s, 0), to_json(s)["market"]) == (
        ["~Admission"],
        ["Exchange"],
        ["Tally"],
    )


# --------------------------------------------------------------------------- Book III, Set III


def test_book3_constructor_builds_two_at_the_outer_end_as_one_action() -> None:
    """Book III CONSTRUCTOR: build twice, your order, both at the outer end, one action."""
    s = position(["Constructor"], hands=(["Tally", "Pairing"], []), market=["Exchange"])
    play(s, "construct Exchange Tally")
    assert chain(s, 0) == ["~Constructor", "Exchange", "Tally"]
    assert (hand(s, 0), to_json(s)["market"], s.current_player) == (["Pairing"], [], 1)


def test_book3_constructor_on_build_effects_follow_the_chosen_order() -> None:
    """Book III CONSTRUCTOR, PLENUM, SPEND-COVERING: each on-build effect in its turn."""
    s = position(["Constructor"], hands=(["Plenum", "Spend-Covering"], []), hoards=(3, 4))
    play(s, "construct Plenum Spend-Covering")  # all strokes home, then take five
    assert (s.hoards, s.plenum) == ([5, 0], 25)
    s = position(["Constructor"], hands=(["Plenum", "Spend-Covering"], []), hoards=(3, 4))
    play(s, "construct Spend-Covering Plenum")  # take five, then all strokes home
    assert (s.hoards, s.plenum) == ([0, 0], 30)


def test_q24_constructor_ignores_alphabet() -> None:
    """Q-24: Constructor's two cards go to the outer end even with Alphabet in force."""
    s = position(["Alphabet", "Constructor"], hands=(["Tally", "Pairing"], []))
    play(s, "construct Tally Pairing")
    assert chain(s, 0) == ["Alphabet", "~Constructor", "Tally", "Pairing"]


def test_book3_generator_trickles_one_stroke_at_round_end() -> None:
    """Book III GENERATOR: at each round's end, one stroke from the plenum to its holder."""
    s = position(["Generator"], hands=(["Tally"], ["Pairing"]), hoards=(3, 0))
    play(s, "build Tally")
    assert s.hoards == [3, 0]  # not after the first seat's turn
    play(s, "build Pairing")
    assert (s.hoards, s.plenum, s.seal) == ([4, 0], 26, 1)


def test_book3_generator_stops_when_the_hoards_hold_as_much_as_the_plenum() -> None:
    """Book III GENERATOR: only if the plenum then holds more than both hoards together."""
    s = position(["Tally"], ["Generator"], hands=([], ["Pairing"]), hoards=(10, 5), to_move=1)
    play(s, "build Pairing")  # plenum 15, hoards 15: not more
    assert (s.hoards, s.plenum) == ([10, 5], 15)
    s = position(["Tally"], ["Generator"], hands=([], ["Pairing"]), hoards=(10, 4), to_move=1)
    play(s, "build Pairing")  # plenum 16 > 14: seat 1 takes one
    assert (s.hoards, s.plenum) == ([10, 5], 15)


def test_book3_generator_folded_trickles_nothing() -> None:
    """Book III GENERATOR: only while face up."""
    s = position(["~Generator"], hands=([], ["Pairing"]), hoards=(3, 0), to_move=1)
    play(s, "build Pairing")
    assert s.hoards == [3, 0]


def test_q04_generator_trickles_before_the_twelfth_step() -> None:
    """Q-04: at the last round's end the trickle comes first, then the Seal closes the table."""
    s = position(["Generator"], hands=([], ["Tally"]), seal=11, to_move=1, hoards=(3, 0))
    play(s, "build Tally")
    assert (s.is_over, s.hoards) == (True, [4, 0])


def test_r07_an_accelerate_to_twelve_ends_the_round_before_its_end() -> None:
    """R-07: the second seat Accelerates 11 to 12; nothing follows, not even the trickle."""
    s = position(["Generator"], hands=([], ["Tally"]), seal=11, to_move=1, hoards=(3, 0))
    play(s, "accelerate")
    assert (s.is_over, s.seal, s.hoards) == (True, 12, [3, 0])


def test_book3_fork_may_be_thrown_instead_of_the_yielding_card() -> None:
    """Book III FORK: the defender may throw Fork; Fork is taken instead."""
    s = position(["Separation"], ["Tally", "Fork", "Pairing"])
    play(s, "cut 2")  # pieces 2/1: Pairing would yield
    assert s.current_player == 1
    assert legal(s) == {"yield Pairing", "yield Fork"}
    play(s, "yield Fork")
    assert (spoils(s, 0), chain(s, 1)) == (["Fork"], ["Tally", "Pairing"])
    assert chain(s, 0) == ["~Separation"]


def test_book3_fork_folded_cannot_be_thrown() -> None:
    """Book III FORK: only while face up."""
    s = position(["Separation"], ["Tally", "~Fork", "Pairing"])
    play(s, "cut 2")
    assert (spoils(s, 0), s.current_player, s.pending) == (["Pairing"], 1, None)


def test_q06_fork_shielded_by_keeping_cannot_be_thrown() -> None:
    """Q-06: Fork thrown is *taken*; Keeping's neighbour cannot be taken."""
    s = position(["Separation"], ["Keeping", "Fork", "Tally", "Pairing"])
    play(s, "cut 3")  # pieces 3/1: Pairing yields; Fork is Keeping's neighbour
    assert (spoils(s, 0), s.pending) == (["Pairing"], None)


def test_book3_genealogy_doubles_a_face_up_innermost_card() -> None:
    """Book III GENEALOGY: your innermost card, if face up, scores its cost twice."""
    assert closed(["Exchange", "Genealogy"]).columns()[0][0] == 25
    assert closed(["Genealogy", "Exchange"]).columns()[0][0] == 20  # it doubles itself
    assert closed(["~Exchange", "Genealogy"]).columns()[0][0] == 5  # folded innermost


def test_q10_genealogy_folded_doubles_nothing() -> None:
    """Q-10, I.1: a folded card's rule is silent; Genealogy folded doubles nothing."""
    assert closed(["Exchange", "~Genealogy"]).columns()[0][0] == 10


def test_r08_model_a_copies_the_cut_of_the_card_inner_to_it_and_spends_itself() -> None:
    """R-08, Book III MODEL-A: Model-A has the inner neighbour's Cut, with its own face."""
    s = position(["Separation", "Model-A"], ["Tally", "Pairing", "Escrow"])
    cuts = {a for a in legal(s) if a.startswith("cut")}
    assert cuts == {"cut 1", "cut 2", "cut 1 with Model-A", "cut 2 with Model-A"}
    play(s, "cut 2 with Model-A")  # pieces 2/1: Escrow yields
    assert (chain(s, 0), spoils(s, 0)) == (["Separation", "~Model-A"], ["Escrow"])


def test_r08_model_b_copies_the_card_outer_to_it() -> None:
    """R-08, Book III MODEL-B: as Model-A, but the card immediately outer."""
    s = position(["Model-B", "Turn"], ["Tally"])
    assert {"turn mine with Model-B", "turn theirs with Model-B"} <= legal(s)
    s = position(["Turn", "Model-B"], ["Tally"])
    assert not any(a.endswith("with Model-B") for a in legal(s))


def test_r08_a_model_beside_a_card_without_a_core_power_copies_nothing() -> None:
    """R-08: the seven core action powers only; Tally carries none."""
    s = position(["Tally", "Model-A"], ["Pairing", "Escrow"], hands=(["Exchange"], []))
    assert legal(s) == {"build Exchange", "accelerate"}


def test_r08_models_facing_each_other_copy_nothing() -> None:
    """Book III MODEL-B, R-08: two Models facing each other copy nothing."""
    s = position(["Model-B", "Model-A"], ["Tally", "Pairing"], hands=(["Exchange"], []))
    assert legal(s) == {"build Exchange", "accelerate"}


def test_r08_model_copies_one_hop_only() -> None:
    """R-08: one hop — Model-A beside Model-B beside Separation copies nothing."""
    s = position(["Model-B", "Separation", "Model-A"], ["Tally", "Pairing"])
    cuts = {a for a in legal(s) if a.startswith("cut")}
    assert cuts == {"cut 1", "cut 1 with Model-A", "cut 1 with Model-B"}


# Q-02 as revised (the review's D-a scenarios; under the first Q-02 both failed)
def test_r08_a_model_copies_with_its_own_face_beside_a_folded_card() -> None:
    """R-08, Q-02: Model-A up beside a spent Separation still has its Cut, and spends itself."""
    s = position(["~Separation", "Model-A"], ["Tally", "Pairing", "Escrow"])
    assert "cut 2 with Model-A" in legal(s)
    play(s, "cut 2 with Model-A")
    assert chain(s, 0) == ["~Separation", "~Model-A"]
    assert spoils(s, 0) == ["Escrow"]


def test_r08_a_model_collects_beside_a_folded_pairing() -> None:
    """R-08, MODEL-A, Q-02: Collect is among the seven; the Model's own face is what counts."""
    s = position(["~Pairing", "Model-A"], ["Exchange"], hands=(["Tally"], []))
    assert "collect" in legal(s)  # N = 1 + Model-A + Exchange = 3
    play(s, "collect")
    assert to_json(s)["hoards"] == [3, 0]


def test_book3_omegafam_collect_counts_every_chained_card() -> None:
    """Book III OMEGAFAM: Collect counts face-down chained cards too, both sides, plus axis."""
    s = position(["Pairing", "Omegafam", "~Tally"], ["~Escrow", "Exchange"])
    play(s, "collect")  # 1 + 3 + 2
    assert (s.hoards, s.plenum) == ([6, 0], 24)


def test_book3_omegafam_folded_or_theirs_counts_face_up_only() -> None:
    """Book III OMEGAFAM: *your* Collect, *while face up*."""
    s = position(["Pairing", "~Omegafam", "~Tally"], ["~Escrow", "Exchange"])
    play(s, "collect")  # 1 + Pairing + Exchange
    assert s.hoards == [3, 0]
    s = position(["Pairing", "~Tally"], ["Omegafam", "~Escrow"])
    play(s, "collect")  # 1 + Pairing + Omegafam
    assert s.hoards == [3, 0]


def test_book3_omegafam_collect_closed_when_the_plenum_is_short() -> None:
    """I.7 COLLECT under OMEGAFAM: N = 6, the plenum holds 5: closed, never partial."""
    s = position(
        ["Pairing", "Omegafam", "~Tally"],
        ["~Escrow", "Exchange"],
        hands=(["Turn"], []),
        hoards=(20, 5),
    )
    assert "collect" not in legal(s)


# --------------------------------------------------------------------------- Book III, Set IV


def test_book3_hemiring_scores_one_per_folded_card() -> None:
    """Book III HEMIRING: your face-down chained cards each score one."""
    assert closed(["Hemiring", "~Tally", "~Exchange"]).columns()[0][0] == 6


def test_book3_hemiring_descent_takes_the_seal_noninscript_scores_nothing() -> None:
    """Book III HEMIRING: Descent still takes the Seal; Noninscript still scores nothing."""
    s = closed(["Hemiring", "~Descent", "~Noninscript", "~Tally"])
    assert s.columns()[0][0] == 17  # 4 + 12 + 0 + 1


def test_book3_hemiring_folded_scores_nothing_for_folded_cards() -> None:
    """Book III HEMIRING: only while face up."""
    assert closed(["~Hemiring", "~Tally"]).columns()[0][0] == 0


def test_book3_primeladder_one_per_different_step_whatever_the_faces() -> None:
    """Book III PRIMELADDER: one Substance per different step between adjacent printed costs."""
    s = closed(["Tally", "Primeladder", "Reflection", "~Exchange"])
    # costs 5 5 2 10: steps 0, 3, 8 (Q-01 counts the zero; the folded Exchange's step counts)
    assert s.columns()[0][0] == 5 + 5 + 2 + 3


def test_book3_primeladder_a_repeated_step_counts_once() -> None:
    """Book III PRIMELADDER: *different* steps — No-Go 1, Separation 3, Tally 5 rise by 2 twice."""
    s = closed(["No-Go", "Separation", "Tally", "Primeladder"])
    assert s.columns()[0][0] == 1 + 3 + 5 + 5 + 2  # steps 2, 2, 0


def test_book3_eulerfuse_returns_a_spoils_card_folded_to_the_outer_end() -> None:
    """Book III EULERFUSE: one of your spoils back to your chain's outer end, face down."""
    s = position(["Eulerfuse", "Tally"], spoils=(["Exchange"], []))
    play(s, "eulerfuse Exchange")
    assert (chain(s, 0), spoils(s, 0)) == (["~Eulerfuse", "Tally", "~Exchange"], [])
    assert s.columns()[0][2] == 0


def test_book3_trace_raises_a_folded_card_where_it_lies() -> None:
    """Book III TRACE: turn one face-down card in your chain face up where it lies."""
    s = position(["Trace", "~Tally", "Pairing"], ["~Exchange"])
    assert {a for a in legal(s) if a.startswith("trace")} == {"trace Tally"}
    play(s, "trace Tally")
    assert chain(s, 0) == ["~Trace", "Tally", "Pairing"]


def test_q19_raising_is_not_building() -> None:
    """Q-19: a raised Spend-Covering takes nothing; a raised Plenum returns nothing."""
    s = position(["Trace", "~Spend-Covering", "~Plenum"], hoards=(3, 2))
    play(s, "trace Spend-Covering")
    assert (s.hoards, s.plenum) == ([3, 2], 25)


def test_book3_selection_removes_its_holders_face_up_cards_from_their_collect() -> None:
    """Book III SELECTION: your face-up cards (Selection included) do not count for theirs."""
    s = position(["Pairing", "Tally"], ["Selection", "Exchange", "~Escrow"])
    play(s, "collect")  # 1 + Pairing + Tally
    assert s.hoards == [3, 0]


def test_book3_selection_does_not_shrink_its_holders_own_collect() -> None:
    """Book III SELECTION: it shrinks *their* table, not yours."""
    s = position(["Pairing", "Selection"], ["Exchange"])
    play(s, "collect")  # 1 + 2 + 1
    assert s.hoards == [4, 0]


def test_q15_omegafam_and_selection_together() -> None:
    """Q-15: Omegafam adds the folded cards; Selection removes its holder's face-up cards."""
    s = position(["Pairing", "Omegafam"], ["Selection", "~Escrow", "Exchange"])
    play(s, "collect")  # 1 + 2 mine + their folded Escrow
    assert s.hoards == [4, 0]


def test_book3_exhaustion_bars_repeating_the_previous_action_once() -> None:
    """Book III EXHAUSTION: their next action may not repeat their previous one."""
    s = position(["Exhaustion"], hands=([], ["Tally", "Pairing"]), last=(None, "build"))
    play(s, "exhaust")
    assert legal(s) == {"accelerate"}
    refused(s, "build Tally", "Exhaustion")
    play(s, "accelerate", "accelerate")  # seat 1, then seat 0
    assert "build Tally" in legal(s)  # only their *next* action was bound


def test_q13_a_refused_cut_is_still_the_cut_exhaustion_bars() -> None:
    """Q-13: a refused Cut is a Cut; Exhaustion then bars a second Cut."""
    s = position(
        ["Separation", "Tally"], ["Refusal", "Exhaustion", "Pairing"], hands=(["Exchange"], [])
    )
    play(s, "cut 2", "refuse")
    assert to_json(s)["last_action"][0] == "cut"
    play(s, "exhaust")
    assert not any(a.startswith("cut") for a in legal(s))


# --------------------------------------------------------------------------- Book III, Set V


def test_book3_plenum_returns_every_stroke_in_both_hoards() -> None:
    """Book III PLENUM: on building it, every stroke in both hoards returns. Yours too."""
    s = position(hands=(["Plenum"], []), hoards=(3, 8))
    play(s, "build Plenum")
    assert (s.hoards, s.plenum) == ([0, 0], 30)


def test_book3_refusal_refuses_a_cut_and_r10_keeps_separation_standing() -> None:
    """Book III REFUSAL, R-10: the naming is refused, the turn consumed, Separation not spent."""
    s = position(["Separation"], ["Tally", "Refusal", "Pairing"])
    play(s, "cut 2")  # 2/1: Pairing would yield
    assert s.current_player == 1  # the defender decides
    assert legal(s) == {"yield Pairing", "refuse"}
    play(s, "refuse")
    assert chain(s, 0) == ["Separation"]
    assert chain(s, 1) == ["Tally", "~Refusal", "Pairing"]
    assert (spoils(s, 0), s.current_player, s.turn) == ([], 1, 1)


def test_book3_refusal_refuses_a_hold() -> None:
    """Book III REFUSAL: when the opponent names a hostage."""
    s = position(["Escrow"], ["Tally", "Pairing", "Refusal"])
    play(s, "hold Pairing")
    assert legal(s) == {"yield Pairing", "refuse"}
    play(s, "refuse")
    assert (to_json(s)["hostage"], chain(s, 1)) == (None, ["Tally", "Pairing", "~Refusal"])
    assert chain(s, 0) == ["Escrow"]


def test_book3_refusal_folded_refuses_nothing() -> None:
    """Book III REFUSAL: only while face up; a one-candidate Cut then resolves at once."""
    s = position(["Separation"], ["Tally", "~Refusal", "Pairing"])
    play(s, "cut 2")
    assert (spoils(s, 0), s.pending) == (["Pairing"], None)


def test_q23_refusal_does_not_answer_nogo() -> None:
    """Q-23: No-Go names a card for a challenge, not a seam or a hostage."""
    s = position(["No-Go"], ["Tally", "Refusal"])
    play(s, "nogo Tally")
    assert s.current_player == CHANCE


def test_book3_shadow_lets_a_longer_folded_run_stand_as_form() -> None:
    """Book III SHADOW: your longest face-down run may stand as Form if greater."""
    assert closed(["Shadow", "~Tally", "~Pairing", "~Escrow"]).columns()[0][1] == 3
    assert closed(["Shadow", "Tally", "~Pairing"]).columns()[0][1] == 2  # not greater
    assert closed(["~Shadow", "~Tally", "~Pairing"]).columns()[0][1] == 0  # folded Shadow


def test_book3_transport_moves_a_card_of_yours_to_either_end() -> None:
    """Book III TRANSPORT: move one card of yours to either end, the rest closing in order."""
    s = position(["Transport", "Tally", "Pairing", "Exchange"])
    play(s, "transport Exchange inner")
    assert chain(s, 0) == ["Exchange", "~Transport", "Tally", "Pairing"]
    s = position(["Transport", "Tally", "Pairing", "Exchange"])
    play(s, "transport Tally outer")
    assert chain(s, 0) == ["~Transport", "Pairing", "Exchange", "Tally"]


def test_book3_transport_moves_only_your_own_cards() -> None:
    """Book III TRANSPORT: one card *of yours*."""
    s = position(["Transport"], ["Tally", "Pairing"])
    refused(s, "transport Tally inner", "your chain")


def test_book3_noninscript_scores_nothing_and_never_breaks_the_run() -> None:
    """Book III NONINSCRIPT: nothing, face up or down; transparent to Form entirely."""
    s = closed(["Noninscript", "Tally"])
    assert s.columns()[0][:2] == (5, 1)  # no Substance, no length
    s = closed(["Tally", "~Noninscript", "Pairing"])
    assert s.columns()[0][:2] == (9, 2)  # the folded Noninscript breaks nothing


def test_book3_zenoseal_holds_the_seal_at_eleven_and_folds() -> None:
    """Book III ZENOSEAL: when the Seal would reach twelve it shows eleven; Zenoseal folds."""
    s = position(["Zenoseal"], hands=(["Tally"], ["Pairing"]), seal=11, to_move=1)
    play(s, "build Pairing")
    assert (s.seal, s.is_over, chain(s, 0)) == (11, False, ["~Zenoseal"])
    play(s, "build Tally")
    play(s, "accelerate")  # the next twelfth step closes the table
    assert (s.seal, s.is_over) == (12, True)


def test_book3_zenoseal_bends_an_accelerate_too() -> None:
    """Book III ZENOSEAL: *when the Seal would reach twelve* — by Accelerate as well."""
    s = position([], ["Zenoseal"], hands=(["Tally"], ["Pairing"]), seal=11)
    play(s, "accelerate")
    assert (s.seal, s.is_over, chain(s, 1), s.current_player) == (11, False, ["~Zenoseal"], 1)


def test_r13_trace_raises_zenoseal_to_fire_once_more() -> None:
    """R-13: Zenoseal fires by folding; Trace raises it to fire once more; then twelve."""
    s = position(["Trace", "~Zenoseal"], hands=(["Tally"], ["Pairing", "Exchange"]), seal=11)
    play(s, "trace Zenoseal")
    assert chain(s, 0) == ["~Trace", "Zenoseal"]
    play(s, "build Pairing")  # round end: fires again
    assert (s.seal, chain(s, 0)) == (11, ["~Trace", "~Zenoseal"])
    play(s, "build Tally", "build Exchange")  # round end: nothing bends it now
    assert (s.seal, s.is_over) == (12, True)


# --------------------------------------------------------------------------- zones


def test_q11_a_faithful_hostage_does_not_close_swap() -> None:
    """Q-11, Book III FAITHFUL: the hostage is not face up in a chain; Swap stays open."""
    s = position(["Escrow", "Reflection"], ["Tally"], hostage=("Faithful", 1))
    assert "swap" in legal(s)


def test_q11_a_stage_held_hostage_does_not_close_accelerate() -> None:
    """Q-11, Book III STAGE: a held Stage is not in force."""
    s = position(["Escrow"], ["Tally"], hands=(["Pairing"], []), hostage=("Stage", 1))
    assert "accelerate" in legal(s)


def test_i8_a_spoils_keeping_shields_nothing() -> None:
    """Book II KEEPING: *in your chain* — as spoils it shields nothing."""
    s = position(["Escrow"], ["Tally", "Pairing", "Exchange"], spoils=([], ["Keeping"]))
    assert {a for a in legal(s) if a.startswith("hold")} == {"hold Pairing", "hold Exchange"}


def test_book3_stage_held_away_reopens_accelerate() -> None:
    """Book III STAGE, I.7 HOLD: once Stage is held, its holder's opponent may Accelerate."""
    s = position(["Escrow", "Tally"], ["Pairing", "Stage"], hands=(["Exchange"], ["Turn"]))
    assert "accelerate" not in legal(s)
    play(s, "hold Stage")
    play(s, "build Turn")
    assert "accelerate" in legal(s)


# ---------------------------------------------------------------------------


def test_r02_the_drill_is_a_chance_node_the_caller_answers() -> None:
    """R-02, IV.4: the No-Go drill waits at a chance node for the caller's outcome."""
    s = position(["No-Go"], ["Tally"])
    play(s, "nogo Tally")
    assert (s.current_player, legal(s)) == (CHANCE, {"drill success", "drill failure"})
    refused(s, "accelerate", "drill")


def test_r11_a_position_carries_no_finish() -> None:
    """R-11: finish is never mechanics — a position names titles only and refuses a finish."""
    s = position(["Tally"])
    doc = to_json(s)
    assert "finish" not in str(doc)
    doc["finishes"] = {"Tally": "holofoil"}
    with pytest.raises(SchemaError):
        from_json(doc)


# --------------------------------------------------------------------------- the deciding seat


def test_i7_cut_by_the_second_seat_asks_the_first_seat_for_equal_pieces() -> None:
    """I.7 CUT: the defender chooses — the first seat, when the second seat cuts."""
    s = position(["Tally", "Pairing"], ["Separation"], to_move=1)
    play(s, "cut 1")  # pieces 1/1
    assert (s.current_player, legal(s)) == (0, {"yield Tally", "yield Pairing"})
    play(s, "yield Tally")
    assert (spoils(s, 1), chain(s, 0), s.seal, s.current_player) == (["Tally"], ["Pairing"], 1, 0)


def test_i7_refusal_fork_and_equal_pieces_are_all_the_defenders_answers() -> None:
    """I.7 CUT, Book III FORK, REFUSAL: every answer to one Cut belongs to the defender."""
    s = position(["Separation"], ["Tally", "Fork", "Refusal", "Pairing"])
    play(s, "cut 2")  # equal pieces: Fork (inner piece's outermost) or Pairing
    assert s.current_player == 1
    assert legal(s) == {"yield Fork", "yield Pairing", "refuse"}


def test_r10_a_refused_model_cut_leaves_the_model_standing() -> None:
    """R-10: the refused player's enabling card is not spent, a Model included."""
    s = position(["Separation", "Model-A"], ["Tally", "Refusal", "Pairing"])
    play(s, "cut 2 with Model-A", "refuse")
    assert (chain(s, 0), spoils(s, 0)) == (["Separation", "Model-A"], [])


def test_book3_refusal_answers_the_first_seats_hold_from_the_second_seat() -> None:
    """Book III REFUSAL: the holder of Refusal (seat 0 here) decides, not the holder of Escrow."""
    s = position(["Tally", "Pairing", "Refusal"], ["Escrow"], to_move=1)
    play(s, "hold Pairing")
    assert (s.current_player, legal(s)) == (0, {"yield Pairing", "refuse"})
    play(s, "yield Pairing")
    assert to_json(s)["hostage"] == {"card": "Pairing", "owner": 0}


# --------------------------------------------------------------------------- Q-09 deals


@pytest.mark.parametrize("seed", [0, 1, 7, 2**40])
def test_q09_seeded_deals_are_the_documented_shuffle(seed: int) -> None:
    """Q-09, formats.md: Random(seed).shuffle of the titles in book order, dealt from the front."""
    from ledger.catalog import BASE_SIX as SIX
    from ledger.catalog import FOLDED_SEVEN

    deck = [c.name for c in SIX]
    random.Random(seed).shuffle(deck)
    j = to_json(new_base_table(seed))
    assert j["hands"] == [deck[:3], deck[3:6]]
    deck = [c.name for c in SIX + FOLDED_SEVEN]
    random.Random(seed).shuffle(deck)
    j = to_json(new_market_table(seed))
    assert (j["hands"], j["market"]) == ([deck[:5], deck[5:10]], deck[10:13])
    assert (j["hoards"], j["plenum"], j["seal"]) == ([3, 0], 27, 0)  # as I.5


# --------------------------------------------------------------------------- I.3, I.4: costs

#: Every ring as printed in I.4, Book II and Book III (41 titles: D-01).
BOOK_COSTS = {
    **{"Tally": 5, "Pairing": 4, "Separation": 3, "Escrow": 4, "Reflection": 2, "Exchange": 10},
    **{"Torsor": 6, "Balance": 2, "Descent": 3, "Turn": 2, "Keeping": 3, "No-Go": 1},
    "Spend-Covering": 5,
    **{"Alphabet": 2, "Gram": 3, "Canonical": 3, "Wellformed": 4, "Faithful": 3},
    **{"Admission": 2, "Interface": 4},
    **{"Constructor": 5, "Generator": 6, "Fork": 3, "Genealogy": 5, "Model-A": 2},
    **{"Model-B": 2, "Omegafam": 10},
    **{"Hemiring": 4, "Primeladder": 5, "Eulerfuse": 3, "Trace": 4, "Independence": 3},
    **{"Selection": 3, "Exhaustion": 1},
    **{"Plenum": 6, "Refusal": 2, "Shadow": 2, "Stage": 3, "Transport": 2, "Noninscript": 1},
    "Zenoseal": 7,
}


def test_d01_forty_one_playing_certificates() -> None:
    """D-01: the sets as printed hold 6 + 7 + 4 × 7 = 41 playing certificates."""
    assert len(BOOK_COSTS) == 41


def test_d01_the_catalog_holds_six_sets_as_printed() -> None:
    """D-01, I.4, Book II, Book III: six sets (6, then five of 7), not I.1's "five sets"."""
    from collections import Counter

    from ledger.catalog import PLAYING, CardSet

    sizes = Counter(c.card_set for c in PLAYING)
    assert list(CardSet) == list(sizes)  # the book's order: base, Folded, Sets II-V
    assert [sizes[s] for s in CardSet] == [6, 7, 7, 7, 7, 7]
    assert {c.name: c.cost for c in PLAYING} == BOOK_COSTS


@pytest.mark.parametrize("title", sorted(set(BOOK_COSTS) - {"Escrow"}))
def test_i3_the_ransom_is_the_printed_cost(title: str) -> None:
    """I.3(2), I.7 RANSOM: each title's ransom is the number in its ring, paid to the holder."""
    s = position(
        ["Escrow"],
        ["Tally" if title != "Tally" else "Pairing"],
        hostage=(title, 1),
        hoards=(0, 10),
        to_move=1,
    )
    play(s, "ransom")
    assert s.hoards == [BOOK_COSTS[title], 10 - BOOK_COSTS[title]]


def test_i4_escrow_stands_for_its_printed_cost() -> None:
    """I.3(1), I.4: Escrow in force is worth its 4 in Substance."""
    assert closed(["Escrow"]).columns()[0][0] == 4


# --------------------------------------------------------------------------- I.8, records


def test_i8_a_folded_certificate_holds_its_place_in_the_chain() -> None:
    """I.8: a folded card lies face down, in place, and may be raised again where it lies."""
    s = position(["No-Go"], ["Tally", "Pairing", "Escrow"], hands=([], ["Trace"]))
    play(s, "nogo Pairing", "drill success")
    assert chain(s, 1) == ["Tally", "~Pairing", "Escrow"]
    play(s, "build Trace", "accelerate", "trace Pairing")
    assert chain(s, 1) == ["Tally", "Pairing", "Escrow", "~Trace"]


def test_formats_a_record_replays_to_the_position_played_by_hand() -> None:
    """formats.md Table records: the deal plus the actions replays to the same position."""
    from game.window import parse_record, replay

    actions = ["build Separation", "build Tally", "build Pairing", "build Exchange", "cut 1"]
    record = {
        "format": "cz-table-record/1",
        "deal": {"table": "deal", "hands": [["Separation", "Pairing"], ["Tally", "Exchange"]]},
        "actions": [*actions, "yield Exchange"],
    }
    by_hand = from_deal([["Separation", "Pairing"], ["Tally", "Exchange"]])
    play(by_hand, *actions)
    assert by_hand.current_player == 1  # I.7 CUT: equal pieces, the defender chooses
    play(by_hand, "yield Exchange")
    replayed = replay(parse_record(record))
    assert to_json(replayed) == to_json(by_hand)
    assert spoils(replayed, 0) == ["Exchange"]
    assert from_json(to_json(replayed)) == replayed


def test_formats_a_record_stops_at_the_first_illegal_action_naming_its_turn() -> None:
    """formats.md: an illegal action is refused with its turn and the rule that forbids it."""
    from game.window import parse_record, replay

    record = {
        "format": "cz-table-record/1",
        "deal": {"table": "deal", "hands": [["Tally"], ["Exchange"]]},
        "actions": ["accelerate", "build Exchange", "accelerate"],
    }
    with pytest.raises(IllegalActionError) as caught:
        replay(parse_record(record))
    assert caught.value.turn == 3
    assert "twice" in caught.value.rule  # I.7 ACCELERATE


# --------------------------------------------------------------------------- more orders and zones


def test_i6_round_end_generator_then_zenoseal_holds_eleven() -> None:
    """Q-04, Book III GENERATOR and ZENOSEAL: at the round's end the trickle, then the bent step."""
    s = position(
        ["Generator", "Zenoseal"], hands=([], ["Tally"]), seal=11, to_move=1, hoards=(3, 0)
    )
    play(s, "build Tally")
    assert (s.hoards, s.seal, s.is_over) == ([4, 0], 11, False)
    assert chain(s, 0) == ["Generator", "~Zenoseal"]


def test_book2_torsor_acts_before_balance_claims_the_level_column() -> None:
    """I.9, Book II TORSOR then BALANCE: Torsor levels Substance; Balance then claims it."""
    s = closed(["Torsor"], ["Exchange", "Balance"], spoils=(["Tally"], []))
    # Substance 6 + |6 - 12| = 12 against 12: level; Form to seat 1; Holdings to seat 0.
    assert s.columns() == ((12, 1, 1), (12, 2, 0))
    assert verdicts(s) == (LOSS, WIN)


def test_r12_independence_leaves_their_own_scoring_cards_alone() -> None:
    """R-12, Q-21: Independence stops their Torsor and Balance only; Genealogy still doubles."""
    s = closed(["Exchange", "Genealogy"], ["Independence"])
    assert s.columns()[0][0] == 25


def test_book3_eulerfuse_then_a_folded_descent_is_worth_the_clock() -> None:
    """Book III EULERFUSE, Book II DESCENT: spoils returned face down become future Substance."""
    s = position(["Eulerfuse"], spoils=(["Descent"], []), seal=11, hands=([], ["Tally"]))
    play(s, "eulerfuse Descent", "build Tally")
    assert s.is_over
    assert s.columns()[0] == (12, 0, 0)


def test_i7_swap_carries_the_debt_with_the_chain() -> None:
    """I.7 SWAP, Book II SPEND-COVERING: the debt is owed by whoever's chain holds it."""
    s = position(["Exchange"], ["Reflection", "Spend-Covering"], hoards=(0, 8), seal=11, to_move=1)
    play(s, "swap")  # the round ends at 12
    assert s.is_over
    assert chain(s, 0) == ["~Reflection", "Spend-Covering"]
    # seat 0: 5 - 5 owes nothing but itself; seat 1: 10 + 8 strokes, no debt
    assert (s.columns()[0][0], s.columns()[1][0]) == (0, 18)


def test_book2_spend_covering_ransomed_and_rebuilt_takes_five_again() -> None:
    """Book II SPEND-COVERING: *on building it* — a second building takes again."""
    s = position(["Escrow"], ["Tally"], hostage=("Spend-Covering", 1), hoards=(0, 5), to_move=1)
    play(s, "ransom")
    assert s.hoards == [5, 0]
    play(s, "accelerate", "build Spend-Covering")
    assert (s.hoards, s.plenum) == ([5, 5], 20)


def test_q16_turn_of_a_single_card_chain_is_simply_spent() -> None:
    """Q-16: a chain of one card has one order; Turn is spent, no decision follows."""
    s = position(["Turn"], ["Tally"])
    play(s, "turn theirs")
    assert (chain(s, 0), s.pending, s.current_player) == (["~Turn"], None, 1)


def test_book3_trace_raises_a_reflection_to_swap_again() -> None:
    """Book III TRACE: spent powers can be raised again — a folded Reflection mirrors once more."""
    s = position(["Trace", "~Reflection"], ["Tally"], hands=([], ["Pairing"]))
    play(s, "trace Reflection", "build Pairing", "swap")
    assert (chain(s, 0), chain(s, 1)) == (["Tally", "Pairing"], ["~Trace", "~Reflection"])


def test_r04_escrow_cut_away_by_a_model_releases_the_hostage() -> None:
    """I.7 RANSOM, R-08: Escrow cut away by a Model's copied Cut releases the hostage free."""
    s = position(
        ["Tally", "Exchange", "Escrow"],
        ["Separation", "Model-A"],
        hostage=("Pairing", 1),
        to_move=1,
    )
    play(s, "cut 2 with Model-A")
    assert (spoils(s, 1), hand(s, 1), to_json(s)["hostage"]) == (["Escrow"], ["Pairing"], None)
    assert chain(s, 1) == ["Separation", "~Model-A"]


def test_i8_the_seal_steps_every_round_and_twelve_rounds_close_a_table() -> None:
    """I.6, I.8: the Seal never stops; without Zenoseal a table closes by round twelve."""
    for seed in range(6):
        s = new_base_table(seed)
        rng = random.Random(seed)
        while not s.is_over:
            s.apply(rng.choice(s.legal_actions()))
        assert s.turn <= 24
