"""Records of finished games state how they ended: the winner or none, and always why
(Defense and defeat, C-17, C-19); replaying a record checks what it states."""

from __future__ import annotations

import json
import random

import pytest

from game.charter import library, new_game, outcome, parse_record, record_json, replay
from game.charter.notation import format_action
from ledger.errors import SchemaError
from tests.game.charter.scenes import act, scene


def _random_game(max_turns: int, seed: int = 5) -> tuple[list[list[str]], list[str], object]:
    lists = [library.deck("ember").card_list(), library.deck("tide").card_list()]
    s = new_game(library.card_set(), library.charter("skirmish"), lists, seed, max_turns)
    rng = random.Random(seed)
    actions = []
    while not s.is_over:
        action = rng.choice(s.legal_actions())
        actions.append(format_action(s, action))
        s.apply(action)
    return lists, actions, s


# Defense and defeat, C-17
def test_a_defeat_names_the_winner_and_the_defeated() -> None:
    """An exposed seat dealt damage is defeated: the result names the winner and why."""
    s = scene([["Raider"], []], [["Lantern"], ["Lantern"]])
    assert outcome(s) is None  # a game in progress has no result yet
    act(s, "play Raider#0", "attack Raider#0 at seat 1", "attacks done")
    ended = outcome(s)
    assert ended is not None
    assert ended["winner"] == 0
    assert "seat 1 was dealt damage while exposed" in ended["reason"]


# C-19
def test_the_turn_limit_ends_a_game_with_no_winner_and_says_so() -> None:
    """At the table's turn limit the game is over without a winner, and the result says the
    limit ended it (never a bare null winner); the record carrying it replays and checks it."""
    lists, actions, s = _random_game(max_turns=2)
    ended = outcome(s)  # type: ignore[arg-type]
    assert ended == {
        "winner": None,
        "reason": "no winner: the table's limit of 2 turns was reached with no player "
        "defeated (C-19)",
    }
    record = record_json("sample", "skirmish", lists, 5, actions, 2, ended)
    replay(parse_record(json.loads(json.dumps(record))))
    wrong = dict(record, result={"winner": 1, "reason": "seat 1 won"})
    with pytest.raises(SchemaError, match="the game ends no winner: the table's limit"):
        replay(parse_record(wrong))
