"""Which title's power each action is, and the section of the book that gives it: one table
for the engine's refusals (``game.window.refusals``) and the table's teaching (``cz``'s
``card`` and ``why``)."""

from __future__ import annotations

from game.window import actions as A
from game.window import titles as T

#: The actions a card standing face up in the actor's chain gives (I.7, Book II).
CORE_POWERS: dict[int, tuple[int, str]] = {
    A.COLLECT: (T.PAIRING, "I.7 COLLECT"),
    A.CUT: (T.SEPARATION, "I.7 CUT"),
    A.SWAP: (T.REFLECTION, "I.7 SWAP"),
    A.HOLD: (T.ESCROW, "I.7 HOLD"),
    A.CONVERT: (T.EXCHANGE, "I.7 CONVERT"),
    A.TURN: (T.TURN, "Book II TURN"),
    A.NOGO: (T.NOGO, "Book II NO-GO"),
}
#: The actions of a Book III card of one's own.
CARD_ACTIONS: dict[int, tuple[int, str]] = {
    A.TRACE: (T.TRACE, "Book III TRACE"),
    A.EULERFUSE: (T.EULERFUSE, "Book III EULERFUSE"),
    A.ADMISSION: (T.ADMISSION, "Book III ADMISSION"),
    A.CONSTRUCT: (T.CONSTRUCTOR, "Book III CONSTRUCTOR"),
    A.TRANSPORT: (T.TRANSPORT, "Book III TRANSPORT"),
    A.EXHAUST: (T.EXHAUSTION, "Book III EXHAUSTION"),
}
#: Every action that is a title's power: the title and its section.
POWER_OF: dict[int, tuple[int, str]] = {**CORE_POWERS, **CARD_ACTIONS}
