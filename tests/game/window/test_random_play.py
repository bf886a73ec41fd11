"""Random play (hypothesis) over base, market and portfolio-like tables, checking invariants
after every action, OpenSpiel-style: the world's thirty strokes, every dealt certificate in one
place, clone and JSON round trips, never an empty action set before the close, a Seal that never
runs backward and closes by round twelve unless Zenoseal bends it, and records that replay.

Example counts are modest so the suite stays fast; ``CZ_LONG_RANDOM_PLAY=1`` runs many more.
"""

from __future__ import annotations

import json
import os
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.window import (
    State,
    format_action,
    from_deal,
    from_json,
    new_base_table,
    new_market_table,
    parse_record,
    record_json,
    replay,
    to_json,
)
from game.window.actions import DRILL
from game.window.state import CHAIN, HAND, HOSTAGE, MARKET, SPOILS
from ledger.catalog import PLAYING

EXAMPLES = 400 if os.environ.get("CZ_LONG_RANDOM_PLAY") else 25
PLAY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ZENOSEAL = "Zenoseal"


def portfolio_deal(seed: int) -> tuple[list[list[str]], list[str], list[str]]:
    """Sixteen distinct titles from all 41 (Archive included): 5 + 5 + 3 to market, 3 aside."""
    titles = random.Random(seed).sample([c.name for c in PLAYING], 16)
    return [titles[:5], titles[5:10]], titles[10:13], titles[13:]


def check_places(state: State) -> None:
    """Every dealt card lies in exactly one place, and its location code says where."""
    places: list[tuple[int, int]] = []
    for seat in (0, 1):
        places += [(c, HAND + seat) for c in state.hands[seat]]
        places += [(c, CHAIN + seat) for c in state.chains[seat]]
        places += [(c, SPOILS + seat) for c in state.spoils[seat]]
    places += [(c, MARKET) for c in state.market]
    places += [(c, 7) for c in state.aside]
    if state.hostage >= 0:
        places.append((state.hostage, HOSTAGE))
    assert sorted(c for c, _ in places) == list(range(len(state.titles)))
    for card, where in places:
        assert state.loc[card] == where
        if where not in (CHAIN, CHAIN + 1):
            assert state.up[card] == 0  # only chained cards have a face that counts
    if state.hostage >= 0:  # a hostage lives only under Escrow in force, opposite its owner
        assert state.escrow_controller() == 1 - state.hostage_owner


def zenoseal_up(state: State) -> bool:
    card = state.card_of(ZENOSEAL)
    return card >= 0 and state.in_force_anywhere(state.titles[card]) >= 0


def play_out(state: State, seed: int) -> None:
    """Play ``state`` to the close at random, checking every invariant after every action."""
    rng = random.Random(seed)
    opening = state.clone()
    actions: list[str] = []
    bends = 0
    while not state.is_over:
        legal = state.legal_actions()
        assert legal, "the law of the turn: never an empty action set before the close (I.6)"
        action = rng.choice(legal)
        seal, zeno = state.seal, zenoseal_up(state)
        actions.append(format_action(state, action))
        state.apply(action)
        assert state.seal >= seal, "the Seal never runs backward (I.8)"
        if zeno and not zenoseal_up(state) and action & 31 != DRILL and state.seal == 11:
            bends += 1
        assert state.plenum + sum(state.hoards) == 30
        assert min(state.plenum, *state.hoards) >= 0
        check_places(state)
        assert state.clone() == state
        position = json.loads(json.dumps(to_json(state)))
        again = from_json(position)
        assert again == state
        assert to_json(again) == position
        assert state.round <= 12 + bends + 1
    assert state.seal == 12
    assert state.round <= 12 + bends
    verdicts = {state.verdict(0), state.verdict(1)}
    assert len(verdicts) == 1 or {v.value for v in verdicts} == {"win", "loss"}
    _check_replay(opening, actions, state)


def _check_replay(opening: State, actions: list[str], final: State) -> None:
    position = to_json(opening)
    record = record_json(
        parse_record(
            {
                "format": "cz-table-record/1",
                "deal": {
                    "table": "deal",
                    "hands": position["hands"],
                    "market": position["market"],
                    "aside": position["aside"],
                },
                "actions": [],
            }
        ).deal,
        actions,
    )
    replayed = replay(parse_record(json.loads(json.dumps(record))))
    # an explicit deal convenes as "deal"; everything else must be identical
    replayed.table_kind = final.table_kind
    assert replayed == final


# I.2, I.5, I.6, I.8, E-01
@PLAY
@given(seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_random_base_tables(seed: int, choices: int) -> None:
    """I.5 base tables keep every invariant after every action and replay exactly."""
    play_out(new_base_table(seed), choices)


# I.2, IV.2, I.6, I.8, E-01
@PLAY
@given(seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_random_market_tables(seed: int, choices: int) -> None:
    """IV.2 market tables keep every invariant after every action and replay exactly."""
    play_out(new_market_table(seed), choices)


# I.2, IV.3, I.6, I.8, R-13, E-01
@PLAY
@given(seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_random_portfolio_like_tables(seed: int, choices: int) -> None:
    """IV.3-like explicit deals drawn from all 41 titles (Archive cards included)."""
    hands, market, aside = portfolio_deal(seed)
    play_out(from_deal(hands, market, aside), choices)
