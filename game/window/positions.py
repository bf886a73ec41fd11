"""Positions as JSON (docs/formats.md, "Table records"): ``to_json`` and ``from_json``.

The JSON names cards by title (a table holds one copy of each, Q-05) and lists ``cards`` in
card-id order, so ``from_json(to_json(s)) == s`` exactly and ``to_json(from_json(j)) == j`` for
every position the engine can reach. ``from_json`` reads untrusted input: any shape, count or
consistency fault is a :class:`ledger.errors.SchemaError`, never a partial position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.window import actions as A
from game.window import titles as T
from game.window.convening import KIND_TITLES, MARKET_DEAL, PORTFOLIO_POOL
from game.window.records import MAX_ACTIONS
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
    PendingCut,
    PendingDecision,
    PendingDrill,
    PendingHold,
    PendingPlace,
    State,
)
from ledger.errors import SchemaError

FORMAT = "cz-position/1"
MAX_CARDS = 63
_TURN_KIND_NAMES = {A.KIND_NAMES[k]: k for k in A.TURN_KINDS}
_STEPS = {P_CUT: "cut", P_HOLD: "hold", P_DRILL: "drill", P_PLACE: "place"}
#: The fields each pending step carries, besides ``step`` and ``actor``.
_STEP_FIELDS = {
    "cut": {"source", "candidates"},
    "hold": {"card"},
    "drill": {"card"},
    "place": {"chain", "placed", "remaining"},
}

Title = str
Seat = Literal[0, 1]
T_ = TypeVar("T_")
#: One value per seat, seat 0 first.
Pair = Annotated[list[T_], Field(min_length=2, max_length=2)]
#: A list of cards: never longer than a table holds.
Cards = Annotated[list[T_], Field(max_length=MAX_CARDS)]
#: A title's card id at the table being read (``from_json``'s ``card``).
CardId = Callable[[str], int]


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
    candidates: Cards[Title] | None = None  # cut: the cards that may yield
    chain: Seat | None = None  # place: the seat whose chain is reordered
    placed: Cards[Title] | None = None
    remaining: Cards[Title] | None = None


class Position(_Strict):
    format: Literal["cz-position/1"]
    table: Literal["base", "market", "portfolio", "deal"]
    cards: Cards[Title]
    hands: Pair[Cards[Title]]
    chains: Pair[Cards[ChainCard]]
    spoils: Pair[Cards[Title]]
    market: Cards[Title]
    aside: Cards[Title]
    hostage: Hostage | None
    hoards: Pair[int]
    plenum: int
    seal: int
    to_move: Seat
    turn: int = Field(ge=0, le=MAX_ACTIONS)
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
    _check_kind(pos)
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
    if not pos.closed and pos.exhausted[1 - pos.to_move]:
        raise SchemaError(
            "not a position: Exhaustion binds the next action of the seat to move, and only "
            "until that seat acts (Book III EXHAUSTION)"
        )
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
    if s.closed and s.in_force_anywhere(T.ZENOSEAL) >= 0:
        raise SchemaError(
            "not a position: the Seal cannot reach twelve while Zenoseal stands face up; "
            "it shows eleven and Zenoseal folds (Book III ZENOSEAL, R-13)"
        )
    s.pending = _pending_from(pos.pending, s, card)
    return s


def _check_kind(pos: Position) -> None:
    """A seeded table holds exactly the titles it convenes with (I.5, IV.2, IV.3)."""
    titles = KIND_TITLES.get(pos.table)
    if titles is not None and set(pos.cards) != titles:
        section = "I.5" if pos.table == "base" else "IV.2"
        raise SchemaError(
            f"not a position: a {pos.table} table holds exactly its {len(titles)} titles "
            f"({section}); use table 'deal' for any other"
        )
    if pos.table == "base" and (pos.market or pos.aside):
        raise SchemaError(
            "not a position: a base table deals no market and sets nothing aside (I.5, I.7 BUILD)"
        )
    if pos.table == "market" and pos.aside:
        raise SchemaError("not a position: a market table deals all thirteen; none aside (IV.2)")
    if pos.table in ("market", "portfolio") and len(pos.market) > MARKET_DEAL:
        raise SchemaError(
            f"not a position: the market is dealt {MARKET_DEAL} cards and only shrinks (IV.2, IV.3)"
        )
    if pos.table == "portfolio" and len(pos.cards) > PORTFOLIO_POOL:
        raise SchemaError(
            f"not a position: two portfolios of eight pool at most {PORTFOLIO_POOL} "
            "certificates (IV.3)"
        )


def _pending_from(p: Pending | None, s: State, card: CardId) -> PendingDecision | None:
    """The pending decision ``p`` describes, refused unless an action of the rules leaves it."""
    if p is None:
        return None
    if s.closed:
        raise SchemaError("not a position: a closed table has no pending decision")
    given = {f for f in Pending.model_fields if getattr(p, f) is not None} - {"step", "actor"}
    if given != _STEP_FIELDS[p.step]:
        raise SchemaError(
            f"not a position: a pending {p.step} carries exactly "
            f"{', '.join(sorted(_STEP_FIELDS[p.step]))}"
        )
    if p.actor != s.to_move:
        raise SchemaError(
            f"not a position: a pending {p.step} is inside the turn of the seat to move (I.6)"
        )
    kind = {"cut": A.CUT, "hold": A.HOLD, "drill": A.NOGO, "place": A.TURN}[p.step]
    if s.exhausted[p.actor] and s.last_kind[p.actor] == kind:
        raise SchemaError(
            f"not a position: an exhausted seat cannot have repeated its {A.KIND_NAMES[kind]} "
            "(Book III EXHAUSTION)"
        )
    if p.step == "cut":
        return _pending_cut(p, s, card)
    if p.step == "hold":
        return _pending_hold(p, s, card)
    if p.step == "drill":
        return _pending_drill(p, s, card)
    return _pending_place(p, s, card)


def _refuse(step: str, why: str) -> SchemaError:
    return SchemaError(f"not a position: the pending {step} {why}")


def _given(value: T_ | None, step: str, field: str) -> T_:
    """A field the pending step needs (``_pending_from`` checks them; this keeps it so when
    asserts are off)."""
    if value is None:
        raise _refuse(step, f"has no {field}")
    return value


def _pending_cut(p: Pending, s: State, card: CardId) -> PendingCut:
    actor = p.actor
    src = card(_given(p.source, "cut", "source"))
    candidates = tuple(card(t) for t in _given(p.candidates, "cut", "candidates"))
    if src not in s.power_sources(T.SEPARATION, actor):
        raise _refuse(
            "cut",
            f"is made by {p.source}, which is neither the actor's Separation face up nor a "
            "face-up Model copying it (I.7 CUT, R-08)",
        )
    seams = range(1, len(s.chains[1 - actor]))
    if not candidates or all(s.cut_candidates(k) != candidates for k in seams):
        raise _refuse(
            "cut",
            "names yielding cards no seam yields: the smaller piece's outermost card, or "
            "the two equal pieces' outermost cards, inner piece first, none Keeping shields "
            "(I.7 CUT, Book II KEEPING)",
        )
    result: PendingCut = (P_CUT, actor, src, candidates)
    if len(s._response_options(result)) < 2:
        raise _refuse(
            "cut",
            "leaves the defender no choice (no equal pieces, Fork or Refusal), so it would "
            "have resolved at once (I.7 CUT)",
        )
    return result


def _pending_hold(p: Pending, s: State, card: CardId) -> PendingHold:
    actor, defender = p.actor, 1 - p.actor
    target = card(_given(p.card, "hold", "card"))
    if not s.power_sources(T.ESCROW, actor):
        raise _refuse("hold", "has no Escrow of the actor's, nor a Model copying it (I.7 HOLD)")
    if s.hostage >= 0:
        raise _refuse("hold", "is made while a hostage exists; only one may (I.7 HOLD)")
    chain = s.chains[defender]
    if s.loc[target] != CHAIN + defender or not s.up[target]:
        raise _refuse("hold", "names no face-up card of the defender's chain (I.7 HOLD)")
    index = chain.index(target)
    if index == 0:
        raise _refuse("hold", "names the defender's innermost card (I.7 HOLD)")
    if s.shielded(defender, index):
        raise _refuse("hold", "names a card Keeping shields (Book II KEEPING)")
    if not s.in_force(T.REFUSAL, defender):
        raise _refuse(
            "hold",
            "waits on a defender with no Refusal in force, so it would have resolved at once "
            "(Book III REFUSAL)",
        )
    return (P_HOLD, actor, target)


def _pending_drill(p: Pending, s: State, card: CardId) -> PendingDrill:
    actor, defender = p.actor, 1 - p.actor
    target = card(_given(p.card, "drill", "card"))
    if s.loc[target] != CHAIN + defender or not s.up[target]:
        raise _refuse("drill", "challenges no face-up card of the opponent's (Book II NO-GO)")
    if not _spent_sources(s, T.NOGO, actor):
        raise _refuse(
            "drill",
            "follows no spent No-Go (nor a spent Model beside it) in the actor's chain "
            "(Book II NO-GO, IV.4, R-08)",
        )
    return (P_DRILL, actor, target)


def _pending_place(p: Pending, s: State, card: CardId) -> PendingPlace:
    placed = tuple(card(t) for t in _given(p.placed, "place", "placed"))
    remaining = tuple(card(t) for t in _given(p.remaining, "place", "remaining"))
    turned = _given(p.chain, "place", "chain")
    chain = s.chains[turned]
    if len(remaining) < 2 or sorted(placed + remaining) != sorted(chain):
        raise _refuse(
            "place",
            "does not split the chain being turned into placed and (two or more) remaining "
            "cards (Book II TURN, Q-16)",
        )
    if not _spent_sources(s, T.TURN, p.actor):
        raise _refuse(
            "place",
            "follows no spent Turn (nor a spent Model beside it) in the actor's chain "
            "(Book II TURN, R-08)",
        )
    return (P_PLACE, p.actor, turned, placed, remaining)


def _spent_sources(s: State, title: int, seat: int) -> list[int]:
    """The folded cards of ``seat`` whose spending may have used ``title``'s power: the card
    itself, or a Model beside it that copies it (R-08, Q-02)."""
    c = s.where[title]
    if c < 0 or s.loc[c] != CHAIN + seat:
        return []
    chain = s.chains[seat]
    i = chain.index(c)
    spent = [c] if not s.up[c] else []
    if i + 1 < len(chain) and s.titles[chain[i + 1]] == T.MODEL_A and not s.up[chain[i + 1]]:
        spent.append(chain[i + 1])
    if i > 0 and s.titles[chain[i - 1]] == T.MODEL_B and not s.up[chain[i - 1]]:
        spent.append(chain[i - 1])
    return spent
