"""The reckoning (I.9, I.10) and the scoring clauses of Books II and III."""

from __future__ import annotations

import pytest

from game.window import Verdict, reckon
from tests.game.window.tables import setup


def closed(**kwargs):
    """A closed table (Seal 12) with the given chains, spoils, hoards…"""
    return setup(seal=12, **kwargs)


# I.9 SUBSTANCE
def test_substance_is_face_up_costs_plus_strokes() -> None:
    """I.9: Substance = printed costs of face-up chained cards + strokes; folded cards nothing."""
    s = setup(chains=(["Tally", "~Exchange", "Pairing"], []), hoards=(3, 0))
    assert s.columns()[0][0] == 5 + 4 + 3


# I.9 FORM
def test_form_is_the_longest_face_up_run() -> None:
    """I.9 FORM: the longest unbroken run of face-up cards; a folded card breaks it."""
    s = setup(chains=(["Tally", "Pairing", "~Escrow", "Exchange", "Reflection", "Separation"], []))
    assert s.columns()[0][1] == 3


# I.9 HOLDINGS
def test_holdings_count_spoils_and_a_hostage_under_your_escrow() -> None:
    """I.9 HOLDINGS: one per spoils card, plus one for a hostage under an Escrow you control."""
    s = setup(
        chains=(["Escrow"], ["Tally"]),
        spoils=(["Exchange", "Pairing"], []),
        hostage=("Reflection", 1),
    )
    assert s.columns()[0][2] == 3
    assert s.columns()[1][2] == 0


# I.9
def test_majority_of_columns_wins() -> None:
    """I.9: two columns of three win, whatever the margins; columns are never added."""
    # seat 0: Substance 5 vs 10 (loses), Form 2 vs 1, Holdings 1 vs 0
    s = closed(chains=(["Reflection", "Separation"], ["Exchange"]), spoils=(["Tally"], []))
    assert s.columns() == ((5, 2, 1), (10, 1, 0))
    assert s.verdict(0) == Verdict.WIN
    assert s.verdict(1) == Verdict.LOSS


# I.9, I.10
def test_one_each_and_one_level_is_a_balance() -> None:
    """I.9, I.10: columns split 1-1 with one level settle as a Balance for both seats."""
    s = closed(chains=(["Tally"], ["Exchange"]), spoils=(["Pairing"], []))
    assert s.columns() == ((5, 1, 1), (10, 1, 0))
    assert (s.verdict(0), s.verdict(1)) == (Verdict.BALANCE, Verdict.BALANCE)


# I.9, I.10
def test_all_level_is_a_balance() -> None:
    """I.9: all three columns level is a Balance."""
    s = closed(chains=(["Pairing"], ["Escrow"]))
    assert reckon(s).verdicts == (Verdict.BALANCE, Verdict.BALANCE)


# I.10
def test_verdict_is_a_name_never_a_number() -> None:
    """I.10: a verdict is WIN, LOSS or BALANCE; it cannot be added."""
    s = closed(chains=(["Pairing"], ["Escrow"]))
    with pytest.raises(TypeError):
        s.verdict(0) + s.verdict(1)  # type: ignore[operator]


# I.1 Settling, Q-20
def test_no_verdict_before_the_close() -> None:
    """Q-20: an open table has columns (provisional) but no verdict."""
    s = setup(chains=(["Pairing"], ["Escrow"]))
    with pytest.raises(ValueError, match="not closed"):
        s.verdict(0)


# Book II BALANCE
def test_balance_claims_the_single_level_column() -> None:
    """Book II BALANCE: with exactly one column level, that column is yours."""
    s = closed(chains=(["Balance"], ["Reflection"]), spoils=(["Tally"], []), hoards=(0, 1))
    # Substance 2 vs 3, Form 1 vs 1 (level → Balance's), Holdings 1 vs 0
    assert s.columns() == ((2, 1, 1), (3, 1, 0))
    assert s.verdict(0) == Verdict.WIN


# Book II BALANCE
def test_balance_claims_nothing_when_two_columns_are_level() -> None:
    """Book II BALANCE: only when exactly one column is level."""
    s = closed(chains=(["Balance"], ["Reflection"]))
    assert s.columns() == ((2, 1, 0), (2, 1, 0))
    assert s.verdict(0) == Verdict.BALANCE


# Book II DESCENT
def test_descent_folded_scores_the_final_step() -> None:
    """Book II DESCENT: face down in your chain, it scores the Seal's final step (12)."""
    s = closed(chains=(["~Descent"], []))
    assert s.columns()[0][0] == 12
    s = closed(chains=(["Descent"], []))
    assert s.columns()[0][0] == 3


# Book III HEMIRING
def test_hemiring_scores_folded_cards_one_each() -> None:
    """Book III HEMIRING: folded cards one each; Descent the Seal; Noninscript nothing."""
    s = closed(chains=(["Hemiring", "~Tally", "~Descent", "~Noninscript"], []))
    assert s.columns()[0][0] == 4 + 1 + 12 + 0


# Book III PRIMELADDER, Q-01
def test_primeladder_counts_distinct_steps_including_zero() -> None:
    """Book III PRIMELADDER, Q-01: one per different step, whatever the faces; a zero counts."""
    s = setup(chains=(["Primeladder", "~Separation", "Descent", "~Exchange"], []))
    # costs 5, 3, 3, 10: steps 2, 0, 7 are three different steps; face-up costs 5 + 3
    assert s.columns()[0][0] == 5 + 3 + 3


# Book III PRIMELADDER, Q-01
def test_primeladder_steps_are_unsigned() -> None:
    """Q-01: 5→2 and 2→5 are the same step."""
    s = setup(chains=(["Primeladder", "~Reflection", "~Tally"], []))  # steps 3, 3
    assert s.columns()[0][0] == 5 + 1


# Book III GENEALOGY
def test_genealogy_doubles_a_face_up_innermost_card() -> None:
    """Book III GENEALOGY: your innermost card, if face up, scores its cost twice."""
    s = setup(chains=(["Exchange", "Genealogy"], []))
    assert s.columns()[0][0] == 20 + 5


# Book III GENEALOGY
def test_genealogy_innermost_doubles_itself() -> None:
    """Book III GENEALOGY: innermost and face up, it doubles itself."""
    s = setup(chains=(["Genealogy"], []))
    assert s.columns()[0][0] == 10


#
def test_genealogy_folded_is_silent() -> None:
    """Q-10: a folded Genealogy's rule is silent (I.1)."""
    s = setup(chains=(["Exchange", "~Genealogy"], []))
    assert s.columns()[0][0] == 10


# Book III WELLFORMED
def test_wellformed_adds_two_to_an_unfolded_chain() -> None:
    """Book III WELLFORMED: no folded card (folded Noninscript excepted): Form + 2."""
    s = setup(chains=(["Wellformed", "Tally", "~Noninscript"], []))
    assert s.columns()[0][1] == 2 + 2
    s = setup(chains=(["Wellformed", "Tally", "~Pairing"], []))
    assert s.columns()[0][1] == 2


# Book III GRAM, Q-14
def test_gram_spans_each_single_folded_card() -> None:
    """Book III GRAM, Q-14: single folded cards between face-up cards do not break the run."""
    s = setup(chains=(["Gram", "~Tally", "Pairing", "~Escrow", "Exchange"], []))
    assert s.columns()[0][1] == 3


# Book III GRAM
def test_gram_does_not_span_two_folded_cards() -> None:
    """Book III GRAM: two face-down cards together still break the run."""
    s = setup(chains=(["Gram", "Tally", "~Pairing", "~Escrow", "Exchange"], []))
    assert s.columns()[0][1] == 2


# Book III SHADOW
def test_shadow_lets_a_longer_folded_run_stand_as_form() -> None:
    """Book III SHADOW: the longest face-down run may stand as Form if greater."""
    s = setup(chains=(["Shadow", "~Tally", "~Pairing", "~Escrow"], []))
    assert s.columns()[0][1] == 3
    s = setup(chains=(["Shadow", "Tally", "~Pairing"], []))
    assert s.columns()[0][1] == 2


# Book III NONINSCRIPT
def test_noninscript_scores_nothing_and_never_breaks_a_run() -> None:
    """Book III NONINSCRIPT: nothing in Substance, transparent to Form (adds no length)."""
    s = setup(chains=(["Tally", "~Noninscript", "Pairing"], []))
    assert s.columns()[0][:2] == (9, 2)
    s = setup(chains=(["Tally", "Noninscript", "Pairing"], []))
    assert s.columns()[0][:2] == (9, 2)


# Book II TORSOR
def test_torsor_adds_the_difference() -> None:
    """Book II TORSOR: while face up at scoring, add the absolute difference of Substances."""
    s = setup(chains=(["Torsor"], ["Exchange", "Tally"]))
    assert s.columns()[0][0] == 6 + 9
    s = setup(chains=(["~Torsor"], ["Exchange"]))
    assert s.columns()[0][0] == 0


# Book II SPEND-COVERING, Q-07
def test_spend_covering_debt_is_the_most_expensive_chained_card() -> None:
    """Book II SPEND-COVERING: the debt is the printed cost of the most expensive chained card."""
    s = setup(chains=(["Spend-Covering", "Tally", "~Exchange"], []), hoards=(5, 0))
    assert s.columns()[0][0] == 5 + 5 + 5 - 10


#
def test_debt_comes_after_the_cards_own_scoring() -> None:
    """Q-07: Descent's folded step and Hemiring count before the debt is subtracted."""
    s = closed(chains=(["~Spend-Covering", "~Descent", "Hemiring"], []))
    assert s.columns()[0][0] == 1 + 12 + 4 - 5
