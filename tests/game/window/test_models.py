"""Models (Book III MODEL-A, MODEL-B, R-08, docs/rulings.md Q-02): the copier's own face.

A face-up Model has the core action power of its neighbour in the chain whatever that card's
face; a copied spend-power spends the Model, never the neighbour, and a Model that copies Swap
is spent by it like every Reflection; a folded Model, a Model beside a Model, and a Model with
no neighbour in the chain copy nothing.
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


# I.7 SWAP
#
#
def test_a_model_that_copies_swap_is_spent_by_it_in_the_other_seats_chain() -> None:
    """I.7 SWAP "the mirror is spent by its own use", R-08 "mirrors", Q-02: Model-B beside a
    folded Reflection swaps (named ``with Model-B``) and turns face down, in the chain it now
    lies in (the other seat's); hands, strokes and spoils do not move."""
    s = setup(
        chains=(["Model-B", "~Reflection"], ["Tally"]),
        hands=(["Pairing"], ["Escrow"]),
        spoils=(["Separation"], []),
        hoards=(3, 5),
    )
    assert {a for a in legal(s) if a.startswith("swap")} == {"swap with Model-B"}
    play(s, "swap with Model-B")
    assert chain(s, 0) == ["Tally"]
    assert chain(s, 1) == ["~Model-B", "~Reflection"]
    assert titles(s, s.hands[0]) == ["Pairing"]
    assert titles(s, s.hands[1]) == ["Escrow"]
    assert titles(s, s.spoils[0]) == ["Separation"]
    assert s.hoards == [3, 5]
    assert s.to_move == 1


# I.7 SWAP
#
#
def test_a_model_swap_cannot_be_swapped_back() -> None:
    """Q-02: the loop of the counter-reading is closed: once the Model is spent by its Swap,
    neither seat has a Swap left (the Reflection and the Model both lie folded)."""
    s = setup(chains=(["Model-B", "~Reflection"], ["Tally"]), hands=(["Pairing"], ["Escrow"]))
    play(s, "swap with Model-B")
    assert not any(a.startswith("swap") for a in legal(s))
    play(s, "build Escrow")
    assert not any(a.startswith("swap") for a in legal(s))


# I.7 SWAP
#
#
def test_beside_a_face_up_reflection_the_model_swap_is_a_second_action() -> None:
    """Q-02: beside Reflection in force both Swaps are offered, as with Cut; plain ``swap`` is
    Reflection's and leaves the Model up; ``swap with Model-A`` folds the Model as well."""
    s = setup(chains=(["Reflection", "Model-A"], ["Tally"]))
    assert {a for a in legal(s) if a.startswith("swap")} == {"swap", "swap with Model-A"}
    plain = play(s.clone(), "swap")
    assert chain(plain, 1) == ["~Reflection", "Model-A"]
    copied = play(s, "swap with Model-A")
    assert chain(copied, 1) == ["~Reflection", "~Model-A"]


# I.7 SWAP
#
#
def test_every_reflection_still_folds_when_a_model_swaps() -> None:
    """I.7 SWAP: "Every Reflection on the table then turns face down", whichever mirror is
    used; a Model-A whose Reflection is face up folds with it."""
    s = setup(chains=(["Tally", "Reflection", "Model-A"], ["Pairing"]))
    play(s, "swap with Model-A")
    assert chain(s, 0) == ["Pairing"]
    assert chain(s, 1) == ["Tally", "~Reflection", "~Model-A"]


# I.7 SWAP
#
#
def test_a_model_swap_that_gives_the_owner_escrow_releases_the_hostage() -> None:
    """R-04, I.7 RANSOM: the hostage check follows a Model's Swap as any Swap: the owner's
    Model swaps Escrow into its own control, the hostage goes home free, the Model folds."""
    s = setup(
        chains=(["Pairing", "Escrow"], ["Model-B", "~Reflection"]),
        hostage=("Tally", 1),
        to_move=1,
    )
    play(s, "swap with Model-B")
    assert chain(s, 1) == ["Pairing", "Escrow"]
    assert chain(s, 0) == ["~Model-B", "~Reflection"]
    assert s.hostage == -1
    assert titles(s, s.hands[1]) == ["Tally"]
    assert s.ransoms == [0, 0]


# Book III CANONICAL, Q-03, Q-02
def test_canonical_never_stops_a_model_spent_by_its_swap() -> None:
    """Q-03: the mirror spent by its own use is a self-spend, the Model's included."""
    s = setup(chains=(["Canonical", "Model-B", "Reflection"], ["Tally"]))
    play(s, "swap with Model-B")
    assert chain(s, 1) == ["Canonical", "~Model-B", "~Reflection"]


# Book III REFUSAL, Q-23, Q-02
def test_refusal_cannot_answer_a_model_swap() -> None:
    """Q-23: Refusal answers the naming of a seam or a hostage; a Swap names neither, so a
    Model's Swap resolves at once and the defender's Refusal stays up."""
    s = setup(chains=(["Model-B", "~Reflection"], ["Refusal"]))
    play(s, "swap with Model-B")
    assert s.pending is None
    assert chain(s, 0) == ["Refusal"]
    assert chain(s, 1) == ["~Model-B", "~Reflection"]


# Book III EXHAUSTION, Q-13, Q-02
def test_a_model_swap_is_a_swap_for_exhaustion() -> None:
    """Q-13: a Model's Swap is recorded as a Swap, and an exhausted seat whose previous turn
    was a Swap may not make a Model's Swap."""
    from game.window import to_json

    s = play(setup(chains=(["Model-B", "~Reflection"], ["Tally"])), "swap with Model-B")
    assert to_json(s)["last_action"] == ["swap", None]
    s = setup(
        chains=(["Model-B", "~Reflection"], ["Tally"]),
        hands=(["Pairing"], []),
        last_action=("swap", "exhaust"),
        exhausted=(True, False),
    )
    assert legal(s) == {"build Pairing", "accelerate"}


# Book III FAITHFUL, Q-02
def test_faithful_closes_a_models_swap_too() -> None:
    """Book III FAITHFUL: "Swap is closed to both seats", whoever's power makes it."""
    s = setup(chains=(["Model-B", "~Reflection"], ["Faithful"]))
    assert not any(a.startswith("swap") for a in legal(s))
    with pytest.raises(IllegalActionError, match="Faithful"):
        s.apply(parse_action(s, "swap with Model-B"))


# I.7 SWAP, R-08, Q-02
def test_a_swap_needs_a_mirror_that_may_use_it() -> None:
    """Q-02: plain ``swap`` is Reflection's (face up); a Model swaps only face up beside it;
    another card is no source. Each refusal names its rule."""
    s = setup(chains=(["Model-B", "~Reflection", "Tally"], ["Pairing"]))
    with pytest.raises(IllegalActionError, match="needs your Reflection face up"):
        s.apply(parse_action(s, "swap"))
    with pytest.raises(IllegalActionError, match="carries no Reflection power"):
        s.apply(parse_action(s, "swap with Tally"))
    s = setup(chains=(["~Model-B", "~Reflection"], ["Pairing"]))
    with pytest.raises(IllegalActionError, match="not a face-up Model beside your Reflection"):
        s.apply(parse_action(s, "swap with Model-B"))


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


# formats.md Position, I.7 SWAP, R-08, Q-02
def test_the_position_after_a_model_swap_round_trips() -> None:
    """formats.md: the folded Model in the other seat's chain is a readable position, and
    reading it back gives the same state and the same (Swap-free) legal actions."""
    from game.window import from_json, to_json

    s = play(
        setup(chains=(["Model-B", "~Reflection"], ["Tally"]), hands=([], ["Pairing"])),
        "swap with Model-B",
    )
    back = from_json(to_json(s))
    assert back == s
    assert to_json(back) == to_json(s)
    assert back.legal_actions() == s.legal_actions()
