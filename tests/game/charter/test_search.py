"""The charter AI plays fair: its decision depends only on what its seat can see — never on the
other players' hands or on any deck's order (game/charter/search.py)."""

from __future__ import annotations

import random

from game.charter import library, new_game, to_json
from game.charter.search import CharterAI, determinize
from game.charter.state import DECK, HAND, State


def _midgame(seed: int = 11) -> State:
    """A random game's first decision from turn 4 on with a choice and hidden cards."""
    lists = [library.deck("ember").card_list(), library.deck("tide").card_list()]
    s = new_game(library.card_set(), library.charter("skirmish"), lists, seed)
    rng = random.Random(seed)
    while s.turns < 4 or len(s.legal_actions()) < 3 or not s.hands[1 - s.current_player]:
        assert not s.is_over
        s.apply(rng.choice(s.legal_actions()))
    return s


def _swapped(s: State, seat: int) -> State:
    """``s`` with what ``seat`` cannot see changed: each other player's hand traded for cards
    of their deck (as many), every deck reversed."""
    t = s.clone()
    for p in range(t.n):
        deck, hand = t.decks[p], t.hands[p]
        if p != seat:
            k = min(len(hand), len(deck))
            hand[:k], deck[:k] = deck[:k], hand[:k]
            for c in hand:
                t.place[c] = HAND
            for c in deck:
                t.place[c] = DECK
        deck.reverse()
    t._legal = None
    return t


def test_a_swapped_hidden_hand_gives_the_same_decision_under_the_same_seed() -> None:
    """Same position but for the opponent's hidden hand and every deck's order: the fair AI
    with the same seed makes the same decision with the same value, and its determinizations
    are the same positions. The position is one where the hidden cards differ."""
    s = _midgame()
    seat = s.current_player
    t = _swapped(s, seat)
    other = 1 - seat
    assert sorted(s.hands[other]) != sorted(t.hands[other])
    assert s.legal_actions() == t.legal_actions()
    first = CharterAI("fair", budget=24, horizon=30).choose(s)
    second = CharterAI("fair", budget=24, horizon=30).choose(t)
    assert first == second
    a = determinize(s, seat, random.Random(3))
    b = determinize(t, seat, random.Random(3))
    assert to_json(a) == to_json(b)
    assert sorted(a.hands[other] + a.decks[other]) == sorted(s.hands[other] + s.decks[other])
    assert a.hands[seat] == s.hands[seat]  # its own hand it sees


def test_the_old_ai_read_the_hidden_hand() -> None:
    """The comparison AI (fair=False) searches the real hands: its playouts start from the
    position itself, so swapping the hidden hand changes what it finds."""
    s = _midgame()
    seat = s.current_player
    t = _swapped(s, seat)
    first = CharterAI("seen", budget=24, horizon=30, fair=False).choose(s)
    second = CharterAI("seen", budget=24, horizon=30, fair=False).choose(t)
    assert first.value != second.value
