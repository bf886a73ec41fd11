"""Positions as JSON (docs/formats.md): exact round trips and refusal of inconsistent input."""

from __future__ import annotations

import copy
import json

import pytest

from game.window import from_json, new_market_table, parse_action, to_json
from ledger.errors import SchemaError
from tests.game.window.tables import play, setup


# formats.md Position, I.7 CUT, Book II TURN, IV.4
def test_pending_decisions_round_trip() -> None:
    """formats.md: a position inside an action (defender, Turn order, drill) round-trips."""
    cut = play(setup(chains=(["Separation"], ["Tally", "Fork", "Pairing", "Escrow"])), "cut 1")
    turn = play(
        setup(chains=(["Turn"], ["Tally", "Pairing", "Escrow"])), "turn theirs", "place Escrow"
    )
    drill = play(setup(chains=(["No-Go"], ["Tally"])), "nogo Tally")
    hold = play(setup(chains=(["Escrow"], ["Refusal", "Tally"])), "hold Tally")
    for state in (cut, turn, drill, hold):
        assert state.pending is not None
        position = json.loads(json.dumps(to_json(state)))
        assert from_json(position) == state
        assert to_json(from_json(position)) == position


# formats.md Position
def test_replayed_position_continues_identically() -> None:
    """A position read back from JSON plays on exactly as the original."""
    a = new_market_table(9)
    play(a, "accelerate")
    b = from_json(to_json(a))
    for text in ("accelerate", "build " + a.title_of(a.hands[0][0])):
        a.apply(parse_action(a, text))
        b.apply(parse_action(b, text))
    assert a == b


def _mutated(change) -> dict:
    position = to_json(setup(chains=(["Escrow"], ["Tally", "Pairing"]), hoards=(3, 0)))
    position = copy.deepcopy(position)
    change(position)
    return position


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(plenum=28), "sum to 30"),
        (lambda p: p.update(seal=13), "Seal"),
        (lambda p: p.update(closed=True), "Seal"),
        (lambda p: p["hands"][0].append("Tally"), "two places"),
        (lambda p: p["cards"].append("Torsor"), "lies nowhere"),
        (lambda p: p["cards"].append("Tally"), "twice"),
        (lambda p: p.update(format="cz-position/2"), "format"),
        (lambda p: p.update(extra=1), "extra"),
        (lambda p: p.update(to_move=1), "parity"),
        (lambda p: p.update(ransoms=[3, 0]), "twice per game"),
        (lambda p: p.update(last_action=["dance", None]), "not an action kind"),
        (lambda p: p.update(hoards=[3]), "hoards"),
        (lambda p: p["chains"][1].append({"card": "Tally", "face": "sideways"}), "face"),
        (lambda p: p.update(hostage={"card": "Exchange", "owner": 0}), "Exchange"),
        (lambda p: p.update(pending={"step": "drill", "actor": 0, "card": "Escrow"}), "pending"),
    ],
)
# formats.md Position, I.2, I.1, I.7
def test_inconsistent_positions_are_refused(change, message: str) -> None:
    """from_json reads untrusted input: every inconsistency is one SchemaError."""
    with pytest.raises(SchemaError, match=message):
        from_json(_mutated(change))


# I.7 HOLD, R-04
def test_hostage_must_sit_under_escrow_opposite_its_owner() -> None:
    """I.7 HOLD: a hostage exists only under an Escrow in force held by the other seat."""
    position = to_json(setup(chains=(["Escrow"], ["Tally"])))
    position["cards"].append("Pairing")
    position["hostage"] = {"card": "Pairing", "owner": 0}
    with pytest.raises(SchemaError, match="hostage"):
        from_json(position)


# --------------------------------------------------------------------------- reachability (F-1)
# A position read from JSON must be one that legal play could reach: a pending decision is left
# only by the action that opens it, and a seeded table holds only what it was dealt.


def _with_pending(state, pending: dict) -> dict:
    position = copy.deepcopy(to_json(state))
    position["pending"] = pending
    return position


@pytest.mark.parametrize(
    ("pending", "message"),
    [
        # a Cut "made" by Tally, which carries no Cut power (I.7 CUT, R-08)
        ({"step": "cut", "actor": 0, "source": "Tally", "candidates": ["Pairing"]}, "Tally"),
        # Exchange is the middle of three: no seam yields it (I.7 CUT)
        (
            {"step": "cut", "actor": 0, "source": "Separation", "candidates": ["Exchange"]},
            "no seam yields",
        ),
        # a Hold by a seat with no Escrow, of their innermost card, with no Refusal to wait for
        ({"step": "hold", "actor": 0, "card": "Pairing"}, "Escrow"),
        # a drill with no No-Go (nor a Model) spent to start it (Book II NO-GO, Q-25)
        ({"step": "drill", "actor": 0, "card": "Exchange"}, "No-Go"),
    ],
)
# formats.md Position, I.7 CUT, I.7 HOLD, Book II NO-GO, R-08 (review F-1)
def test_a_pending_decision_no_action_could_leave_is_refused(pending, message: str) -> None:
    """formats.md Position: a pending decision must be one an action of the rules leaves."""
    s = setup(chains=(["Separation", "Tally"], ["Pairing", "Exchange", "Escrow"]))
    with pytest.raises(SchemaError, match=message):
        from_json(_with_pending(s, pending))


# I.7 CUT, Book II KEEPING, Book III FORK, REFUSAL (F-1)
@pytest.mark.parametrize(
    ("chains", "pending", "message"),
    [
        # a folded Separation carries no Cut while the Cut is pending (it is spent at resolution)
        (
            (["~Separation"], ["Tally", "Pairing", "Fork"]),
            {"step": "cut", "actor": 0, "source": "Separation", "candidates": ["Tally"]},
            "made by Separation",
        ),
        # equal pieces list the inner piece's card first, as the engine writes them
        (
            (["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"]),
            {
                "step": "cut",
                "actor": 0,
                "source": "Separation",
                "candidates": ["Exchange", "Pairing"],
            },
            "no seam yields",
        ),
        # one yielding card, no Fork, no Refusal: the Cut resolves at once, nothing waits
        (
            (["Separation"], ["Tally", "Pairing", "Escrow"]),
            {"step": "cut", "actor": 0, "source": "Separation", "candidates": ["Escrow"]},
            "no choice",
        ),
        # Keeping shields Pairing: no seam yields it
        (
            (["Separation"], ["Tally", "Pairing", "Keeping", "Escrow", "Fork"]),
            {"step": "cut", "actor": 0, "source": "Separation", "candidates": ["Pairing"]},
            "no seam yields",
        ),
        # the defender is the actor's own chain: seat 1 is not to move
        (
            (["Tally", "Pairing", "Fork"], ["Separation"]),
            {"step": "cut", "actor": 1, "source": "Separation", "candidates": ["Tally"]},
            "seat to move",
        ),
    ],
)
def test_a_pending_cut_must_be_one_a_cut_leaves(chains, pending, message: str) -> None:
    """I.7 CUT: a pending Cut has a live source, one seam's yielding cards and a real choice."""
    with pytest.raises(SchemaError, match=message):
        from_json(_with_pending(setup(chains=chains), pending))


# I.7 HOLD, Book II KEEPING, Book III REFUSAL (F-1)
@pytest.mark.parametrize(
    ("chains", "card", "message"),
    [
        ((["Escrow"], ["Refusal", "Tally"]), "Refusal", "innermost"),
        ((["Escrow"], ["Refusal", "~Tally"]), "Tally", "face-up"),
        ((["Escrow"], ["Refusal", "Keeping", "Tally"]), "Tally", "Keeping"),
        ((["Escrow"], ["Pairing", "Tally"]), "Tally", "no Refusal"),
        ((["~Escrow"], ["Refusal", "Tally"]), "Tally", "no Escrow"),
    ],
)
def test_a_pending_hold_must_be_one_a_hold_leaves(chains, card: str, message: str) -> None:
    """I.7 HOLD: Escrow, a face-up card other than the innermost, unshielded; Refusal to wait."""
    pending = {"step": "hold", "actor": 0, "card": card}
    with pytest.raises(SchemaError, match=message):
        from_json(_with_pending(setup(chains=chains), pending))


# I.7 HOLD (F-1)
def test_a_pending_hold_while_a_hostage_exists_is_refused() -> None:
    """I.7 HOLD: "the table must hold no hostage already"; a second Hold cannot be pending."""
    s = setup(chains=(["Escrow"], ["Refusal", "Tally"]), hostage=("Pairing", 1))
    with pytest.raises(SchemaError, match="hostage exists"):
        from_json(_with_pending(s, {"step": "hold", "actor": 0, "card": "Tally"}))


# Book II NO-GO, Book II TURN, IV.4, Q-16, Q-25 (F-1)
@pytest.mark.parametrize(
    ("chains", "pending", "message"),
    [
        # No-Go still face up: nothing was spent to start the drill
        ((["No-Go"], ["Tally"]), {"step": "drill", "actor": 0, "card": "Tally"}, "No-Go"),
        # the challenged card is folded: No-Go challenges a face-up card
        ((["~No-Go"], ["~Tally"]), {"step": "drill", "actor": 0, "card": "Tally"}, "face-up"),
        # Turn still face up: no Turn was spent to start the ordering
        (
            (["Turn"], ["Tally", "Pairing", "Escrow"]),
            {
                "step": "place",
                "actor": 0,
                "chain": 1,
                "placed": [],
                "remaining": ["Tally", "Pairing", "Escrow"],
            },
            "spent Turn",
        ),
        # the placed and remaining cards are not the turned chain
        (
            (["~Turn"], ["Tally", "Pairing", "Escrow"]),
            {
                "step": "place",
                "actor": 0,
                "chain": 1,
                "placed": ["Tally"],
                "remaining": ["Pairing"],
            },
            "split the chain",
        ),
        # fields of another step: a drill names no candidates
        (
            (["~No-Go"], ["Tally"]),
            {"step": "drill", "actor": 0, "card": "Tally", "candidates": ["Tally"]},
            "carries exactly card",
        ),
    ],
)
def test_pending_drill_and_place_need_their_spent_card(chains, pending, message: str) -> None:
    """Book II NO-GO, TURN: the drill and the Turn's ordering follow a card already spent."""
    with pytest.raises(SchemaError, match=message):
        from_json(_with_pending(setup(chains=chains), pending))


# Book III EXHAUSTION, Q-13 (F-1)
def test_an_exhausted_seat_cannot_have_a_repeated_action_pending() -> None:
    """Book III EXHAUSTION: an exhausted seat whose last action was a Cut cannot be mid-Cut."""
    s = setup(
        chains=(["Separation"], ["Tally", "Pairing", "Fork"]),
        last_action=("cut", None),
        exhausted=(True, False),
    )
    pending = {"step": "cut", "actor": 0, "source": "Separation", "candidates": ["Tally"]}
    with pytest.raises(SchemaError, match="EXHAUSTION"):
        from_json(_with_pending(s, pending))
    # the same pending Cut without Exhaustion is a position a Cut leaves (Fork gives a choice)
    s = setup(chains=(["Separation"], ["Tally", "Pairing", "Fork"]))
    assert from_json(_with_pending(s, pending)).legal_actions()


# Book III EXHAUSTION (F-1)
def test_only_the_seat_to_move_can_be_exhausted() -> None:
    """Book III EXHAUSTION binds "their next action": it lapses once that seat has acted."""
    position = to_json(setup(chains=(["Tally"], [])))
    position["exhausted"] = [False, True]
    with pytest.raises(SchemaError, match="EXHAUSTION"):
        from_json(position)


# Book III ZENOSEAL, R-13 (F-1)
def test_a_closed_table_with_zenoseal_face_up_is_refused() -> None:
    """R-13: while Zenoseal stands face up the Seal shows eleven instead of twelve."""
    position = to_json(setup(chains=(["Zenoseal"], []), seal=11))
    position.update(seal=12, closed=True)
    with pytest.raises(SchemaError, match="Zenoseal"):
        from_json(position)
    position["chains"][0][0]["face"] = "down"
    assert from_json(position).is_over


def _seeded(kind: str) -> dict:
    from game.window import new_base_table

    table = new_base_table(3) if kind == "base" else new_market_table(4)
    return copy.deepcopy(to_json(table))


def _to_market(p: dict) -> None:
    p["market"].append(p["hands"][0].pop())


# I.5, IV.2, I.7 BUILD (F-1)
@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        # a base table deals no market (I.5); Build would take from it (I.7 BUILD)
        ("base", _to_market, "deals no market"),
        (
            "base",
            lambda p: (p["cards"].append("Torsor"), p["hands"][0].append("Torsor")),
            "exactly its 6 titles",
        ),
        (
            "market",
            lambda p: (p["cards"].append("Gram"), p["hands"][0].append("Gram")),
            "exactly its 13 titles",
        ),
        ("base", lambda p: p.update(table="market"), "exactly its 13 titles"),
    ],
)
def test_a_seeded_table_holds_only_what_it_convenes_with(kind, change, message: str) -> None:
    """I.5, IV.2: a base table holds the base six and no market; a market table the thirteen."""
    position = _seeded(kind)
    change(position)
    with pytest.raises(SchemaError, match=message):
        from_json(position)


# IV.2, IV.3 (F-1)
def test_market_and_portfolio_limits() -> None:
    """IV.2: a market table sets nothing aside; IV.3: the market is three, the pool sixteen."""
    market = to_json(new_market_table(4))
    moved = copy.deepcopy(market)
    moved["aside"].append(moved["hands"][0].pop())
    with pytest.raises(SchemaError, match="none aside"):
        from_json(moved)
    moved = copy.deepcopy(market)
    moved["market"].append(moved["hands"][0].pop())
    with pytest.raises(SchemaError, match="market is dealt 3"):
        from_json(moved)
    pool = [
        "Tally",
        "Pairing",
        "Separation",
        "Escrow",
        "Reflection",
        "Exchange",
        "Torsor",
        "Balance",
        "Descent",
        "Turn",
        "Keeping",
        "No-Go",
        "Spend-Covering",
        "Alphabet",
        "Gram",
        "Canonical",
        "Wellformed",
    ]
    big = to_json(setup(hands=(pool[:5], pool[5:10]), market=pool[10:13], aside=pool[13:16]))
    assert from_json({**big, "table": "portfolio"}).table_kind == "portfolio"
    big = to_json(setup(hands=(pool[:5], pool[5:10]), market=pool[10:13], aside=pool[13:]))
    with pytest.raises(SchemaError, match="at most 16"):
        from_json({**big, "table": "portfolio"})


# formats.md Position (F-1): bounded input
@pytest.mark.parametrize(
    "change",
    [
        lambda p: p.update(turn=10_001),
        lambda p: p.update(market=["Tally"] * 64),
        lambda p: p["hands"][0].extend(["Tally"] * 64),
    ],
)
def test_oversized_fields_are_refused_before_they_are_read(change) -> None:
    """formats.md Table records: limits on every list; no turn beyond a record's length."""
    with pytest.raises(SchemaError, match="not a position"):
        from_json(_mutated(change))


# formats.md Position, R-08 (F-1): reachable positions are still read
def test_every_pending_decision_play_can_leave_is_still_read() -> None:
    """formats.md: the checks refuse only the unreachable; a Model's Cut, Fork, Refusal read."""
    positions = [
        play(
            setup(chains=(["Separation", "Model-A"], ["Tally", "Refusal", "Pairing"])),
            "cut 2 with Model-A",
        ),
        play(setup(chains=(["Separation"], ["Tally", "Pairing", "Escrow", "Exchange"])), "cut 2"),
        play(setup(chains=(["Model-B", "No-Go"], ["Tally"])), "nogo Tally with Model-B"),
        play(setup(chains=(["Turn", "Model-A"], ["Tally", "Pairing"])), "turn theirs with Model-A"),
        play(
            setup(chains=(["Escrow"], ["Refusal", "Keeping", "Tally", "Pairing"])), "hold Pairing"
        ),
    ]
    for state in positions:
        assert state.pending is not None
        assert from_json(to_json(state)) == state
