"""The action notation (docs/formats.md): every legal action formats and parses back."""

from __future__ import annotations

import random

import pytest

from game.window import (
    NotationError,
    format_action,
    from_deal,
    new_market_table,
    parse_action,
)
from ledger.catalog import PLAYING
from tests.game.window.tables import setup


# formats.md Action notation
def test_every_legal_action_round_trips_through_text() -> None:
    """formats.md: format_action then parse_action gives back the same action, at every step."""
    rng = random.Random(1)
    for seed in range(40):
        titles = random.Random(seed).sample([c.name for c in PLAYING], 16)
        for state in (new_market_table(seed), from_deal([titles[:5], titles[5:10]], titles[10:13])):
            while not state.is_over:
                for action in state.legal_actions():
                    assert parse_action(state, format_action(state, action)) == action
                state.apply(rng.choice(state.legal_actions()))


# formats.md Action notation
def test_titles_are_read_without_regard_to_case() -> None:
    """formats.md: titles as printed, matched without regard to case."""
    s = setup(hands=(["Spend-Covering"], []))
    assert parse_action(s, "BUILD spend-covering") == parse_action(s, "build Spend-Covering")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("dance", "unknown action"),
        ("build", "malformed"),
        ("build Nothing", "no certificate is called"),
        ("build Torsor", "not at this table"),
        ("cut x", "malformed"),
        ("convert 3>8", "malformed"),
        ("ransom to hand", "malformed"),
        ("x" * 81, "at most 80"),
    ],
)
# formats.md Action notation
def test_bad_notation_is_a_typed_error(text: str, message: str) -> None:
    """formats.md: text that names no action is a NotationError, never a crash."""
    s = setup(hands=(["Tally", "Separation", "Exchange"], []))
    with pytest.raises(NotationError, match=message):
        parse_action(s, text)
