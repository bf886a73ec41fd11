"""Models (Book III MODEL-A, MODEL-B, R-08, docs/rulings.md Q-02): the copier's own face.

A face-up Model has the core action power of its neighbour in the chain whatever that card's
face; a copied spend-power spends the Model, never the neighbour; a folded Model, a Model beside
a Model, and a Model with no neighbour in the chain copy nothing.
"""

from __future__ import annotations

import pytest

from game.window import IllegalActionError, parse_action
from tests.game.window.tables import chain, legal, play, setup


def titles(state, cards) -> list[str]:
    return [state.title_of(c) for c in cards]


# Book III MODEL-A, R-08, Q-02
def test_model_collects_beside_a_folded_pairing() -> None:
    """MODEL-A lists Collect among the seven: beside a spent Pairing the Model still Collects."""
    s = setup(chains=(["~Pairing", "Model-A"], ["Exchange"]), hands=(["Tally"], []))
    assert "collect" in legal(s)
    play(s, "collect")  # N = the axis + Model-A + Exchange = 3 (I.7 COLLECT)
    assert s.hoards[0] == 3
    assert s.plenum == 27
    assert chain(s, 0) == ["~Pairing", "Model-A"]  # Collect spends nothing


# Book III MODEL-B, I.7 SWAP, R-08, Q-02
def test_model_swaps_beside_a_folded_reflection_and_stays_up() -> None:
    """Q-02: Model-B copies the outer neighbour's Swap; Swap folds every Reflection, not the
    Model (the Model is no Reflection)."""
    s = setup(chains=(["Model-B", "~Reflection"], ["Tally"]))
    assert "swap" in legal(s)
    play(s, "swap")
    assert chain(s, 0) == ["Tally"]
    assert chain(s, 1) == ["Model-B", "~Reflection"]


# Book III FAITHFUL, Q-02
def test_faithful_closes_a_models_swap_too() -> None:
    """Book III FAITHFUL: "Swap is closed to both seats", whoever's power makes it."""
    s = setup(chains=(["Model-B", "~Reflection"], ["Faithful"]))
    assert "swap" not in legal(s)


# I.7 HOLD, I.7 RANSOM, R-08, Q-02
def test_models_hold_with_escrow_folded_releases_at_once() -> None:
    """Q-02, I.7 RANSOM: a hostage sits only under Escrow in force; with Escrow folded the
    named card leaves their chain and goes straight to its owner's hand, free."""
    s = setup(chains=(["~Escrow", "Model-A"], ["Tally", "Pairing"]))
    assert "hold Pairing" in legal(s)
    play(s, "hold Pairing")
    assert chain(s, 1) == ["Tally"]
    assert titles(s, s.hands[1]) == ["Pairing"]
    assert s.hostage == -1
    assert s.ransoms == [0, 0]
    assert chain(s, 0) == ["~Escrow", "Model-A"]


# I.7 HOLD, R-08, Q-02
def test_models_hold_beside_escrow_in_force_takes_a_hostage() -> None:
    """I.7 HOLD: with Escrow face up the Model's Hold is Escrow's Hold; the hostage stays."""
    s = setup(chains=(["Escrow", "Model-A"], ["Tally", "Pairing"]))
    play(s, "hold Pairing")
    assert s.hostage == s.card_of("Pairing")
    assert s.hostage_owner == 1


# I.7 CONVERT, R-03, R-08, Q-02
def test_model_converts_beside_a_folded_exchange() -> None:
    """MODEL-A lists Convert: beside a folded Exchange the Model converts 3>7."""
    s = setup(chains=(["~Exchange", "Model-A"], []), hoards=(3, 0))
    play(s, "convert 3>7")
    assert s.hoards == [7, 0]
    assert s.plenum == 23


# Book II TURN, Book II NO-GO, R-08, Q-02
def test_copied_turn_and_nogo_spend_the_model_never_the_folded_card() -> None:
    """Q-02: a copied spend-power spends the copier; the folded neighbour stays as it lies."""
    s = setup(chains=(["~Turn", "Model-A", "Tally"], ["Pairing"]))
    play(s, "turn mine with Model-A", "place Tally", "place Turn")
    assert chain(s, 0) == ["Tally", "~Turn", "~Model-A"]
    s = setup(chains=(["Model-B", "~No-Go"], ["Pairing"]))
    play(s, "nogo Pairing with Model-B", "drill success")
    assert chain(s, 0) == ["~Model-B", "~No-Go"]
    assert chain(s, 1) == ["~Pairing"]


#
def test_the_folded_card_itself_still_has_no_power() -> None:
    """I.1 "its rule is silent": the folded card is no source; only the Model beside it is."""
    s = setup(chains=(["~Separation", "Model-A"], ["Tally", "Pairing"]))
    with pytest.raises(IllegalActionError, match="needs your Separation face up"):
        s.apply(parse_action(s, "cut 1"))
    s = setup(chains=(["~Pairing"], ["Exchange"]))
    assert "collect" not in legal(s)


# Book III MODEL-A, MODEL-B, R-08, Q-02
@pytest.mark.parametrize(
    "mine",
    [
        ["~Separation", "~Model-A"],  # a folded Model copies nothing: its own face governs
        ["Model-B", "Model-A", "~Separation"],  # facing Models copy nothing (one hop)
        ["Model-A", "~Separation"],  # Model-A innermost: nothing inner to it but the axis
        ["~Separation", "Model-B"],  # Model-B outermost: nothing outer to it
    ],
)
def test_models_that_copy_nothing(mine: list[str]) -> None:
    """R-08: one hop, with the copier's own face and position; no Cut is offered."""
    s = setup(chains=(mine, ["Tally", "Pairing"]))
    assert not any(a.startswith("cut") for a in legal(s))


# Book III MODEL-A, R-08, Q-02, Q-11
def test_a_model_copies_nothing_from_the_hostage_or_the_spoils() -> None:
    """Q-02: the neighbour is a card of the chain; the hostage and the spoils are not."""
    s = setup(
        chains=(["Model-A"], ["Tally", "Escrow"]),
        spoils=(["Separation"], []),
        hostage=("Pairing", 0),
    )
    assert not any(a.startswith(("cut", "collect")) for a in legal(s))


# Book III CANONICAL, Q-03, Q-02
def test_canonical_never_stops_a_model_spending_itself() -> None:
    """Q-03: a Model spending its copy is a self-spend; Canonical does not stop it."""
    s = setup(chains=(["Canonical", "~Separation", "Model-A"], ["Tally", "Pairing", "Escrow"]))
    play(s, "cut 2 with Model-A")
    assert chain(s, 0) == ["Canonical", "~Separation", "~Model-A"]


# Book III EXHAUSTION, Q-13, Q-02
def test_a_copied_action_is_the_copied_kind_for_exhaustion() -> None:
    """Q-13: a Model's Collect is a Collect; an exhausted seat may not Collect again."""
    s = setup(chains=(["~Pairing", "Model-A"], ["Exhaustion"]), hands=(["Tally"], []))
    play(s, "collect", "exhaust")
    assert s.to_move == 0
    assert "collect" not in legal(s)
    assert "build Tally" in legal(s)


# Book III REFUSAL, R-10, Q-02
def test_a_refused_model_cut_beside_a_folded_separation_spends_nothing() -> None:
    """R-10: the refused player's enabling card (the Model) is not spent; only the turn."""
    s = setup(chains=(["~Separation", "Model-A"], ["Tally", "Refusal", "Pairing"]))
    play(s, "cut 2 with Model-A", "refuse")
    assert chain(s, 0) == ["~Separation", "Model-A"]
    assert chain(s, 1) == ["Tally", "~Refusal", "Pairing"]
    assert s.spoils[0] == []
    assert s.to_move == 1


# formats.md Position, R-08, Q-02
def test_a_models_cut_beside_a_folded_separation_is_a_readable_position() -> None:
    """formats.md: the pending Cut a Model makes beside a spent Separation round-trips."""
    from game.window import from_json, to_json

    s = play(
        setup(chains=(["~Separation", "Model-A"], ["Tally", "Refusal", "Pairing"])),
        "cut 2 with Model-A",
    )
    assert s.pending is not None
    assert from_json(to_json(s)) == s


# formats.md Position, R-08, Q-02, Book III REFUSAL, IV.4
def test_a_models_hold_and_drill_beside_folded_cards_are_readable_positions() -> None:
    """formats.md: a Model's pending Hold (folded Escrow, their Refusal) and drill round-trip."""
    from game.window import from_json, to_json

    hold = play(setup(chains=(["~Escrow", "Model-A"], ["Refusal", "Tally"])), "hold Tally")
    drill = play(setup(chains=(["Model-B", "~No-Go"], ["Tally"])), "nogo Tally with Model-B")
    for s in (hold, drill):
        assert s.pending is not None
        assert from_json(to_json(s)) == s
    play(hold, "yield Tally")  # no Escrow in force: released at once (I.7 RANSOM)
    assert titles(hold, hold.hands[1]) == ["Tally"]
