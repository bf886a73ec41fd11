"""The text notation of actions (docs/charter.md, "Action notation").

One action is one line: a verb and its arguments, cards written ``NAME#ID`` (the name as
printed, ``#``, the card's id in this game: copies share a name, never an id), identities by
name, seats as ``seat N``. Examples: ``play Keep#3``, ``play Wall#4 on Keep#3``,
``play Bolt#7 at Raider#25``, ``use Lancer#9 1 at Squire#30``, ``attack Raider#6 at Keep#22``,
``attack Raider#6 at seat 1``, ``attacks done``, ``block Wall#4 on Raider#25``, ``blocks done``,
``deal Knight#8 to Wall#30``, ``produce Keep#3``, ``pay stone``, ``consume Squire#5``,
``upkeep Knight#8``, ``neglect Knight#8``, ``unsupport Tower#5``, ``target Squire#30``,
``keep``, ``mulligan``, ``pass``. Parsing never judges legality: :meth:`State.apply` does.
"""

from __future__ import annotations

from collections.abc import Callable

from game.charter import actions as A
from game.charter.errors import NotationError
from game.charter.state import State

MAX_ACTION_CHARS = 120
_BARE = {"pass": A.PASS, "keep": A.KEEP, "mulligan": A.MULLIGAN}
_DONE = {"attacks": A.ATTACKS_DONE, "blocks": A.BLOCKS_DONE}
_ONE_CARD = {
    "produce": A.PRODUCE,
    "consume": A.CONSUME,
    "upkeep": A.UPKEEP,
    "neglect": A.NEGLECT,
    "unsupport": A.UNSUPPORT,
    "target": A.TARGET,
}
_PREPOSITION = {A.PLAY: None, A.ATTACK: "at", A.BLOCK: "on", A.DEAL: "to"}


def format_action(state: State, action: int) -> str:
    """The notation of ``action`` in ``state`` (the position it is taken from)."""
    kind, a, b, c = A.kind_of(action), A.arg_a(action), A.arg_b(action), A.arg_c(action)
    name = A.KIND_NAMES.get(kind, f"kind{kind}")
    card = _card_name(state)
    if kind in _BARE.values():
        return name
    if kind in _DONE.values():
        return f"{name} done"
    if kind in _ONE_CARD.values():
        return f"{name} {card(a)}"
    if kind == A.PAY:
        identities = state.card_set.identities
        return f"pay {identities[a] if a < len(identities) else f'#{a}'}"
    if kind == A.PLAY:
        if b == 0:
            return f"play {card(a)}"
        chosen = b - 1
        verb = "on" if _hosts(state, a) else "at"
        return f"play {card(a)} {verb} {card(chosen)}"
    if kind == A.USE:
        text = f"use {card(a)} {b + 1}"
        return text + (f" at {card(c - 1)}" if c else "")
    if kind == A.ATTACK:
        return f"attack {card(a)} at " + (f"seat {b}" if c else card(b))
    if kind == A.BLOCK:
        return f"block {card(a)} on {card(b)}"
    if kind == A.DEAL:
        return f"deal {card(a)} to {card(b)}"
    return f"{name} {a} {b} {c}"


def _card_name(state: State) -> Callable[[int], str]:
    def card(i: int) -> str:
        return state.name(i) if i < len(state.defs) else f"#{i}"

    return card


def _hosts(state: State, card: int) -> bool:
    """A structure is played on its location and an Affix card on its host; others at."""
    if card >= len(state.defs):
        return False
    d = state.defs[card]
    return d.type == 1 or any(x.keyword == "Affix" for x in d.abilities)


def parse_action(state: State, text: str) -> int:
    """The action ``text`` names in ``state``; :class:`NotationError` if it names none."""
    if len(text) > MAX_ACTION_CHARS:
        raise NotationError(f"an action is at most {MAX_ACTION_CHARS} characters")
    words = text.split()
    if not words:
        raise NotationError("an empty line is not an action")
    try:
        return _parse(state, words)
    except (ValueError, IndexError, KeyError):
        raise NotationError(f"{text!r} is not an action of the charter notation") from None


def _parse(state: State, words: list[str]) -> int:
    verb, args = words[0].lower(), words[1:]
    enc = A.encode

    def card(word: str) -> int:
        name, _, number = word.rpartition("#")
        i = int(number)
        if not 0 <= i < len(state.defs) or state.defs[i].name.lower() != name.lower():
            raise NotationError(f"{word!r}: no card of that name and id in this game")
        return i

    def arity(n: int) -> None:
        if len(args) != n:
            raise ValueError

    if verb in _BARE:
        arity(0)
        return _BARE[verb]
    if verb in _DONE:
        arity(1)
        if args[0].lower() != "done":
            raise ValueError
        return _DONE[verb]
    if verb in _ONE_CARD:
        arity(1)
        return enc(_ONE_CARD[verb], card(args[0]))
    if verb == "pay":
        arity(1)
        return enc(A.PAY, list(state.card_set.identities).index(args[0].lower()))
    if verb == "play":
        if len(args) == 1:
            return enc(A.PLAY, card(args[0]))
        arity(3)
        if args[1].lower() not in ("on", "at"):
            raise ValueError
        return enc(A.PLAY, card(args[0]), card(args[2]) + 1)
    if verb == "use":
        index = int(args[1]) - 1
        if not 0 <= index < 255:
            raise ValueError
        if len(args) == 2:
            return enc(A.USE, card(args[0]), index)
        arity(4)
        if args[2].lower() != "at":
            raise ValueError
        return enc(A.USE, card(args[0]), index, card(args[3]) + 1)
    if verb == "attack":
        if len(args) == 4 and args[1].lower() == "at" and args[2].lower() == "seat":
            seat = int(args[3])
            if not 0 <= seat < state.n:
                raise ValueError
            return enc(A.ATTACK, card(args[0]), seat, 1)
        arity(3)
        if args[1].lower() != "at":
            raise ValueError
        return enc(A.ATTACK, card(args[0]), card(args[2]))
    if verb in ("block", "deal"):
        arity(3)
        kind = A.BLOCK if verb == "block" else A.DEAL
        if args[1].lower() != _PREPOSITION[kind]:
            raise ValueError
        return enc(kind, card(args[0]), card(args[2]))
    raise ValueError
