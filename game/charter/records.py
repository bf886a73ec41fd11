"""Game records: the card set, the charter, the decks, the seed and the actions in notation,
which replay to the same position (docs/charter.md, "Records")::

    {"format": "charter-record/1", "card_set": "sample", "charter": "skirmish",
     "decks": [["Keep", "Keep", ...], ["Harbor", ...]], "seed": 7, "max_turns": 200,
     "actions": ["keep", "keep", "play Keep#2", ...],
     "result": {"winner": 0, "reason": "seat 1 was dealt damage while exposed ..."}}

Replaying checks every deck against the charter first, then refuses the first illegal action
with :class:`IllegalActionError` (its step and why). A finished game's record states its
``result``: the winner (or null) and why the game ended (:func:`outcome`); replaying checks it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.charter import library
from game.charter.charters import Deck, check_deck
from game.charter.errors import CardDataError, IllegalActionError, NotationError
from game.charter.notation import MAX_ACTION_CHARS, parse_action
from game.charter.opening import MAX_CARDS, MAX_SEATS, new_game
from game.charter.schema import Name
from game.charter.state import DEFAULT_MAX_TURNS, State
from ledger.errors import SchemaError

FORMAT = "charter-record/1"
MAX_ACTIONS = 100_000


class Result(BaseModel):
    """How a finished game ended: the winning seat, or None, and why."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    winner: int | None = Field(ge=0, lt=MAX_SEATS)
    reason: Annotated[str, Field(min_length=1, max_length=500)]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    format: Literal["charter-record/1"]
    card_set: Name
    charter: Name
    decks: Annotated[
        list[Annotated[list[Name], Field(max_length=MAX_CARDS)]],
        Field(min_length=2, max_length=MAX_SEATS),
    ]
    seed: int = Field(ge=0, lt=2**64)
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=100_000)
    actions: list[Annotated[str, Field(max_length=MAX_ACTION_CHARS)]] = Field(
        max_length=MAX_ACTIONS
    )
    result: Result | None = None


def outcome(state: State) -> dict[str, Any] | None:
    """How ``state``'s game ended — ``{"winner": seat or None, "reason": ...}`` — or None while
    it goes on. Every end has its reason: the last player standing, each other seat defeated
    (Defense and defeat, C-17), or the table's turn limit with no winner (C-19)."""
    if not state.is_over:
        return None
    defeated = [p for p in range(state.n) if not state.alive[p]]
    fallen = ", ".join(f"seat {p}" for p in defeated)
    how = "was" if len(defeated) == 1 else "were"
    if state.winner >= 0:
        reason = (
            f"seat {state.winner} is the last player standing: {fallen} {how} dealt damage "
            "while exposed and defeated (Defense and defeat)"
        )
        return {"winner": state.winner, "reason": reason}
    if state.turns > state.max_turns:
        limit = f"{state.max_turns} turn" + ("s" if state.max_turns != 1 else "")
        reason = (
            f"no winner: the table's limit of {limit} was reached "
            + ("with no player defeated" if not defeated else f"after {fallen} {how} defeated")
            + " (C-19)"
        )
        return {"winner": None, "reason": reason}
    return {"winner": None, "reason": f"no winner: {fallen} {how} defeated together (C-17)"}


def parse_record(data: Any) -> Record:
    """The record ``data`` holds; :class:`SchemaError` if it is not one."""
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "record"
        raise SchemaError(f"not a charter record: {where}: {first['msg']}") from None


def opening(record: Record) -> State:
    """The opening position of ``record``: each deck must satisfy the packaged charter."""
    if record.card_set not in library.card_set_names():
        raise CardDataError(f"no packaged card set called {record.card_set!r}")
    cards = library.card_set(record.card_set)
    charter = library.charter(record.charter)
    for seat, names in enumerate(record.decks):
        counts: dict[str, int] = {}
        for name in names:
            counts[name] = counts.get(name, 0) + 1
        deck = Deck(f"seat-{seat}", charter.name, tuple(counts.items()), {})
        check_deck(deck, charter, cards)
    return new_game(cards, charter, [list(d) for d in record.decks], record.seed, record.max_turns)


def replay(record: Record) -> State:
    """The position after every action of ``record``, each checked against the rules, and its
    stated ``result`` against how the game ended (:class:`SchemaError` if they differ)."""
    state = opening(record)
    for text in record.actions:
        try:
            action = parse_action(state, text)
        except NotationError as exc:
            raise IllegalActionError(text, state.steps + 1, exc.diagnostics()) from None
        state.apply(action)
    if record.result is not None:
        ended = outcome(state)
        if ended is None:
            raise SchemaError("not a charter record: result: the game is not over")
        if ended != record.result.model_dump():
            raise SchemaError(f"not a charter record: result: the game ends {ended['reason']}")
    return state


def record_json(
    card_set: str,
    charter: str,
    decks: list[list[str]],
    seed: int,
    actions: list[str],
    max_turns: int = DEFAULT_MAX_TURNS,
    result: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A record of a game (actions in notation, as :func:`format_action` wrote them); a
    finished game's carries its ``result`` (:func:`outcome`)."""
    record: dict[str, Any] = {
        "format": FORMAT,
        "card_set": card_set,
        "charter": charter,
        "decks": [list(d) for d in decks],
        "seed": seed,
        "max_turns": max_turns,
        "actions": list(actions),
    }
    if result is not None:
        record["result"] = dict(result)
    return record
