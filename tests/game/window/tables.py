"""Scenario helpers: set a position up by hand, play actions in notation.

``setup`` writes a cz-position/1 document and reads it with ``from_json`` (so every scenario
also exercises the JSON boundary); a title prefixed with ``~`` lies face down in its chain.
"""

from __future__ import annotations

from collections.abc import Sequence

from game.window import State, format_action, from_json, parse_action, to_json


def setup(
    chains: Sequence[Sequence[str]] = ((), ()),
    hands: Sequence[Sequence[str]] = ((), ()),
    *,
    market: Sequence[str] = (),
    spoils: Sequence[Sequence[str]] = ((), ()),
    aside: Sequence[str] = (),
    hostage: tuple[str, int] | None = None,
    hoards: tuple[int, int] = (0, 0),
    seal: int = 0,
    to_move: int = 0,
    last_action: tuple[str | None, str | None] = (None, None),
    exhausted: tuple[bool, bool] = (False, False),
    ransoms: tuple[int, int] = (0, 0),
    table: str = "deal",
) -> State:
    """A position with the given chains (innermost first), hands, hoards and Seal."""
    chain_json = [
        [{"card": t.lstrip("~"), "face": "down" if t.startswith("~") else "up"} for t in chain]
        for chain in chains
    ]
    cards = [
        *[t.lstrip("~") for chain in chains for t in chain],
        *[t for hand in hands for t in hand],
        *market,
        *[t for pile in spoils for t in pile],
        *aside,
        *([hostage[0]] if hostage else []),
    ]
    return from_json(
        {
            "format": "cz-position/1",
            "table": table,
            "cards": cards,
            "hands": [list(h) for h in hands],
            "chains": chain_json,
            "spoils": [list(s) for s in spoils],
            "market": list(market),
            "aside": list(aside),
            "hostage": None if hostage is None else {"card": hostage[0], "owner": hostage[1]},
            "hoards": list(hoards),
            "plenum": 30 - sum(hoards),
            "seal": seal,
            "to_move": to_move,
            "turn": to_move,
            "ransoms": list(ransoms),
            "last_action": list(last_action),
            "exhausted": list(exhausted),
            "pending": None,
            "closed": seal == 12,
        }
    )


def play(state: State, *actions: str) -> State:
    """Apply each action (notation) in turn; returns the same state for chaining."""
    for text in actions:
        state.apply(parse_action(state, text))
    return state


def legal(state: State) -> set[str]:
    """The legal actions of ``state`` in notation."""
    return {format_action(state, a) for a in state.legal_actions()}


def chain(state: State, seat: int) -> list[str]:
    """``seat``'s chain as titles, innermost first, ``~`` marking face-down cards."""
    return [("" if c["face"] == "up" else "~") + c["card"] for c in to_json(state)["chains"][seat]]
