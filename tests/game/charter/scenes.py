"""Scenario helpers: set a board up by hand, act in notation, read the legal actions."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from game.charter import CardSet, format_action, library, load_card_set, new_game, parse_action
from game.charter.state import (
    ACTION,
    ANCHORED,
    BOARD,
    CONSTRUCTED,
    DECK,
    HAND,
    NO_COMBAT,
    State,
)
from game.charter.turns import open_window, run

FILLER = "Mend"


def scene(
    hands: list[list[str]],
    boards: list[list[str]] | None = None,
    *,
    charter: str = "skirmish",
    deck_filler: int = 0,
    turn_player: int = 0,
    constructed: dict[int, int] | None = None,
    anchored: dict[int, int] | None = None,
    card_set: CardSet | None = None,
) -> State:
    """Seat p holds ``hands[p]`` and controls ``boards[p]`` (free, released, undamaged); each
        deck holds ``deck_filler`` Mends; ids follow seat 0's hand, board and deck, then seat 1's;
        ``constructed`` and ``anchored`` map card ids to their hosts. It is ``turn_player``'s
        action phase, the stack empty, and no seat is on its first turn. ``card_set``: the sample
    unless given (:func:`with_cards`)."""
    boards = boards or [[] for _ in hands]
    decks = [h + b + [FILLER] * deck_filler for h, b in zip(hands, boards, strict=True)]
    cards = card_set or library.card_set()
    s = new_game(cards, library.charter(charter), decks, seed=1)
    start = 0
    for seat, deck in enumerate(decks):
        ids = list(range(start, start + len(deck)))
        start += len(deck)
        n_hand, n_board = len(hands[seat]), len(boards[seat])
        s.hands[seat] = ids[:n_hand]
        s.decks[seat] = ids[n_hand + n_board :]
        for c in ids[:n_hand]:
            s.place[c] = HAND
        for c in s.decks[seat]:
            s.place[c] = DECK
        for c in ids[n_hand : n_hand + n_board]:
            s.place[c] = BOARD
            s.board.append(c)
            s.free_ctrl[c] = s.ctrl[c] = seat
    for c, host in (constructed or {}).items():
        s.host[c], s.bond[c] = host, CONSTRUCTED
    for c, host in (anchored or {}).items():
        s.host[c], s.bond[c] = host, ANCHORED
    s.pending = None
    s.turn_player, s.turns, s.phase, s.step = turn_player, 3, ACTION, NO_COMBAT
    s.first_turn = [False] * len(hands)
    s.dirty = True
    s._legal = None
    open_window(s)
    run(s)
    return s


def with_cards(*extra: dict[str, Any]) -> CardSet:
    """The sample card set with ``extra`` cards (card-set JSON) added, for a scene that needs
    a card the sample does not print."""
    data = copy.deepcopy(library.card_set().source)
    data["cards"].extend(extra)
    return load_card_set(data)


def card(s: State, name: str, seat: int | None = None, nth: int = 0) -> int:
    """The ``nth`` card called ``name`` (owned by ``seat`` if given), in id order."""
    found = [
        c
        for c in range(len(s.defs))
        if s.defs[c].name == name and (seat is None or s.owner[c] == seat)
    ]
    return found[nth]


def act(s: State, *texts: str) -> None:
    for text in texts:
        s.apply(parse_action(s, text))


def legal(s: State) -> list[str]:
    return [format_action(s, a) for a in s.legal_actions()]


def until(s: State, done: Callable[[State], bool], limit: int = 200) -> None:
    """Take the first legal action (pass, attacks done, blocks done …) until ``done``."""
    for _ in range(limit):
        if done(s) or s.is_over:
            return
        s.apply(s.legal_actions()[0])
    raise AssertionError("the position never came")
