"""Random games of two, three and four players (hypothesis), OpenSpiel-style: after every action
the invariants the issue lists hold, positions round-trip through JSON, clones are independent,
and the record replays to the same position.

Example counts stay modest so the suite is fast; ``CZ_LONG_CHARTER_PLAY=1`` runs many more.
Locally every run draws new seeds; with ``CI`` set the "ci" profile of tests/conftest.py makes
every run play the same ones. A seed found failing becomes a scenario test in test_rules.py.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.charter import (
    format_action,
    from_json,
    library,
    new_game,
    outcome,
    record_json,
    replay,
    to_json,
    turns,
)
from game.charter import parse_record as parse
from game.charter.state import State
from tests.game.charter.invariants import check_invariants

EXAMPLES = 150 if os.environ.get("CZ_LONG_CHARTER_PLAY") else 6
PLAY = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TABLES = {
    2: ("skirmish", ("ember", "tide")),
    3: ("siege", ("bastion", "tithe", "bastion")),
    4: ("skirmish", ("tide", "ember", "ember", "tide")),
}


@contextmanager
def watching_phase_ends() -> Iterator[list[str]]:
    """Record every breach of two flow invariants at the moment it would happen: a phase
    ending with the stack not empty (Resolution), a turn beginning with a pool not empty
    (Resources: the pool clears at the end of each turn)."""
    breaches: list[str] = []
    end_window, begin_turn = turns.end_window, turns.begin_turn

    def end(s: State) -> int:
        if s.stack:
            breaches.append(f"phase {s.phase} ended with {len(s.stack)} on the stack")
        return end_window(s)

    def begin(s: State, seat: int) -> None:
        if any(sum(pool) for pool in s.pools):
            breaches.append(f"turn {s.turns + 1} began with resources in a pool")
        begin_turn(s, seat)

    turns.end_window, turns.begin_turn = end, begin  # type: ignore[assignment]
    try:
        yield breaches
    finally:
        turns.end_window, turns.begin_turn = end_window, begin_turn  # type: ignore[assignment]


def play_out(players: int, seed: int) -> None:
    with watching_phase_ends() as breaches:
        _play_out(players, seed)
    assert breaches == []


def _play_out(players: int, seed: int) -> None:
    charter, decks = TABLES[players]
    lists = [library.deck(d).card_list() for d in decks]
    s = new_game(library.card_set(), library.charter(charter), lists, seed)
    rng = random.Random(seed)
    actions: list[str] = []
    while not s.is_over:
        check_invariants(s)
        legal = s.legal_actions()
        assert legal
        if rng.random() < 0.05:
            copy = from_json(json.loads(json.dumps(to_json(s))))
            assert to_json(copy) == to_json(s)
            assert copy.legal_actions() == legal
        action = rng.choice(legal)
        before = to_json(s)
        twin = s.clone()
        actions.append(format_action(s, action))
        s.apply(action)
        assert to_json(twin) == before  # the clone did not move
    check_invariants(s)
    ended = outcome(s)
    assert ended is not None
    assert ended["reason"]  # every finished game says why it ended
    assert (ended["winner"] is None) == (s.winner < 0)
    record = record_json("sample", charter, lists, seed, actions, result=ended)
    assert to_json(replay(parse(json.loads(json.dumps(record))))) == to_json(s)


# Game setup, Turn structure, Zones, Control and ownership, Construction, Edicts, Resolution
@pytest.mark.parametrize("players", [2, 3, 4])
@PLAY
@given(seed=st.integers(0, 2**32))
def test_random_games_keep_the_invariants(players: int, seed: int) -> None:
    """Every card in one place, control follows zones, no unsupported structure or unanchored
    edict stands, the stack empties before a phase ends, pools empty as a turn begins."""
    play_out(players, seed)


def test_ci_runs_are_derandomized() -> None:
    """tests/conftest.py: with ``CI`` set every run plays the same seeds (nothing random can
    fail a CI run); without it each run explores new ones."""
    assert settings.get_profile("ci").derandomize
    assert PLAY.derandomize == bool(os.environ.get("CI"))
