"""Book VI rulings and the law of the turn (I.6), each as a position and its consequence."""

from __future__ import annotations

from game.window import TERMINAL, Verdict
from tests.game.window.tables import chain, legal, play, setup


# R-01, I.6
def test_no_pass_compels_accelerate_even_twice_running() -> None:
    """R-01: with every action closed, Accelerate is forced — even right after an Accelerate."""
    s = setup(last_action=("accelerate", None))
    assert legal(s) == {"accelerate"}
    play(s, "accelerate")
    assert s.seal == 1


# R-09, Book III STAGE
def test_law_of_the_turn_outranks_stage() -> None:
    """R-09: Stage cannot leave a seat without an action: Accelerate is compelled through it."""
    s = setup(chains=([], ["Stage"]))
    assert legal(s) == {"accelerate"}


# R-09, Book III EXHAUSTION
def test_law_of_the_turn_outranks_exhaustion() -> None:
    """R-09: when Exhaustion forbids the only open action, Accelerate is compelled (and allowed)."""
    s = setup(
        chains=([], ["Stage"]),
        hands=(["Tally"], []),
        last_action=("build", None),
        exhausted=(True, False),
    )
    assert legal(s) == {"accelerate"}


# I.6
def test_round_end_steps_the_seal_after_the_second_seat() -> None:
    """I.6: the Seal steps once when the second seat has acted, not after the first."""
    s = setup(hands=(["Tally"], ["Pairing"]))
    play(s, "build Tally")
    assert s.seal == 0
    assert s.to_move == 1
    play(s, "build Pairing")
    assert s.seal == 1
    assert s.to_move == 0
    assert s.round == 2


# R-07, I.6
def test_twelfth_step_is_atomic() -> None:
    """R-07: an Accelerate that reaches twelve closes at once; the second seat never acts."""
    s = setup(hands=([], ["Tally"]), seal=11)
    play(s, "accelerate")
    assert s.is_over
    assert s.seal == 12
    assert s.current_player == TERMINAL
    assert s.legal_actions() == ()
    assert [s.title_of(c) for c in s.hands[1]] == ["Tally"]


#
def test_no_trickle_after_the_twelfth_step_by_accelerate() -> None:
    """Q-04, R-07: an Accelerate reaching twelve mid-round: no round-end trickle follows."""
    s = setup(chains=(["Generator"], []), seal=11)
    play(s, "accelerate")
    assert s.is_over
    assert s.hoards == [0, 0]


#
def test_generator_trickles_before_the_final_step() -> None:
    """Q-04: at the last round's end the trickle comes first, then the Seal closes the table."""
    s = setup(chains=(["Generator"], []), hands=([], ["Tally"]), seal=11, to_move=1)
    play(s, "build Tally")
    assert s.is_over
    assert s.hoards == [1, 0]


# R-13, Book III ZENOSEAL
def test_zenoseal_bends_the_final_step() -> None:
    """R-13: when the Seal would reach twelve it shows eleven instead, and Zenoseal folds."""
    s = setup(chains=([], ["Zenoseal"]), hands=([], ["Tally"]), seal=11, to_move=1)
    play(s, "build Tally")  # the round's end would reach twelve
    assert not s.is_over
    assert s.seal == 11
    assert chain(s, 1) == ["~Zenoseal", "Tally"]
    play(s, "accelerate")  # seat 0
    assert s.is_over
    assert s.seal == 12


#
def test_zenoseal_fires_once_per_raising() -> None:
    """R-13: folded by its firing on an Accelerate, Zenoseal cannot bend the round's own step."""
    s = setup(chains=([], ["Zenoseal"]), seal=11, to_move=1)
    play(s, "accelerate")
    assert s.is_over
    assert s.seal == 12


# R-13, Book III TRACE
def test_trace_raises_zenoseal_to_fire_once_more() -> None:
    """R-13: Trace may raise Zenoseal to fire once more."""
    s = setup(chains=(["Trace", "~Zenoseal"], []), hands=([], ["Tally"]), seal=11)
    play(s, "trace Zenoseal")
    assert chain(s, 0) == ["~Trace", "Zenoseal"]
    play(s, "build Tally")  # the round's end would reach twelve
    assert s.seal == 11
    assert not s.is_over
    assert chain(s, 0) == ["~Trace", "~Zenoseal"]


# R-04, I.7 RANSOM
def test_swap_into_the_victims_control_releases_the_hostage() -> None:
    """R-04: a Swap that gives the hostage's owner control of Escrow releases the hostage."""
    s = setup(chains=(["Escrow"], ["Reflection", "Tally"]), hostage=("Pairing", 1), to_move=1)
    play(s, "swap")
    assert s.hostage == -1
    assert [s.title_of(c) for c in s.hands[1]] == ["Pairing"]
    assert chain(s, 1) == ["Escrow"]


# I.7 RANSOM
def test_escrow_cut_away_releases_the_hostage() -> None:
    """I.7 RANSOM: Escrow cut away leaves force: the hostage goes home free."""
    s = setup(chains=(["Tally", "Escrow"], ["Separation"]), hostage=("Pairing", 1), to_move=1)
    play(s, "cut 1", "yield Escrow")
    assert s.hostage == -1
    assert [s.title_of(c) for c in s.hands[1]] == ["Pairing"]
    assert s.hoards == [0, 0]


#
def test_refused_hold_spends_no_escrow() -> None:
    """R-10: the refused player's enabling card is not spent."""
    s = setup(chains=(["Escrow"], ["Refusal", "Tally"]))
    play(s, "hold Tally", "refuse")
    assert chain(s, 0) == ["Escrow"]


# R-05, Book II SPEND-COVERING
def test_debt_binds_any_face() -> None:
    """R-05: Spend-Covering folded still owes the cost of the chain's most expensive card."""
    s = setup(chains=(["~Spend-Covering", "Exchange"], []), hoards=(12, 0))
    assert s.columns()[0][0] == 12 + 10 - 10


# R-05, I.9
def test_debt_greater_than_holdings_takes_all_and_stops() -> None:
    """I.9: a debt greater than what you hold takes all of it and stops there (never negative)."""
    s = setup(chains=(["~Spend-Covering", "~Exchange"], []), hoards=(3, 0))
    assert s.columns()[0][0] == 0


# R-06, Book II TORSOR
def test_torsor_acts_after_debts() -> None:
    """R-06: Torsor adds the difference of the Substances after debts."""
    s = setup(chains=(["Torsor"], ["~Spend-Covering", "Exchange"]), hoards=(0, 2))
    # seat 1: 10 + 2 - 10 = 2; seat 0: 6, then + |6 - 2|
    assert s.columns()[1][0] == 2
    assert s.columns()[0][0] == 6 + 4


# R-12, Book III INDEPENDENCE
def test_independence_blocks_their_torsor() -> None:
    """R-12: their Torsor gains nothing against you."""
    s = setup(chains=(["Torsor"], ["Independence", "Exchange"]))
    assert s.columns()[0][0] == 6


#
def test_independence_blocks_their_balance() -> None:
    """R-12: their Balance cannot claim the level column."""
    # Substance 2 vs 3 (seat 1), Form 1 vs 1 (level), Holdings 1 vs 0 (seat 0)
    s = setup(chains=(["Balance"], ["Independence"]), spoils=(["Tally"], []))
    assert s.columns() == ((2, 1, 1), (3, 1, 0))
    s.closed, s.seal = True, 12
    assert s.verdict(0) == Verdict.BALANCE


#
def test_independence_leaves_your_own_scoring_cards() -> None:
    """R-12: your own scoring cards are unaffected by your Independence."""
    s = setup(chains=(["Independence", "Torsor"], ["Exchange"]))
    assert s.columns()[0][0] == 9 + 1


#
def test_finish_is_never_mechanics() -> None:
    """R-11: the engine knows titles only; nothing about a print's finish enters a position."""
    s = setup(chains=(["Tally"], []))
    assert "finish" not in str(s.columns())
    assert s.columns()[0][0] == 5


#
def test_drill_outcome_is_supplied_by_the_caller() -> None:
    """R-02: No-Go resolves as the drill; its outcome is an action the caller supplies."""
    s = setup(chains=(["No-Go"], ["Tally"]))
    play(s, "nogo Tally")
    assert legal(s) == {"drill success", "drill failure"}


#
def test_convert_once_per_turn_unlimited_per_game() -> None:
    """R-03: one Convert per turn (an action is one per turn), any number per game."""
    s = setup(chains=(["Exchange"], ["Stage"]), hoards=(3, 0))
    for _ in range(4):
        play(s, "convert 3>7" if s.hoards[0] < 7 else "convert 7>3")
        play(s, "accelerate")
    assert s.hoards[0] in (3, 7)
