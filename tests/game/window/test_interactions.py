"""Cards meeting each other: where engines break (order, zone, who chooses)."""

from __future__ import annotations

from game.window import titles as T
from tests.game.window.tables import chain, legal, play, setup


# I.7 SWAP, R-05
def test_swapped_chain_carries_its_debt_and_its_descent() -> None:
    """I.7 SWAP, R-05, Book II DESCENT: scoring follows the chain to its new owner."""
    s = setup(chains=(["Reflection"], ["~Spend-Covering", "~Descent", "Exchange"]), seal=11)
    play(s, "swap")
    s_columns = s.columns()
    # seat 0 now holds the debt-bearing chain: 11 (Descent, Seal now) + 10 - 10 (debt)
    assert s_columns[0][0] == 11
    assert s_columns[1][0] == 0  # the folded Reflection scores nothing


# R-08 ("position"), Book II TURN
def test_a_models_copy_follows_its_position_after_a_turn() -> None:
    """R-08: a Model copies whatever now stands beside it; reordering changes the copy."""
    s = setup(chains=(["Turn", "Separation", "Model-A", "No-Go"], ["Tally", "Pairing", "Escrow"]))
    assert "cut 1 with Model-A" in legal(s)
    play(s, "turn mine", "place Separation", "place No-Go", "place Model-A")
    assert chain(s, 0) == ["Separation", "No-Go", "Model-A", "~Turn"]
    model = s.card_of("Model-A")
    assert model not in s.power_sources(T.SEPARATION, 0)
    assert model in s.power_sources(T.NOGO, 0)


# Book II KEEPING, Book II TURN
def test_keepings_shield_moves_with_the_order() -> None:
    """Book II KEEPING: the shield is for its neighbours wherever the chain's order puts them."""
    s = setup(chains=(["Separation", "Turn"], ["Tally", "Keeping", "Pairing", "Escrow"]))
    assert "cut 1" not in legal(s)  # Tally shielded
    play(s, "turn theirs", "place Keeping", "place Pairing", "place Tally")
    assert chain(s, 1) == ["Keeping", "Pairing", "Tally", "Escrow"]


# Book III EULERFUSE, Book III HEMIRING
def test_eulerfuse_turns_holdings_into_future_substance() -> None:
    """Book III EULERFUSE: a Holding leaves the spoils; under Hemiring it scores one folded."""
    s = setup(chains=(["Eulerfuse", "Hemiring"], []), spoils=(["Exchange"], []))
    before = s.columns()[0]
    play(s, "eulerfuse Exchange")
    after = s.columns()[0]
    assert after[2] == before[2] - 1
    assert after[0] == before[0] - 3 + 1 + 1  # Eulerfuse folds (1 under Hemiring), Exchange 1


# Book III PLENUM, Book III GENERATOR
def test_plenum_restores_the_generators_trickle() -> None:
    """Book III PLENUM, GENERATOR: all strokes home, so the plenum again exceeds the hoards."""
    s = setup(chains=(["Generator"], []), hands=([], ["Plenum"]), hoards=(10, 6), to_move=1)
    play(s, "build Plenum")
    assert s.hoards == [1, 0]
    assert s.plenum == 29


# I.7 CUT, Book III FORK, Book III REFUSAL
def test_defender_with_fork_and_refusal_and_equal_pieces_sees_every_answer() -> None:
    """I.7 CUT: equal pieces (Fork yielding one of them) and Refusal: every answer is offered."""
    s = setup(
        chains=(["Separation"], ["Refusal", "Tally", "Fork", "Pairing", "Escrow", "Exchange"])
    )
    play(s, "cut 3")
    assert s.current_player == 1
    assert legal(s) == {"yield Fork", "yield Exchange", "refuse"}
    play(s, "yield Exchange")
    assert [s.title_of(c) for c in s.spoils[0]] == ["Exchange"]
