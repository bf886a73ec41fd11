"""Books II and III read again, clause by clause, as scenarios: the titles of each set, power by
power. How they are built and why they are worked out apart: tests/game/window/crosscheck.py."""

from __future__ import annotations

from game.window import (
    CHANCE,
    to_json,
)
from tests.game.window.crosscheck import (
    BALANCE,
    LOSS,
    WIN,
    closed,
    hand,
    position,
    refused,
    spoils,
    verdicts,
)
from tests.game.window.tables import chain, legal, play

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
