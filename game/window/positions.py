"""Positions as JSON (docs/formats.md, "Table records"): ``to_json`` and ``from_json``.

The JSON names cards by title (a table holds one copy of each, Q-05) and lists ``cards`` in
card-id order, so ``from_json(to_json(s)) == s`` exactly and ``to_json(from_json(j)) == j`` for
every position the engine can reach. ``from_json`` reads untrusted input: any shape, count or
consistency fault is a :class:`ledger.errors.SchemaError`, never a partial position.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.window import actions as A
from game.window import titles as T
from game.window.state import (
    ASIDE,
    CHAIN,
    HAND,
    HOSTAGE,
    MARKET,
    P_CUT,
    P_DRILL,
    P_HOLD,
    P_PLACE,
    RANSOMS_PER_GAME,
    SEAL_CLOSE,
    SPOILS,
    STROKES,
    State,
)
from ledger.errors import SchemaError

FORMAT = "cz-position/1"
MAX_CARDS = 63
_TURN_KIND_NAMES = {A.KIND_NAMES[k]: k for k in A.TURN_KINDS}
_STEPS = {P_CUT: "cut", P_HOLD: "hold", P_DRILL: "drill", P_PLACE: "place"}

Title = str
Seat = Literal[0, 1]
T_ = TypeVar("T_")
#: One value per seat, seat 0 first.
Pair = Annotated[list[T_], Field(min_length=2, max_length=2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ChainCard(_Strict):
    card: Title
    face: Literal["up", "down"]


class Hostage(_Strict):
    card: Title
    owner: Seat


class Pending(_Strict):
    step: Literal["cut", "hold", "drill", "place"]
    actor: Seat
    card: Title | None = None  # hold, drill: the named card
    source: Title | None = None  # cut: the card whose power cuts
    candidates: list[Title] | None = None  # cut: the cards that may yield
    chain: Seat | None = None  # place: the seat whose chain is reordered
    placed: list[Title] | None = None
    remaining: list[Title] | None = None


class Position(_Strict):
    format: Literal["cz-position/1"]
    table: Literal["base", "market", "portfolio", "deal"]
    cards: list[Title] = Field(max_length=MAX_CARDS)
    hands: Pair[list[Title]]
    chains: Pair[list[ChainCard]]
    spoils: Pair[list[Title]]
    market: list[Title]
    aside: list[Title]
    hostage: Hostage | None
    hoards: Pair[int]
    plenum: int
    seal: int
    to_move: Seat
    turn: int = Field(ge=0)
    ransoms: Pair[int]
    last_action: Pair[str | None]
    exhausted: Pair[bool]
    pending: Pending | None
    closed: bool


def to_json(state: State) -> dict[str, Any]:
    """The position as a JSON-ready dict (see docs/formats.md)."""
    name = state.title_of

    def names(cards: list[int] | tuple[int, ...]) -> list[str]:
        return [name(c) for c in cards]

    return {
        "format": FORMAT,
        "table": state.table_kind,
        "cards": names(range(len(state.titles))),  # type: ignore[arg-type]
        "hands": [names(state.hands[0]), names(state.hands[1])],
        "chains": [
            [{"card": name(c), "face": "up" if state.up[c] else "down"} for c in chain]
            for chain in state.chains
        ],
        "spoils": [names(state.spoils[0]), names(state.spoils[1])],
        "market": names(state.market),
        "aside": names(state.aside),
        "hostage": None
        if state.hostage < 0
        else {"card": name(state.hostage), "owner": state.hostage_owner},
        "hoards": list(state.hoards),
        "plenum": state.plenum,
        "seal": state.seal,
        "to_move": state.to_move,
        "turn": state.turn,
        "ransoms": list(state.ransoms),
        "last_action": [None if k < 0 else A.KIND_NAMES[k] for k in state.last_kind],
        "exhausted": [bool(x) for x in state.exhausted],
        "pending": _pending_json(state),
        "closed": state.closed,
    }


def _pending_json(state: State) -> dict[str, Any] | None:
    p = state.pending
    if p is None:
        return None
    name = state.title_of
    out: dict[str, Any] = {"step": _STEPS[p[0]], "actor": p[1]}
    if p[0] == P_CUT:
        out["source"] = name(p[2])
        out["candidates"] = [name(c) for c in p[3]]
    elif p[0] == P_PLACE:
        out["chain"] = p[2]
        out["placed"] = [name(c) for c in p[3]]
        out["remaining"] = [name(c) for c in p[4]]
    else:
        out["card"] = name(p[2])
    return out


def from_json(data: Any) -> State:
    """The position ``data`` describes; :class:`SchemaError` for anything inconsistent."""
    try:
        pos = Position.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "position"
        raise SchemaError(f"not a position: {where}: {first['msg']}") from None
    return _build(pos)


def _build(pos: Position) -> State:
    if any(t not in T.INDEX for t in pos.cards):
        bad = next(t for t in pos.cards if t not in T.INDEX)
        raise SchemaError(f"not a position: no playing certificate is called {bad!r}")
    if len(set(pos.cards)) != len(pos.cards):
        raise SchemaError("not a position: a title is listed twice in cards (Q-05)")
    ids = {t: i for i, t in enumerate(pos.cards)}
    n = len(pos.cards)

    def card(title: str) -> int:
        try:
            return ids[title]
        except KeyError:
            raise SchemaError(f"not a position: {title!r} is not among its cards") from None

    loc = bytearray([255] * n)
    up = bytearray(n)

    def place(cards: list[int], where: int) -> None:
        for c in cards:
            if loc[c] != 255:
                raise SchemaError(f"not a position: {pos.cards[c]} lies in two places")
            loc[c] = where

    hands = [[card(t) for t in h] for h in pos.hands]
    spoils = [[card(t) for t in s] for s in pos.spoils]
    chains = [[card(cc.card) for cc in ch] for ch in pos.chains]
    market = [card(t) for t in pos.market]
    aside = [card(t) for t in pos.aside]
    for seat in (0, 1):
        place(hands[seat], HAND + seat)
        place(chains[seat], CHAIN + seat)
        place(spoils[seat], SPOILS + seat)
        for cc in pos.chains[seat]:
            up[ids[cc.card]] = cc.face == "up"
    place(market, MARKET)
    place(aside, ASIDE)
    hostage = owner = -1
    if pos.hostage is not None:
        hostage, owner = card(pos.hostage.card), pos.hostage.owner
        place([hostage], HOSTAGE)
    if 255 in loc:
        raise SchemaError(f"not a position: {pos.cards[loc.index(255)]} lies nowhere")
    if min(*pos.hoards, pos.plenum) < 0 or sum(pos.hoards) + pos.plenum != STROKES:
        raise SchemaError(f"not a position: the strokes do not sum to {STROKES} (I.2)")
    if not 0 <= pos.seal <= SEAL_CLOSE or pos.closed != (pos.seal == SEAL_CLOSE):
        raise SchemaError("not a position: the Seal shows 0 to 12 and the table closes at 12 (I.1)")
    if not pos.closed and pos.to_move != pos.turn % 2:
        raise SchemaError(
            "not a position: the seats alternate, so to_move is the turn's parity (I.6)"
        )
    if any(not 0 <= r <= RANSOMS_PER_GAME for r in pos.ransoms):
        raise SchemaError("not a position: a seat ransoms at most twice per game (I.7)")
    last = []
    for name in pos.last_action:
        if name is not None and name not in _TURN_KIND_NAMES:
            raise SchemaError(f"not a position: {name!r} is not an action kind")
        last.append(-1 if name is None else _TURN_KIND_NAMES[name])

    s = State.__new__(State)
    s.titles = tuple(T.INDEX[t] for t in pos.cards)
    s.costs = tuple(T.COSTS[t] for t in s.titles)
    where = [-1] * T.COUNT
    for c, t in enumerate(s.titles):
        where[t] = c
    s.where = tuple(where)
    s.table_kind = pos.table
    s.aside = tuple(aside)
    s.loc = loc
    s.up = up
    s.hands, s.chains, s.spoils, s.market = hands, chains, spoils, market
    s.hoards = list(pos.hoards)
    s.plenum = pos.plenum
    s.seal = pos.seal
    s.to_move = pos.to_move
    s.turn = pos.turn
    s.hostage, s.hostage_owner = hostage, owner
    s.ransoms = list(pos.ransoms)
    s.last_kind = last
    s.exhausted = [int(x) for x in pos.exhausted]
    s.closed = pos.closed
    s._legal = None
    if hostage >= 0 and s.escrow_controller() != 1 - owner:
        raise SchemaError(
            "not a position: a hostage sits only under Escrow in force opposite its owner (I.7)"
        )
    s.pending = _pending_from(pos.pending, s, card)
    return s


def _pending_from(p: Pending | None, s: State, card) -> tuple | None:
    if p is None:
        return None
    if s.closed:
        raise SchemaError("not a position: a closed table has no pending decision")
    actor, defender = p.actor, 1 - p.actor
    try:
        if p.step == "cut":
            src = card(p.source)  # type: ignore[arg-type]
            candidates = tuple(card(t) for t in p.candidates)  # type: ignore[union-attr]
            ok = s.loc[src] == CHAIN + actor and all(
                s.loc[c] == CHAIN + defender for c in candidates
            )
            ok = ok and 0 < len(candidates) <= 2
            result: tuple = (P_CUT, actor, src, candidates)
        elif p.step == "place":
            placed = tuple(card(t) for t in p.placed)  # type: ignore[union-attr]
            remaining = tuple(card(t) for t in p.remaining)  # type: ignore[union-attr]
            chain = s.chains[p.chain]  # type: ignore[index]
            ok = len(remaining) > 1 and sorted(placed + remaining) == sorted(chain)
            result = (P_PLACE, actor, p.chain, placed, remaining)
        else:
            target = card(p.card)  # type: ignore[arg-type]
            ok = s.loc[target] == CHAIN + defender and s.up[target] == 1
            result = (P_HOLD if p.step == "hold" else P_DRILL, actor, target)
    except (TypeError, IndexError):
        ok = False
    if not ok:
        raise SchemaError(f"not a position: the pending {p.step} does not fit the table")
    return result
