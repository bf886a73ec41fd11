"""The rulings and the corners read again as scenarios: zones, R-02 and R-11, the deciding seat,
Q-09 deals, costs, records, orders. How they are built and why they are worked out apart:
tests/game/window/crosscheck.py."""

from __future__ import annotations

import random

import pytest

from game.window import (
    CHANCE,
    IllegalActionError,
    from_deal,
    from_json,
    new_base_table,
    new_market_table,
    to_json,
)
from ledger.errors import SchemaError
from tests.game.window.crosscheck import (
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
