"""Card clauses of Books II and III that act during play: powers, on-build effects, defenders."""

from __future__ import annotations

import pytest

from game.window import CHANCE, IllegalActionError, parse_action
from tests.game.window.tables import chain, legal, play, setup


def titles(state, cards) -> list[str]:
    return [state.title_of(c) for c in cards]


# Book II TURN
def test_turn_reorders_their_chain_card_by_card_keeping_faces() -> None:
    """Book II TURN, Q-16: spend Turn, then place their cards in any order; faces are kept."""
    s = setup(chains=(["Turn"], ["Tally", "~Pairing", "Escrow"]))
    play(s, "turn theirs")
    assert chain(s, 0) == ["~Turn"]
    assert s.current_player == 0
    assert legal(s) == {"place Tally", "place Pairing", "place Escrow"}
    play(s, "place Escrow", "place Tally")  # the last card is forced
    assert chain(s, 1) == ["Escrow", "Tally", "~Pairing"]
    assert s.to_move == 1
    assert s.pending is None


# Book II TURN
def test_turn_of_your_own_chain_moves_the_spent_turn_too() -> None:
    """Book II TURN: your own chain may be reordered, the folded Turn with it."""
    s = setup(chains=(["Turn", "Tally"], []))
    play(s, "turn mine", "place Tally")
    assert chain(s, 0) == ["Tally", "~Turn"]


# Book II KEEPING, I.7 CUT
def test_keeping_shields_its_neighbours_from_cut() -> None:
    """Book II KEEPING: a seam whose yielding card Keeping shields cannot be named."""
    s = setup(chains=(["Separation"], ["Tally", "Keeping", "Pairing", "Escrow", "Exchange"]))
    assert "cut 1" not in legal(s)  # Tally yields, shielded
    assert "cut 4" in legal(s)  # Exchange yields, unshielded
    with pytest.raises(IllegalActionError, match="shielded by Keeping"):
        s.apply(parse_action(s, "cut 1"))


# Book II KEEPING
def test_keeping_never_protects_itself() -> None:
    """Book II KEEPING: it never protects itself — the seam that yields Keeping may be named."""
    s = setup(chains=(["Separation"], ["Keeping", "Tally", "Pairing"]))
    play(s, "cut 1")
    assert titles(s, s.spoils[0]) == ["Keeping"]


# Book II KEEPING, I.7 HOLD
def test_keeping_shields_its_neighbours_from_hold() -> None:
    """Book II KEEPING: not by Hold either."""
    s = setup(chains=(["Escrow"], ["Tally", "Keeping", "Pairing", "Exchange"]))
    assert "hold Pairing" not in legal(s)
    assert {"hold Keeping", "hold Exchange"} <= legal(s)


#
def test_equal_pieces_one_shielded() -> None:
    """Q-06: with one of the two equal-piece candidates shielded, the other yields at once."""
    s = setup(chains=(["Separation"], ["Keeping", "Pairing", "Tally", "Exchange"]))
    play(s, "cut 2")  # candidates Pairing (shielded) and Exchange
    assert titles(s, s.spoils[0]) == ["Exchange"]
    assert s.pending is None


# Book II NO-GO, IV.4, R-02
def test_nogo_success_folds_the_challenged_card() -> None:
    """Book II NO-GO: No-Go is spent, the drill is a chance node; success folds the card."""
    s = setup(chains=(["No-Go"], ["Tally", "Pairing"]))
    play(s, "nogo Pairing")
    assert s.current_player == CHANCE
    assert legal(s) == {"drill success", "drill failure"}
    play(s, "drill success")
    assert chain(s, 0) == ["~No-Go"]
    assert chain(s, 1) == ["Tally", "~Pairing"]


# Book II NO-GO, IV.4
def test_nogo_failure_spends_nogo_for_nothing() -> None:
    """IV.4: failure spends No-Go for nothing."""
    s = setup(chains=(["No-Go"], ["Tally", "Pairing"]))
    play(s, "nogo Pairing", "drill failure")
    assert chain(s, 0) == ["~No-Go"]
    assert chain(s, 1) == ["Tally", "Pairing"]


# Book II NO-GO, I.7 RANSOM
def test_nogo_on_escrow_releases_the_hostage() -> None:
    """Book II NO-GO: Escrow challenged down releases its hostage, free, to its owner's hand."""
    s = setup(chains=(["No-Go"], ["Tally", "Escrow"]), hostage=("Pairing", 0))
    play(s, "nogo Escrow")
    assert s.hostage >= 0  # not yet: the drill decides
    play(s, "drill success")
    assert s.hostage == -1
    assert titles(s, s.hands[0]) == ["Pairing"]
    assert s.hoards == [0, 0]


# Book II SPEND-COVERING
def test_spend_covering_takes_five_on_building() -> None:
    """Book II SPEND-COVERING: on building it, take five strokes at once from the plenum."""
    s = setup(hands=(["Spend-Covering"], []))
    play(s, "build Spend-Covering")
    assert s.hoards[0] == 5
    assert s.plenum == 25


# Book II SPEND-COVERING
def test_spend_covering_takes_all_that_remain_if_fewer() -> None:
    """Book II SPEND-COVERING: or all that remain, if fewer."""
    s = setup(hands=(["Spend-Covering"], []), hoards=(10, 17))
    play(s, "build Spend-Covering")
    assert s.plenum == 0
    assert s.hoards == [13, 17]


# Book III ALPHABET
def test_alphabet_lets_a_build_go_to_the_inner_end() -> None:
    """Book III ALPHABET: while face up your Build may place the new card against the axis."""
    s = setup(chains=(["Alphabet"], []), hands=(["Tally"], []))
    assert {"build Tally", "build Tally inner"} <= legal(s)
    play(s, "build Tally inner")
    assert chain(s, 0) == ["Tally", "Alphabet"]


# Book III ALPHABET
def test_without_alphabet_no_inner_build() -> None:
    """Book III ALPHABET: without it, Build places at the outer end only."""
    s = setup(chains=(["~Alphabet"], []), hands=(["Tally"], []))
    with pytest.raises(IllegalActionError, match="Alphabet"):
        s.apply(parse_action(s, "build Tally inner"))


# Book III FAITHFUL
def test_faithful_closes_swap_to_both_seats() -> None:
    """Book III FAITHFUL: while face up anywhere, the chains cannot change owners."""
    s = setup(chains=(["Reflection"], ["Faithful"]))
    assert "swap" not in legal(s)
    with pytest.raises(IllegalActionError, match="Faithful"):
        s.apply(parse_action(s, "swap"))


# Book III ADMISSION
def test_admission_takes_a_market_card_into_hand() -> None:
    """Book III ADMISSION: spend it, take any one market card into your hand row."""
    s = setup(chains=(["Admission"], []), market=["Torsor", "Turn"])
    play(s, "admit Turn")
    assert titles(s, s.hands[0]) == ["Turn"]
    assert titles(s, s.market) == ["Torsor"]
    assert chain(s, 0) == ["~Admission"]


# Book III INTERFACE
def test_interface_ransom_to_the_plenum() -> None:
    """Book III INTERFACE: your Ransom may be paid to the plenum; the card still returns."""
    s = setup(chains=(["Escrow"], ["Interface"]), hostage=("Pairing", 1), hoards=(0, 4), to_move=1)
    assert {"ransom", "ransom to plenum"} <= legal(s)
    play(s, "ransom to plenum")
    assert s.hoards == [0, 0]
    assert s.plenum == 30
    assert titles(s, s.hands[1]) == ["Pairing"]


# Book III CONSTRUCTOR, Q-24
def test_constructor_builds_twice_at_the_outer_end() -> None:
    """Book III CONSTRUCTOR, Q-24: two builds, in the chosen order, outer end (Alphabet aside)."""
    s = setup(chains=(["Alphabet", "Constructor"], []), hands=(["Tally"], []), market=["Torsor"])
    play(s, "construct Torsor Tally")
    assert chain(s, 0) == ["Alphabet", "~Constructor", "Torsor", "Tally"]


# Book III CONSTRUCTOR, Book II SPEND-COVERING, Book III PLENUM
def test_constructor_on_build_effects_in_order() -> None:
    """Book III CONSTRUCTOR: each build's effect in turn — Spend-Covering's five, then Plenum."""
    s = setup(chains=(["Constructor"], []), hands=(["Spend-Covering", "Plenum"], []), hoards=(3, 2))
    play(s, "construct Spend-Covering Plenum")
    assert s.hoards == [0, 0]
    assert s.plenum == 30


# Book III GENERATOR, Q-04
def test_generator_trickles_at_round_end() -> None:
    """Book III GENERATOR: at each round's end, one stroke, if the plenum exceeds both hoards."""
    s = setup(chains=(["Generator"], []), hands=(["Tally"], ["Pairing"]), hoards=(3, 0))
    play(s, "build Tally", "build Pairing")
    assert s.hoards[0] == 4
    assert s.seal == 1


# Book III GENERATOR
def test_generator_stops_when_the_wealth_leaves_the_table() -> None:
    """Book III GENERATOR: no trickle when the plenum does not hold more than both hoards."""
    s = setup(chains=(["Generator"], []), hands=(["Tally"], ["Pairing"]), hoards=(10, 5))
    play(s, "build Tally", "build Pairing")
    assert s.hoards == [10, 5]


# Book III FORK
def test_fork_is_thrown_into_the_cut() -> None:
    """Book III FORK: the defender may throw Fork: Fork is taken instead of the yielding card."""
    s = setup(chains=(["Separation"], ["Tally", "Fork", "Pairing", "Escrow"]))
    play(s, "cut 1")
    assert s.current_player == 1
    assert legal(s) == {"yield Tally", "yield Fork"}
    play(s, "yield Fork")
    assert chain(s, 1) == ["Tally", "Pairing", "Escrow"]
    assert titles(s, s.spoils[0]) == ["Fork"]
    assert chain(s, 0) == ["~Separation"]


# Book III MODEL-A, R-08, Q-02
def test_model_a_copies_cut_and_spends_itself() -> None:
    """R-08, Q-02: Model-A copies its inner neighbour's Cut; the Model, not Separation, folds."""
    s = setup(chains=(["Separation", "Model-A"], ["Tally", "Pairing", "Escrow"]))
    assert {"cut 1", "cut 1 with Model-A"} <= legal(s)
    play(s, "cut 1 with Model-A")
    assert chain(s, 0) == ["Separation", "~Model-A"]
    assert titles(s, s.spoils[0]) == ["Tally"]


# Book III MODEL-B, R-08
def test_model_b_copies_its_outer_neighbour() -> None:
    """R-08: Model-B has the power of the card immediately outer to it (here No-Go)."""
    s = setup(chains=(["Model-B", "No-Go"], ["Tally"]))
    play(s, "nogo Tally with Model-B", "drill success")
    assert chain(s, 0) == ["~Model-B", "No-Go"]
    assert chain(s, 1) == ["~Tally"]


# Book III MODEL-A, R-08, Q-02 (changed: this test pinned the old Q-02, under which a Model
# copied only a face-up card and this position offered no Cut; the new Q-02 reads R-08's
# "with the copier's own face" as the only face that counts)
def test_model_copies_the_cut_of_a_folded_card_and_spends_itself() -> None:
    """Q-02, R-08: Model-A face up beside a spent Separation has its Cut; the Model folds."""
    s = setup(chains=(["~Separation", "Model-A"], ["Tally", "Pairing", "Escrow"]))
    cuts = {a for a in legal(s) if a.startswith("cut")}
    assert cuts == {"cut 1 with Model-A", "cut 2 with Model-A"}
    play(s, "cut 2 with Model-A")  # pieces 2/1: the outer piece's Escrow yields
    assert chain(s, 0) == ["~Separation", "~Model-A"]
    assert titles(s, s.spoils[0]) == ["Escrow"]


#
def test_model_copies_only_the_seven_core_powers() -> None:
    """R-08: Model-A beside Trace copies nothing (Trace is not one of the seven)."""
    s = setup(chains=(["~Tally", "Trace", "Model-A"], []))
    assert legal(s) == {"trace Tally", "accelerate"}


#
def test_facing_models_copy_nothing() -> None:
    """Book III MODEL-B, R-08: two Models facing each other copy nothing."""
    s = setup(chains=(["Separation", "Model-B", "Model-A", "Turn"], ["Tally", "Pairing"]))
    sources = {a.split(" with ")[-1] for a in legal(s) if " with " in a}
    assert sources == set()


# Book III OMEGAFAM
def test_omegafam_collect_counts_every_chained_card() -> None:
    """Book III OMEGAFAM: your Collect counts face-down chained cards too, both sides."""
    s = setup(chains=(["Pairing", "Omegafam", "~Tally"], ["~Escrow", "Exchange"]))
    play(s, "collect")
    assert s.hoards[0] == 1 + 5


# Book III SELECTION
def test_selection_shrinks_their_collect() -> None:
    """Book III SELECTION: your face-up cards (itself included) do not count for their Collect."""
    s = setup(chains=(["Pairing", "Tally"], ["Selection", "Exchange", "~Escrow"]))
    play(s, "collect")
    assert s.hoards[0] == 1 + 2


#
def test_omegafam_and_selection_together() -> None:
    """Q-15: Omegafam adds folded cards, Selection still removes its holder's face-up cards."""
    s = setup(chains=(["Pairing", "Omegafam"], ["Selection", "Exchange", "~Escrow"]))
    assert s.collect_count(0) == 1 + 2 + 1


# Book III TRACE, R-13
def test_trace_raises_a_folded_card_where_it_lies() -> None:
    """Book III TRACE: spend it, turn one face-down card of your chain face up in place."""
    s = setup(chains=(["~Separation", "Trace", "~Tally"], []))
    assert legal(s) == {"trace Separation", "trace Tally", "accelerate"}
    play(s, "trace Separation")
    assert chain(s, 0) == ["Separation", "~Trace", "~Tally"]


# Book III EULERFUSE
def test_eulerfuse_returns_spoils_face_down_to_the_outer_end() -> None:
    """Book III EULERFUSE: a spoils card returns to your chain's outer end, face down."""
    s = setup(chains=(["Eulerfuse", "Tally"], []), spoils=(["Exchange"], []))
    play(s, "eulerfuse Exchange")
    assert chain(s, 0) == ["~Eulerfuse", "Tally", "~Exchange"]
    assert s.spoils[0] == []


# Book III TRANSPORT, Q-17
def test_transport_moves_a_card_to_either_end() -> None:
    """Book III TRANSPORT: move one card of yours to either end, the rest closing in order."""
    s = setup(chains=(["Tally", "Transport", "Pairing", "Escrow"], []))
    play(s, "transport Escrow inner")
    assert chain(s, 0) == ["Escrow", "Tally", "~Transport", "Pairing"]


# Book III EXHAUSTION, Q-13
def test_exhaustion_forbids_repeating_the_previous_action() -> None:
    """Book III EXHAUSTION: their next action may not repeat their previous one."""
    s = setup(
        chains=(["Exhaustion"], ["Pairing"]),
        hands=([], ["Tally"]),
        last_action=(None, "collect"),
        hoards=(0, 0),
    )
    play(s, "exhaust")
    assert s.exhausted == [0, 1]
    assert "collect" not in legal(s)
    with pytest.raises(IllegalActionError, match="Exhaustion"):
        s.apply(parse_action(s, "collect"))
    play(s, "build Tally")
    assert s.exhausted == [0, 0]


# Book III PLENUM
def test_plenum_returns_every_stroke() -> None:
    """Book III PLENUM: on building it, every stroke in both hoards returns to the plenum."""
    s = setup(hands=(["Plenum"], []), hoards=(8, 5))
    play(s, "build Plenum")
    assert s.hoards == [0, 0]
    assert s.plenum == 30


# Book III REFUSAL, R-10
def test_refusal_refuses_a_cut_and_spends_only_the_turn() -> None:
    """Book III REFUSAL, R-10: the naming is refused; the cutter's Separation is not spent."""
    s = setup(chains=(["Separation"], ["Refusal", "Tally", "Pairing"]))
    play(s, "cut 2")
    assert legal(s) == {"yield Pairing", "refuse"}
    play(s, "refuse")
    assert chain(s, 0) == ["Separation"]
    assert chain(s, 1) == ["~Refusal", "Tally", "Pairing"]
    assert s.to_move == 1
    assert s.last_kind[0] == 2


# Book III REFUSAL
def test_refusal_refuses_a_hold() -> None:
    """Book III REFUSAL: naming a hostage may be refused too."""
    s = setup(chains=(["Escrow"], ["Refusal", "Tally"]))
    play(s, "hold Tally", "refuse")
    assert s.hostage == -1
    assert chain(s, 1) == ["~Refusal", "Tally"]
    assert chain(s, 0) == ["Escrow"]


#
def test_refusal_does_not_answer_nogo() -> None:
    """Q-23: a No-Go names no seam and no hostage; Refusal is not asked."""
    s = setup(chains=(["No-Go"], ["Refusal", "Tally"]))
    play(s, "nogo Tally")
    assert s.current_player == CHANCE


# Book III STAGE, R-09
def test_stage_closes_accelerate_to_the_opponent() -> None:
    """Book III STAGE: Accelerate is unavailable to your opponent while another action is open."""
    s = setup(chains=([], ["Stage"]), hands=(["Tally"], []))
    assert legal(s) == {"build Tally"}
    with pytest.raises(IllegalActionError, match="Stage"):
        s.apply(parse_action(s, "accelerate"))


# Book III CANONICAL, Q-03
def test_canonical_stops_nogo_success() -> None:
    """Book III CANONICAL: no power may turn another card of yours face down (No-Go included)."""
    s = setup(chains=(["No-Go"], ["Canonical", "Tally"]))
    play(s, "nogo Tally", "drill success")
    assert chain(s, 1) == ["Canonical", "Tally"]
    assert chain(s, 0) == ["~No-Go"]  # spent for nothing


# Book III CANONICAL
def test_canonical_may_always_be_challenged() -> None:
    """Book III CANONICAL: it never protects itself."""
    s = setup(chains=(["No-Go"], ["Canonical", "Tally"]))
    play(s, "nogo Canonical", "drill success")
    assert chain(s, 1) == ["~Canonical", "Tally"]


#
def test_canonical_does_not_stop_self_spending() -> None:
    """Q-03: a card of Canonical's chain still spends itself (Separation by its own Cut)."""
    s = setup(chains=(["Canonical", "Separation"], ["Tally", "Pairing", "Escrow"]))
    play(s, "cut 1")
    assert chain(s, 0) == ["Canonical", "~Separation"]
