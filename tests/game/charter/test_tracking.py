"""The engine's legal-action tracking changes no game: the actions it offers at every decision
are the full enumeration's, the players it passes for could only pass, and seeded random games
play out as they did before the tracking existed.

The tracking (docs/charter.md, "Performance"): within one run of forced steps a seat found able
only to pass is not asked again until the position moves (``turns.run``, ``turns.end_window``);
an attacker or blocker declared leaves the next list the last one less that card
(``turns.take``); a payment or a declaration that stops at a decision hands over the options it
just weighed. The reference here is the rules' own definition: every player holding priority
asked through the full enumeration (``turns.priority_actions``) and passed for only when it
offers nothing but ``pass`` (C-26), and every decision's actions enumerated from scratch
(``turns.legal_actions``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from game.charter import format_action, library, new_game, outcome, record_json, to_json, turns
from game.charter.board import check
from game.charter.effects import flush_triggers, resolve_top
from game.charter.state import State

TABLES = {
    "skirmish 2p": ("skirmish", ("ember", "tide")),
    "siege 2p": ("siege", ("bastion", "tithe")),
    "siege 3p": ("siege", ("bastion", "tithe", "bastion")),
    "skirmish 4p": ("skirmish", ("tide", "ember", "ember", "tide")),
}


def _reference_run(s: State) -> None:
    """``turns.run`` as the rules say it, nothing remembered: every seat holding priority is
    asked through the full enumeration, and passed for only when it offers nothing else."""
    while not s.is_over:
        if s.pending is not None:
            return
        if s.dirty:
            check(s)
            if s.pending is not None:
                return
        if s.triggers:
            last = flush_triggers(s)
            if last >= 0:
                turns.added(s, last)
            continue
        if s.resolving:
            if s.stack:
                resolve_top(s)
            else:
                turns.open_window(s)
            continue
        legal = turns.priority_actions(s, s.priority)
        if len(legal) > 1:
            s._legal = tuple(legal)
            return
        turns.do_pass(s)
    if s.dirty:
        check(s)


@contextmanager
def reference_flow() -> Iterator[None]:
    run = turns.run
    turns.run = _reference_run
    try:
        yield
    finally:
        turns.run = run


def _deal(table: str, seed: int) -> tuple[State, list[list[str]]]:
    charter, decks = TABLES[table]
    lists = [library.deck(d).card_list() for d in decks]
    return new_game(library.card_set(), library.charter(charter), lists, seed), lists


ORACLE = [("skirmish 2p", 24), ("siege 2p", 4), ("siege 3p", 4), ("skirmish 4p", 4)]


# C-26, Resolution
@pytest.mark.parametrize(("table", "games"), ORACLE)
def test_tracked_actions_are_the_full_enumeration_at_every_decision(table: str, games: int) -> None:
    """Two copies of each seeded random game, one played by the engine and one by the
    reference flow, meet the same decisions: the same seat, the tracked actions equal to the
    full enumeration of the reference position, and the same final position."""
    for seed in range(games):
        tracked, _ = _deal(table, seed)
        with reference_flow():
            reference, _ = _deal(table, seed)
        rng = random.Random(seed)
        while not tracked.is_over:
            assert not reference.is_over
            assert tracked.steps == reference.steps
            assert tracked.current_player == reference.current_player
            legal = tracked.legal_actions()
            assert legal == turns.legal_actions(reference), (table, seed, tracked.steps)
            action = legal[rng.randrange(len(legal))]
            tracked.apply(action)
            with reference_flow():
                reference.apply(action)
        assert reference.is_over
        assert to_json(tracked) == to_json(reference)


def records_digest(table: str, games: int) -> str:
    """SHA-256 of the records (actions in notation, result) of ``games`` seeded random games
    (seeds 0…games-1, each choosing with ``random.Random(seed)``), one JSON line each."""
    charter = TABLES[table][0]
    digest = hashlib.sha256()
    for seed in range(games):
        s, lists = _deal(table, seed)
        rng = random.Random(seed)
        actions = []
        while not s.is_over:
            legal = s.legal_actions()
            action = legal[rng.randrange(len(legal))]
            actions.append(format_action(s, action))
            s.apply(action)
        record = record_json("sample", charter, lists, seed, actions, result=outcome(s))
        digest.update(json.dumps(record, sort_keys=True).encode() + b"\n")
    return digest.hexdigest()


# Computed with the engine before the tracking (commit 0b98332: every seat asked in every
# window through its own test, every decision's actions enumerated afresh), its game/ ahead of
# this repository on the path (run from outside the repository, whose own game/ would else
# come first):
#   git archive 0b98332 game | tar -x -C /tmp/before && cd /tmp
#   PYTHONPATH=/tmp/before:$REPO python -c "from tests.game.charter.test_tracking import \
#       records_digest as d; print(d('skirmish 2p', 40))"
BEFORE = {
    ("skirmish 2p", 40): "4f675c9f7a7b45c40d4209552fed9b3bafc71ef0259875377a3add5af5f0caf2",
    ("siege 2p", 8): "74644909ba3116a9db9d999a750d495d8b1c65489d5b206114c8f4efead7ec1c",
    ("siege 3p", 4): "724b061dd38a19db27670a283ccfa79676d2f9e6c96054ef18df1c7e6d496e69",
    ("skirmish 4p", 4): "a99996ef5816154655adb551a639dc72dc8bab38ed8ceaf82871166e95357632",
}


@pytest.mark.parametrize(("table", "games"), list(BEFORE))
def test_seeded_random_games_keep_their_records(table: str, games: int) -> None:
    """Same seed, same record: seeded random games play out, action for action and to the
    same result, as they did before the engine tracked its legal actions."""
    assert records_digest(table, games) == BEFORE[(table, games)]
