"""The readings of docs/rulings.md (Q-nn) that other modules do not already pin."""

from __future__ import annotations

import pytest

from game.window import IllegalActionError, parse_action
from tests.game.window.tables import chain, legal, play, setup


#
def test_model_beside_face_up_originals_lists_no_second_collect_hold_or_convert() -> None:
    """Q-02: beside face-up originals a Model's Collect, Hold or Convert is the same action
    (none spends its source), so each is listed once; Reflection's own Swap is listed once (no
    Model here copies it: a Model's Swap spends the Model and is named ``with``)."""
    s = setup(
        chains=(
            ["Pairing", "Model-A", "Reflection", "Model-B", "Escrow", "Exchange"],
            ["Tally", "Keeping"],
        ),
        hoards=(3, 0),
    )
    actions = sorted(a for a in legal(s) if not a.startswith("build"))
    assert actions == ["accelerate", "collect", "convert 3>7", "hold Keeping", "swap"]


#
def test_model_copy_of_turn_spends_the_model() -> None:
    """Q-02: the copier's own face is spent — Turn stays face up after a Model's Turn."""
    s = setup(chains=(["Turn", "Model-A", "Tally"], []))
    play(s, "turn mine with Model-A", "place Tally", "place Turn")
    assert chain(s, 0) == ["Tally", "Turn", "~Model-A"]


#
def test_swap_folds_reflection_even_under_canonical() -> None:
    """Q-03: the mirror spent by its own use is not stopped by Canonical."""
    s = setup(chains=(["Canonical", "Reflection"], ["Tally"]))
    play(s, "swap")
    assert chain(s, 1) == ["Canonical", "~Reflection"]


#
def test_canonical_does_not_stop_a_cut() -> None:
    """Q-03: Cut takes a card rather than fold it; Canonical does not stand against it."""
    s = setup(chains=(["Separation"], ["Canonical", "Tally", "Pairing"]))
    play(s, "cut 1")
    assert [s.title_of(c) for c in s.spoils[0]] == ["Canonical"]


# Q-11, Book III FAITHFUL
def test_faithful_held_hostage_is_not_in_force() -> None:
    """Q-11: a Faithful held as hostage is not face up anywhere: Swap opens again."""
    s = setup(chains=(["Escrow", "Reflection"], ["Tally", "Faithful"]))
    assert "swap" not in legal(s)
    play(s, "hold Faithful", "accelerate")
    assert "swap" in legal(s)


# Q-13, Book III EXHAUSTION
def test_exhaustion_counts_a_models_cut_as_a_cut() -> None:
    """Q-13: a Model's copy is the copied action; after a Cut no Cut of any source follows."""
    s = setup(
        chains=(["Separation", "Model-A"], ["Exhaustion", "Tally", "Pairing", "Escrow"]),
        to_move=1,
        last_action=("cut", None),
    )
    play(s, "exhaust")
    assert not any(a.startswith("cut") for a in legal(s))


#
def test_exhaustion_without_a_previous_turn_forbids_nothing() -> None:
    """Q-13: a seat with no previous turn is not restricted."""
    s = setup(chains=(["Exhaustion"], []), hands=([], ["Tally"]))
    play(s, "exhaust")
    assert legal(s) == {"build Tally", "accelerate"}


#
def test_turn_of_a_single_card_chain_needs_no_order() -> None:
    """Q-16: a chain of one card has one order: Turn is spent, the turn passes at once."""
    s = setup(chains=(["Turn"], ["Tally"]))
    play(s, "turn theirs")
    assert s.pending is None
    assert s.to_move == 1


#
def test_transport_of_itself_is_an_action_and_keeps_accelerate_uncompelled() -> None:
    """Q-17, Q-18: Transport may move itself, even to where it is; such moves are actions."""
    s = setup(chains=(["Transport"], []), last_action=("accelerate", None))
    assert legal(s) == {"transport Transport inner", "transport Transport outer"}
    with pytest.raises(IllegalActionError, match="twice in a row"):
        s.apply(parse_action(s, "accelerate"))


#
def test_trace_cannot_raise_itself_and_raising_is_not_building() -> None:
    """Q-19: Trace is face up when used; a raised Spend-Covering takes no strokes."""
    s = setup(chains=(["Trace", "~Spend-Covering"], []))
    assert legal(s) == {"trace Spend-Covering", "accelerate"}
    play(s, "trace Spend-Covering")
    assert s.hoards == [0, 0]
    assert chain(s, 0) == ["~Trace", "Spend-Covering"]


# Q-12, I.7 RANSOM
def test_ransom_is_paid_to_the_escrow_controller_not_the_plenum() -> None:
    """Q-12: without Interface the payment goes to the seat whose chain holds Escrow."""
    s = setup(
        chains=(["Tally", "Escrow"], ["Pairing"]),
        hostage=("Exchange", 1),
        hoards=(0, 10),
        to_move=1,
    )
    assert legal(s) >= {"ransom"}
    assert "ransom to plenum" not in legal(s)
    play(s, "ransom")
    assert s.hoards == [10, 0]


#
def test_descent_before_the_close_scores_the_seal_as_it_stands() -> None:
    """Q-20: provisional columns use the Seal now; the close gives the final step, 12."""
    s = setup(chains=(["~Descent"], []), seal=5)
    assert s.columns()[0][0] == 5


# Q-24, Book III CONSTRUCTOR
def test_constructor_needs_two_cards() -> None:
    """Q-24: build twice means two cards; with one card in reach Constructor is closed."""
    s = setup(chains=(["Constructor"], []), hands=(["Tally"], []))
    assert not any(a.startswith("construct") for a in legal(s))


# Q-06, Book III FORK
def test_fork_shielded_by_keeping_cannot_be_thrown() -> None:
    """Q-06: Fork is taken when thrown; a Fork that Keeping shields cannot be."""
    s = setup(chains=(["Separation"], ["Tally", "Pairing", "Keeping", "Fork", "Escrow"]))
    play(s, "cut 1")
    assert [s.title_of(c) for c in s.spoils[0]] == ["Tally"]


#
def test_convert_seven_for_three_needs_seven() -> None:
    """Q-08: 7>3 needs seven strokes in your hoard."""
    s = setup(chains=(["Exchange"], []), hoards=(6, 0))
    assert "convert 7>3" not in legal(s)


# Q-01, Book III PRIMELADDER (the review's signed-step scenario, answered)
def test_primeladder_steps_up_and_down_are_one_unsigned_step() -> None:
    """Q-01: costs 2 5 2 5 have one step (3), not two (+3, -3): no direction is given."""
    s = setup(chains=(["Reflection", "Tally", "Turn", "Primeladder"], []), seal=12)
    assert s.columns()[0][0] == 2 + 5 + 2 + 5 + 1


# Q-03, Book III CANONICAL, Book III ZENOSEAL, R-13, I.6
def test_canonical_beside_zenoseal_never_holds_the_seal_at_eleven() -> None:
    """Q-03: Zenoseal fires under Canonical (a self-spend), so the next twelfth step closes."""
    s = setup(chains=(["Canonical", "Zenoseal"], ["Tally"]), seal=11, to_move=1)
    play(s, "accelerate")  # the Accelerate's step is bent; the round's own step closes
    assert chain(s, 0) == ["Canonical", "~Zenoseal"]
    assert s.is_over
    assert s.seal == 12


# Book III GENEALOGY, Book II SPEND-COVERING
def test_a_folded_scoring_clause_is_silent_unless_a_ruling_binds_it() -> None:
    """Q-10: folded Genealogy doubles nothing; folded Spend-Covering still owes (R-05)."""
    genealogy = setup(chains=(["Exchange", "~Genealogy"], []), seal=12)
    assert genealogy.columns()[0][0] == 10
    debt = setup(chains=(["Exchange", "~Spend-Covering"], []), hoards=(12, 0), seal=12)
    assert debt.columns()[0][0] == 10 + 12 - 10


# Q-13, Book III EXHAUSTION, Book III CONSTRUCTOR
def test_exhaustion_after_a_build_leaves_constructor_open() -> None:
    """Q-13: Constructor is its own kind ("Spend it as your action"), not a Build."""
    s = setup(
        chains=(["Exhaustion"], ["Constructor"]),
        hands=([], ["Tally", "Pairing"]),
        last_action=(None, "build"),
    )
    play(s, "exhaust")
    assert "construct Tally Pairing" in legal(s)
    assert not any(a.startswith("build") for a in legal(s))


# D-09, I.6, Q-13, Q-02
def test_a_card_power_is_an_action_of_its_own_kind() -> None:
    """D-09: a card power taken as the turn is an action: it takes the turn and is a kind."""
    s = setup(chains=(["Turn", "Model-A"], ["Exhaustion"]))
    play(s, "turn theirs")  # a chain of one card: Turn is simply spent, the turn passes
    assert s.to_move == 1
    play(s, "exhaust")
    assert not any(a.startswith("turn") for a in legal(s))
    unexhausted = setup(chains=(["~Turn", "Model-A"], ["~Exhaustion"]), to_move=0)
    assert "turn theirs with Model-A" in legal(unexhausted)


# D-08, Q-05, Book II BALANCE, IV.3
def test_two_portfolios_bringing_balance_put_one_copy_at_the_table() -> None:
    """D-08: the single copy rule answers BALANCE's "impossible from one pool"."""
    from game.window import DealError, from_deal

    with pytest.raises(DealError, match="Balance is dealt twice"):
        from_deal([["Balance"], ["Balance"]], kind="portfolio")
