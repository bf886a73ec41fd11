"""Why an action is illegal: the sentence and the section that forbid it.

Only called on the refusal path (``State.apply`` of an action not in ``legal_actions``), so it
favours plain reading over speed. It names the first rule the action breaks.
"""

from __future__ import annotations

from game.window import actions as A
from game.window import titles as T
from game.window.powers import CARD_ACTIONS, CORE_POWERS
from game.window.state import (
    CHAIN,
    HAND,
    MARKET,
    P_DRILL,
    P_PLACE,
    RANSOMS_PER_GAME,
    SPOILS,
    PendingDecision,
    State,
)

_CARD_ARGUMENT = frozenset(
    {A.BUILD, A.HOLD, A.NOGO, A.TRACE, A.EULERFUSE, A.ADMISSION, A.TRANSPORT, A.CONSTRUCT}
)


def why_illegal(state: State, action: int) -> str:
    """The rule ``action`` breaks in ``state`` (assumes it is not legal there)."""
    if state.closed:
        return "the table has closed at twelve; nothing follows (I.6, R-07)"
    kind, a, b = A.kind_of(action), A.arg_a(action), A.arg_b(action)
    if not _well_formed(kind, a, b):
        return "not an action of the notation: its arguments do not fit its kind (formats.md)"
    p = state.pending
    if p is not None:
        return _pending_reason(p)
    if kind not in A.TURN_KINDS:
        return "no decision is pending: this is a turn, take one of the actions (I.6)"
    me = state.to_move
    if state.exhausted[me] and kind == state.last_kind[me]:
        return "Exhaustion: this turn may not repeat your previous action (Book III EXHAUSTION)"
    reason = _power_reason(state, me, kind, b) if kind in CORE_POWERS else None
    if reason:
        return reason
    n = len(state.titles)
    if (a >= n and kind in _CARD_ARGUMENT) or (kind == A.CONSTRUCT and b >= n):
        return "no such card at this table (I.4, formats.md)"
    if kind in CARD_ACTIONS:
        title, section = CARD_ACTIONS[kind]
        if not state.in_force(title, me):
            return f"{T.NAMES[title]} must stand face up in your chain ({section})"
    return _specific_reason(state, me, kind, a, b)


_NO_ARGUMENTS = frozenset({A.COLLECT, A.ACCELERATE, A.EXHAUST, A.REFUSE})
_FLAG_ONLY = frozenset({A.RANSOM, A.CONVERT, A.DRILL})
_CARD_ONLY = frozenset({A.HOLD, A.TRACE, A.EULERFUSE, A.ADMISSION, A.YIELD, A.PLACE})


def _well_formed(kind: int, a: int, b: int) -> bool:
    """Whether the integer is one the notation can write (unused arguments are zero)."""
    if kind in _NO_ARGUMENTS:
        return a == b == 0
    if kind in _FLAG_ONLY:
        return a <= 1 and b == 0
    if kind in _CARD_ONLY:
        return b == 0
    if kind in (A.BUILD, A.TRANSPORT):
        return b <= 1
    if kind == A.TURN:
        return a <= 1
    if kind == A.SWAP:
        return a == 0
    return True


def _pending_reason(p: PendingDecision) -> str:
    if p[0] == P_DRILL:
        return "the No-Go drill is resolving: only 'drill success' or 'drill failure' (IV.4, R-02)"
    if p[0] == P_PLACE:
        return "a Turn is being ordered: place one of the remaining cards (Book II TURN)"
    return (
        "the defender is answering the naming: yield a card it may give up, or refuse with "
        "Refusal (I.7 CUT, Book III FORK, REFUSAL)"
    )


def _power_reason(state: State, me: int, kind: int, source: int) -> str | None:
    title, section = CORE_POWERS[kind]
    name = T.NAMES[title]
    if kind in (A.CUT, A.SWAP, A.TURN, A.NOGO):
        if source >= len(state.titles):
            return "no such card at this table (I.4, formats.md)"
        if source not in state.power_sources(title, me):
            if state.titles[source] in (T.MODEL_A, T.MODEL_B):
                return (
                    f"{state.title_of(source)} is not a face-up Model beside your {name} "
                    "(Model-A copies its inner neighbour, Model-B its outer: R-08, Q-02)"
                )
            if source != state.where[title]:
                return f"{state.title_of(source)} carries no {name} power ({section}, R-08)"
            return (
                f"{A.KIND_NAMES[kind]} needs your {name} face up, or a face-up Model beside it "
                f"named with 'with' ({section}, R-08, Q-02)"
            )
    elif not state.power_sources(title, me):
        return (
            f"{A.KIND_NAMES[kind]} needs your {name} face up, or a face-up Model beside it "
            f"({section}, R-08, Q-02)"
        )
    return None


def _specific_reason(state: State, me: int, kind: int, a: int, b: int) -> str:
    opp = 1 - me
    loc = state.loc
    if kind == A.BUILD:
        if loc[a] not in (HAND + me, MARKET):
            return f"{state.title_of(a)} is not in your hand row or the market (I.7 BUILD)"
        if b:
            return "only Alphabet in force lets a Build place at the inner end (Book III ALPHABET)"
    elif kind == A.COLLECT:
        n = state.collect_count(me)
        return (
            f"the plenum holds {state.plenum}, fewer than {n}: no partial collection (I.7 COLLECT)"
        )
    elif kind == A.CUT:
        chain = state.chains[opp]
        if not 1 <= a < len(chain):
            return f"their chain of {len(chain)} has no seam {a} (I.1 seam, I.7 CUT)"
        return (
            "the yielding card is shielded by Keeping: the seam cannot be named "
            "(I.7 CUT, Book II KEEPING)"
        )
    elif kind == A.SWAP:
        return "Faithful stands face up: the chains cannot change owners (Book III FAITHFUL)"
    elif kind == A.HOLD:
        if state.hostage >= 0:
            return "the table already holds a hostage; only one may exist (I.7 HOLD)"
        chain = state.chains[opp]
        if loc[a] != CHAIN + opp or not state.up[a]:
            return f"{state.title_of(a)} is not a face-up card in their chain (I.7 HOLD)"
        if chain.index(a) == 0:
            return "their innermost card cannot be held (I.7 HOLD)"
        return f"{state.title_of(a)} is shielded by Keeping (Book II KEEPING)"
    elif kind == A.RANSOM:
        if state.hostage < 0 or state.hostage_owner != me:
            return "the hostage is not yours: there is nothing for you to ransom (I.7 RANSOM)"
        if state.ransoms[me] >= RANSOMS_PER_GAME:
            return "each player may ransom at most twice per game (I.7 RANSOM)"
        if state.hoards[me] < state.costs[state.hostage]:
            return f"your hoard holds {state.hoards[me]}, less than the ransom (I.7 RANSOM, I.3)"
        return (
            "only your Interface in force lets a Ransom be paid to the plenum (Book III INTERFACE)"
        )
    elif kind == A.CONVERT:
        if a == 0:
            return (
                "Convert 3>7 needs 3 strokes in your hoard and 7 in the plenum once paid "
                "(I.7 CONVERT, Q-08)"
            )
        return "Convert 7>3 needs 7 strokes in your hoard (I.7 CONVERT)"
    elif kind == A.ACCELERATE:
        if state.last_kind[me] == A.ACCELERATE:
            return "you may not Accelerate twice in a row on your own turns (I.7 ACCELERATE)"
        return "their Stage stands face up: Accelerate is unavailable to you (Book III STAGE, R-09)"
    elif kind == A.TURN:
        return "Turn reorders your chain or theirs (Book II TURN)"
    elif kind == A.NOGO:
        return f"{state.title_of(a)} is not a face-up card of your opponent's (Book II NO-GO)"
    elif kind == A.TRACE:
        return f"{state.title_of(a)} is not a face-down card in your chain (Book III TRACE)"
    elif kind == A.EULERFUSE:
        if loc[a] != SPOILS + me:
            return f"{state.title_of(a)} is not among your spoils (Book III EULERFUSE)"
    elif kind == A.ADMISSION:
        return f"{state.title_of(a)} is not in the market (Book III ADMISSION)"
    elif kind == A.CONSTRUCT:
        return (
            "Constructor builds two different cards from your hand row or the market "
            "(Book III CONSTRUCTOR)"
        )
    elif kind == A.TRANSPORT:
        return f"{state.title_of(a)} is not in your chain (Book III TRANSPORT)"
    return "not among the legal actions of this position (I.6, I.7)"
