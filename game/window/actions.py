"""Actions as small integers: the engine's hot path never builds an object per action.

An action is ``kind | a << 5 | b << 11``: ``kind`` is one of the constants below and ``a``, ``b``
are small non-negative arguments (a card id, a seam, a seat, a flag), each below 64. The text
notation that people and records use lives in :mod:`game.window.notation`.

Kinds 0–15 are turns (what a seat does on its turn: the eight actions of I.7 and the card
powers used as actions); 16–19 are decisions inside an action (a defender's answer, the order a
Turn chooses, the No-Go drill's outcome), which never count as a turn.
"""

from __future__ import annotations

# The eight actions of I.7.
BUILD = 0  # a = card id, b = 1 to place at the inner end (Alphabet)
COLLECT = 1
CUT = 2  # a = seam (1-based from the axis), b = the card whose power cuts (and is spent)
SWAP = 3  # b = the card whose power swaps: Reflection, or a Model (which is spent, Q-02)
HOLD = 4  # a = card id named as hostage
RANSOM = 5  # a = 1 to pay the plenum (Interface)
CONVERT = 6  # a = 0: give 3 take 7; a = 1: give 7 take 3
ACCELERATE = 7
# The card powers used as actions (Books II and III).
TURN = 8  # a = the seat whose chain is reordered, b = the card whose power turns (spent)
NOGO = 9  # a = challenged card id, b = the card whose power challenges (spent)
TRACE = 10  # a = face-down card id raised
EULERFUSE = 11  # a = spoils card id returned
ADMISSION = 12  # a = market card id taken
CONSTRUCT = 13  # a = first card built, b = second card built
TRANSPORT = 14  # a = card id moved, b = 1 for the inner end, 0 for the outer
EXHAUST = 15
# Decisions inside an action.
YIELD = 16  # a = the card the defender gives up (Cut: yielding card or Fork; Hold: named card)
REFUSE = 17  # the defender spends Refusal
PLACE = 18  # a = the next card, from the axis outward, of the chain a Turn reorders
DRILL = 19  # a = 1 success, 0 failure (the caller supplies it: IV.4, R-02)

TURN_KINDS = frozenset(range(16))

KIND_NAMES: dict[int, str] = {
    BUILD: "build",
    COLLECT: "collect",
    CUT: "cut",
    SWAP: "swap",
    HOLD: "hold",
    RANSOM: "ransom",
    CONVERT: "convert",
    ACCELERATE: "accelerate",
    TURN: "turn",
    NOGO: "nogo",
    TRACE: "trace",
    EULERFUSE: "eulerfuse",
    ADMISSION: "admit",
    CONSTRUCT: "construct",
    TRANSPORT: "transport",
    EXHAUST: "exhaust",
    YIELD: "yield",
    REFUSE: "refuse",
    PLACE: "place",
    DRILL: "drill",
}
KIND_BY_NAME: dict[str, int] = {name: kind for kind, name in KIND_NAMES.items()}


def encode(kind: int, a: int = 0, b: int = 0) -> int:
    """The integer of an action (arguments must each be below 64)."""
    return kind | a << 5 | b << 11


def kind_of(action: int) -> int:
    return action & 31


def arg_a(action: int) -> int:
    return action >> 5 & 63


def arg_b(action: int) -> int:
    return action >> 11 & 63
