"""Actions as small integers: ``kind | a << 5 | b << 13 | c << 21``.

``kind`` is one of the constants below; ``a``, ``b``, ``c`` are small non-negative arguments
(a card id, an ability index, an identity, a seat), each below 256. The text notation people
and records use lives in :mod:`game.charter.notation` (docs/charter.md, "Action notation").
"""

from __future__ import annotations

PASS = 0  # give up priority (Resolution)
KEEP = 1  # keep the hand (Game setup)
MULLIGAN = 2  # return the hand, reshuffle, redraw one card fewer (Game setup)
PLAY = 3  # a = card in hand, b = chosen host/target + 1 (0: none)
PRODUCE = 4  # a = producer committed while paying (Commitment, ruling C-01)
USE = 5  # a = card, b = ability index, c = chosen card + 1 (0: none)
PAY = 6  # a = identity of a pooled resource filling the next requirement (Resources, C-01)
CONSUME = 7  # a = card consumed as payment (Consume)
UPKEEP = 8  # a = card whose obligation is paid (Maintenance)
NEGLECT = 9  # a = card whose obligation goes unpaid (Maintenance)
ATTACK = 10  # a = attacker, b = location attacked, or seat attacked when c = 1 (Combat)
ATTACKS_DONE = 11  # the attackers are declared (Combat)
BLOCK = 12  # a = blocker, b = attacker (Defense and defeat)
BLOCKS_DONE = 13  # this defender's blockers are declared
DEAL = 14  # a = source, b = receiver: one point of the source's strength (Combat)
UNSUPPORT = 15  # a = structure the location's controller lets go (Construction)
TARGET = 16  # a = card a triggered ability chooses as it goes on the stack (Triggered, C-33)

KIND_NAMES: dict[int, str] = {
    PASS: "pass",
    KEEP: "keep",
    MULLIGAN: "mulligan",
    PLAY: "play",
    PRODUCE: "produce",
    USE: "use",
    PAY: "pay",
    CONSUME: "consume",
    UPKEEP: "upkeep",
    NEGLECT: "neglect",
    ATTACK: "attack",
    ATTACKS_DONE: "attacks",
    BLOCK: "block",
    BLOCKS_DONE: "blocks",
    DEAL: "deal",
    UNSUPPORT: "unsupport",
    TARGET: "target",
}


def encode(kind: int, a: int = 0, b: int = 0, c: int = 0) -> int:
    """The integer of an action (each argument below 256)."""
    return kind | a << 5 | b << 13 | c << 21


def kind_of(action: int) -> int:
    return action & 31


def arg_a(action: int) -> int:
    return action >> 5 & 255


def arg_b(action: int) -> int:
    return action >> 13 & 255


def arg_c(action: int) -> int:
    return action >> 21 & 255
