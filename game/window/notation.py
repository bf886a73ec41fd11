"""The text notation of actions (docs/formats.md, "Table records").

One action is one line of lower-case words and titles as printed, e.g. ``build Tally``,
``cut 2``, ``cut 1 with Model-A``, ``swap with Model-B``, ``nogo Exchange``, ``yield Fork``,
``drill success``.
Titles identify cards because a table holds one copy of each title (Q-05). ``mine`` and
``theirs`` are read from the deciding seat. Parsing needs the position (titles, the deciding
seat); it never judges legality — :meth:`State.apply` does, with the rule that forbids.
"""

from __future__ import annotations

from game.window import actions as A
from game.window import titles as T
from game.window.errors import NotationError
from game.window.state import State

MAX_ACTION_CHARS = 80
_TITLES_LOWER = {name.lower(): name for name in T.NAMES}
#: The card whose power a spend action uses unless ``with <Model>`` names another.
_DEFAULT_SOURCE = {A.CUT: "Separation", A.SWAP: "Reflection", A.TURN: "Turn", A.NOGO: "No-Go"}
_CONVERT = {"3>7": 0, "7>3": 1}
_ENDS = {"outer": 0, "inner": 1}
_DRILL = {"success": 1, "failure": 0}


def _actor(state: State) -> int:
    player = state.current_player
    return player if player >= 0 else state.to_move


def format_action(state: State, action: int) -> str:
    """The notation of ``action`` in ``state`` (the position it is taken from)."""
    kind, a, b = A.kind_of(action), A.arg_a(action), A.arg_b(action)
    name = A.KIND_NAMES.get(kind, f"kind{kind}")
    n = len(state.titles)

    def title(card: int) -> str:
        return state.title_of(card) if card < n else f"#{card}"

    if kind == A.BUILD:
        return f"build {title(a)}" + (" inner" if b else "")
    if kind in (A.HOLD, A.TRACE, A.EULERFUSE, A.ADMISSION, A.YIELD, A.PLACE):
        return f"{name} {title(a)}"
    if kind == A.CUT:
        return f"cut {a}" + _with(state, kind, b)
    if kind == A.SWAP:
        return "swap" + _with(state, kind, b)
    if kind == A.NOGO:
        return f"nogo {title(a)}" + _with(state, kind, b)
    if kind == A.TURN:
        whose = "mine" if a == _actor(state) else "theirs"
        return f"turn {whose}" + _with(state, kind, b)
    if kind == A.RANSOM:
        return "ransom to plenum" if a else "ransom"
    if kind == A.CONVERT:
        return "convert 7>3" if a else "convert 3>7"
    if kind == A.CONSTRUCT:
        return f"construct {title(a)} {title(b)}"
    if kind == A.TRANSPORT:
        return f"transport {title(a)} {'inner' if b else 'outer'}"
    if kind == A.DRILL:
        return "drill success" if a else "drill failure"
    return name


def _with(state: State, kind: int, source: int) -> str:
    if source < len(state.titles) and state.title_of(source) == _DEFAULT_SOURCE[kind]:
        return ""
    return f" with {state.title_of(source)}" if source < len(state.titles) else f" with #{source}"


def parse_action(state: State, text: str) -> int:
    """The action ``text`` names in ``state``; :class:`NotationError` if it names none."""
    if len(text) > MAX_ACTION_CHARS:
        raise NotationError(f"an action is at most {MAX_ACTION_CHARS} characters")
    words = text.split()
    if not words:
        raise NotationError("an empty line is not an action")
    kind = A.KIND_BY_NAME.get(words[0].lower())
    if kind is None:
        raise NotationError(f"{text!r}: unknown action {words[0]!r}")
    args = words[1:]
    source = 0
    if kind in _DEFAULT_SOURCE:
        if len(args) >= 2 and args[-2].lower() == "with":
            source = _card(state, args[-1], text)
            args = args[:-2]
        else:
            source = _card(state, _DEFAULT_SOURCE[kind], text)
    try:
        return _parse_args(state, kind, args, source, text)
    except (ValueError, KeyError, IndexError):
        raise NotationError(f"{text!r}: malformed {A.KIND_NAMES[kind]} action") from None


def _parse_args(state: State, kind: int, args: list[str], source: int, text: str) -> int:
    def arity(n: int) -> None:
        if len(args) != n:
            raise ValueError

    if kind in (A.COLLECT, A.ACCELERATE, A.EXHAUST, A.REFUSE):
        arity(0)
        return A.encode(kind)
    if kind == A.SWAP:
        arity(0)
        return A.encode(kind, 0, source)
    if kind == A.BUILD:
        if len(args) == 2 and args[1].lower() == "inner":
            return A.encode(kind, _card(state, args[0], text), 1)
        arity(1)
        return A.encode(kind, _card(state, args[0], text))
    if kind in (A.HOLD, A.TRACE, A.EULERFUSE, A.ADMISSION, A.YIELD, A.PLACE):
        arity(1)
        return A.encode(kind, _card(state, args[0], text))
    if kind == A.CUT:
        arity(1)
        seam = int(args[0])
        if not 1 <= seam < 64:
            raise ValueError
        return A.encode(kind, seam, source)
    if kind == A.NOGO:
        arity(1)
        return A.encode(kind, _card(state, args[0], text), source)
    if kind == A.TURN:
        arity(1)
        whose = {"mine": 0, "theirs": 1}[args[0].lower()]
        actor = _actor(state)
        return A.encode(kind, actor if whose == 0 else 1 - actor, source)
    if kind == A.RANSOM:
        if args:
            if [w.lower() for w in args] != ["to", "plenum"]:
                raise ValueError
            return A.encode(kind, 1)
        return A.encode(kind)
    if kind == A.CONVERT:
        arity(1)
        return A.encode(kind, _CONVERT[args[0]])
    if kind == A.CONSTRUCT:
        arity(2)
        return A.encode(kind, _card(state, args[0], text), _card(state, args[1], text))
    if kind == A.TRANSPORT:
        arity(2)
        return A.encode(kind, _card(state, args[0], text), _ENDS[args[1].lower()])
    if kind == A.DRILL:
        arity(1)
        return A.encode(kind, _DRILL[args[0].lower()])
    raise ValueError  # pragma: no cover - every kind is handled above


def _card(state: State, word: str, text: str) -> int:
    title = _TITLES_LOWER.get(word.lower())
    if title is None:
        raise NotationError(f"{text!r}: no certificate is called {word!r}")
    card = state.card_of(title)
    if card < 0:
        raise NotationError(f"{text!r}: {title} is not at this table")
    return card
