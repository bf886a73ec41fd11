"""The invariants a charter position keeps at every step of any game, as one check the random
games (test_random_games.py) and the trigger tests (test_triggers.py) both run."""

from __future__ import annotations

from game.charter.board import extent, supported_size
from game.charter.cards import EDICT, LOCATION, STRUCTURE
from game.charter.state import ANCHORED, BOARD, CONSTRUCTED, DECK, DISCARD, HAND, STACK, State


def check_invariants(s: State) -> None:
    """The invariants a position keeps at every step of a random game, checked on one."""
    # Every card in exactly one zone or pile, and its place code says which.
    seen: dict[int, int] = {}
    for code, piles in ((DECK, s.decks), (HAND, s.hands), (DISCARD, s.discards)):
        for seat, pile in enumerate(piles):
            for c in pile:
                assert c not in seen
                assert s.owner[c] == seat  # Control and ownership: piles are the owner's
                seen[c] = code
    for c in s.board:
        assert c not in seen
        seen[c] = BOARD
    for item in s.stack:
        if item[0] == 0:
            assert item[1] not in seen
            seen[item[1]] = STACK
    pending = s.pending
    if pending is not None and pending[0] == 1 and pending[6][0] == "card":
        seen[pending[6][1]] = STACK  # paid for, on its way to the stack
    assert sorted(seen) == list(range(len(s.defs)))
    assert all(s.place[c] == code for c, code in seen.items())
    # Control follows zones: a bonded card has its host's controller.
    for c in s.board:
        h = s.host[c]
        if h >= 0:
            assert s.place[h] == BOARD
            assert s.ctrl[c] == s.ctrl[h]
        else:
            assert s.ctrl[c] == s.free_ctrl[c]
    if s.dirty or (pending is not None and pending[0] == 6):
        return  # mid-check: a location's controller is choosing (Construction)
    for c in s.board:
        t = s.defs[c].type
        assert t != EDICT or s.bond[c] == ANCHORED  # no unanchored edict stands
        assert t != STRUCTURE or s.bond[c] == CONSTRUCTED  # no unsupported structure survives
        if t == LOCATION:
            assert supported_size(s, c) <= extent(s, c)
