"""Positions as strict JSON (docs/charter.md, "Positions"): ``to_json`` and ``from_json``.

Cards are named by id (the card list gives each id's name and owner), so
``to_json(from_json(j)) == j`` for every position the engine reaches, and ``from_json`` of a
position continues exactly as the original would (the generator's state travels too).
``from_json`` reads untrusted input: a fault of shape or consistency is a
:class:`ledger.errors.SchemaError`, never a partial position.
"""

from __future__ import annotations

from typing import Any

from game.charter import library
from game.charter.board import ability_at
from game.charter.cards import TYPE_NAMES, CardSet
from game.charter.charters import Grant
from game.charter.state import (
    P_ATTACK,
    P_BLOCK,
    P_DIVIDE,
    P_MULLIGAN,
    P_PAY,
    P_SUPPORT,
    P_TARGET,
    P_UPKEEP,
    PENDING_NAMES,
    PHASE_NAMES,
    STEP_NAMES,
    State,
)
from game.charter.tables import tables_for
from ledger.errors import SchemaError

FORMAT = "charter-position/1"
_BONDS = ("free", "constructed", "anchored")
_ITEMS = ("card", "ability", "reserve")
_REFS = ("printed", "granted", "consequence")
_PILES = ("decks", "hands", "discards")


def _ref(ref: tuple[int, int, int] | None) -> list[Any] | None:
    return None if ref is None else [ref[0], ref[1], _REFS[ref[2]]]


def to_json(s: State) -> dict[str, Any]:
    """The position as a JSON-ready dict."""
    grant = s.grant
    return {
        "format": FORMAT,
        "card_set": s.card_set.name,
        "charter": s.charter,
        "manifest": None
        if grant is None
        else {
            "per_turn": grant.per_turn,
            "complexity": grant.complexity,
            "eligible": sorted(TYPE_NAMES[t] for t in grant.eligible),
        },
        "max_turns": s.max_turns,
        "cards": [{"name": d.name, "owner": o} for d, o in zip(s.defs, s.owner, strict=True)],
        "decks": [d[:] for d in s.decks],
        "hands": [h[:] for h in s.hands],
        "discards": [d[:] for d in s.discards],
        "board": [
            {
                "card": c,
                "bond": _BONDS[s.bond[c]],
                "host": s.host[c] if s.host[c] >= 0 else None,
                "free_zone": s.free_ctrl[c],
                "committed": bool(s.committed[c]),
                "damage": s.damage[c],
            }
            for c in s.board
        ],
        "stack": [
            {
                "kind": _ITEMS[kind],
                "card": card,
                "controller": who,
                "ability": _ref(ref),
                "chosen": chosen if chosen >= 0 else None,
            }
            for kind, card, who, ref, chosen in s.stack
        ],
        "pools": [p[:] for p in s.pools],
        "manifest_used": s.manifest_used[:],
        "alive": s.alive[:],
        "first_turn": s.first_turn[:],
        "turn_player": s.turn_player,
        "turns": s.turns,
        "phase": PHASE_NAMES[s.phase],
        "step": STEP_NAMES[s.step],
        "priority": s.priority,
        "passes": s.passes,
        "resolving": s.resolving,
        "pending": _pending_json(s),
        "attackers": [list(x) for x in s.attackers],
        "blocks": [list(x) for x in s.blocks],
        "blocked": s.blocked[:],
        "divisions": [[c, src, list(r), pts] for c, src, r, pts in s.divisions],
        "assigned": [list(x) for x in s.assigned],
        "triggers": [[c, w, _ref(r), t] for c, w, r, t in s.triggers],
        "deferred": [[c, w, _ref(r), t] for c, w, r, t in s.deferred],
        "rng": s.rng,
        "dirty": s.dirty,
        "winner": s.winner,
        "steps": s.steps,
    }


def _pending_json(s: State) -> dict[str, Any] | None:
    p = s.pending
    if p is None:
        return None
    tag = p[0]
    out: dict[str, Any] = {"step": PENDING_NAMES[tag], "player": p[1]}
    if tag == P_PAY:
        _, _, need, additional, consume, source, then = p
        out |= {"need": [list(x) for x in need], "additional": additional}
        out |= {"consume": len(consume), "source": source}
        if then[0] == "card":
            out["then"] = {"for": "card", "card": then[1], "chosen": then[2]}
        elif then[0] == "ability":
            out["then"] = {
                "for": "ability",
                "item": _ITEMS[then[1]],
                "card": then[2],
                "ability": _ref(then[3]),
                "chosen": then[4],
            }
        else:
            out["then"] = {"for": "upkeep", "card": then[1], "owing": list(then[2])}
    elif tag == P_UPKEEP:
        out["owing"] = list(p[2])
    elif tag == P_BLOCK:
        out["rest"] = list(p[2])
    elif tag == P_DIVIDE:
        out |= {"source": p[2], "receivers": list(p[3]), "points": p[4]}
    elif tag == P_SUPPORT:
        out["location"] = p[2]
    elif tag == P_TARGET:
        out |= {"card": p[2], "ability": _ref(p[3])}
    return out


# ----------------------------------------------------------------------------- reading


class _Reader:
    """Typed access to untrusted JSON: every fault one SchemaError naming the field."""

    def __init__(self, n_cards: int = 0, n_seats: int = 0) -> None:
        self.n_cards, self.n_seats = n_cards, n_seats

    @staticmethod
    def fail(where: str, what: str) -> SchemaError:
        return SchemaError(f"not a charter position: {where}: {what}")

    def int_(self, v: Any, where: str, lo: int = 0, hi: int = 2**64) -> int:
        if type(v) is not int or not lo <= v < hi:
            raise self.fail(where, f"expected a whole number in [{lo}, {hi})")
        return v

    def bool_(self, v: Any, where: str) -> bool:
        if type(v) is not bool:
            raise self.fail(where, "expected true or false")
        return v

    def list_(self, v: Any, where: str, length: int | None = None) -> list[Any]:
        if type(v) is not list or (length is not None and len(v) != length):
            raise self.fail(where, "expected a list" + (f" of {length}" if length else ""))
        return v

    def card(self, v: Any, where: str) -> int:
        return self.int_(v, where, 0, self.n_cards)

    def seat(self, v: Any, where: str) -> int:
        return self.int_(v, where, 0, self.n_seats)

    def opt_card(self, v: Any, where: str) -> int:
        return -1 if v is None else self.card(v, where)

    def name(self, v: Any, names: tuple[str, ...], where: str) -> int:
        if v not in names:
            raise self.fail(where, f"expected one of {', '.join(names)}")
        return names.index(v)

    def obj(self, v: Any, where: str, keys: set[str]) -> dict[str, Any]:
        if type(v) is not dict or set(v) != keys:
            raise self.fail(where, f"expected an object with exactly {sorted(keys)}")
        return v

    def ref(self, v: Any, where: str) -> tuple[int, int, int] | None:
        if v is None:
            return None
        origin, index, how = self.list_(v, where, 3)
        return (
            self.card(origin, where),
            self.int_(index, where, 0, 64),
            self.name(how, _REFS, where),
        )


_KEYS = {
    "format", "card_set", "charter", "manifest", "max_turns", "cards", "decks", "hands",
    "discards", "board", "stack", "pools", "manifest_used", "alive", "first_turn", "turn_player",
    "turns", "phase", "step", "priority", "passes", "resolving", "pending", "attackers",
    "blocks", "blocked", "divisions", "assigned", "triggers", "deferred", "rng", "dirty", "winner",
    "steps",
}  # fmt: skip


def from_json(data: Any, card_set: CardSet | None = None) -> State:
    """The position ``data`` holds (the packaged card set it names unless one is given)."""
    r = _Reader()
    d = r.obj(data, "position", _KEYS)
    if d["format"] != FORMAT:
        raise r.fail("format", f"expected {FORMAT!r}")
    if card_set is None:
        if d["card_set"] not in library.card_set_names():
            raise r.fail("card_set", "no packaged card set of that name")
        card_set = library.card_set(d["card_set"])
    elif d["card_set"] != card_set.name:
        raise r.fail("card_set", f"expected {card_set.name!r}")
    s = State.__new__(State)
    s.card_set = card_set
    if type(d["charter"]) is not str:
        raise r.fail("charter", "expected a name")
    s.charter = d["charter"]
    s.grant = _grant(r, d["manifest"])
    s.max_turns = r.int_(d["max_turns"], "max_turns", 1, 100_000)
    cards = r.list_(d["cards"], "cards")
    if not 1 <= len(cards) <= 255:
        raise r.fail("cards", "expected 1 to 255 cards")
    pools = r.list_(d["pools"], "pools")
    n = len(pools)
    if not 2 <= n <= 8:
        raise r.fail("pools", "expected one pool per seat, 2 to 8 seats")
    r.n_cards, r.n_seats = len(cards), n
    names, owners = [], []
    for i, c in enumerate(cards):
        c = r.obj(c, f"cards.{i}", {"name", "owner"})
        if c["name"] not in card_set.by_name:
            raise r.fail(f"cards.{i}.name", f"no such card in {card_set.name!r}")
        names.append(c["name"])
        owners.append(r.seat(c["owner"], f"cards.{i}.owner"))
    s.defs = tuple(card_set.card(x) for x in names)
    s.owner = tuple(owners)
    s.tables = tables_for(s.defs)
    s.n = n
    total = len(cards)
    s.place = bytearray([255]) * total
    for pile_index, key in enumerate(_PILES):
        piles = r.list_(d[key], key, n)
        lists = []
        for seat, pile in enumerate(piles):
            ids = [r.card(x, f"{key}.{seat}") for x in r.list_(pile, f"{key}.{seat}")]
            for x in ids:
                _place(r, s, x, (0, 1, 3)[pile_index], f"{key}.{seat}")
                if owners[x] != seat:
                    raise r.fail(f"{key}.{seat}", "a pile holds only its owner's cards")
            lists.append(ids)
        setattr(s, key, lists)
    s.board, s.host, s.bond = [], [-1] * total, bytearray(total)
    s.free_ctrl, s.ctrl = list(owners), list(owners)
    s.committed, s.damage = bytearray(total), [0] * total
    for i, b in enumerate(r.list_(d["board"], "board")):
        where = f"board.{i}"
        b = r.obj(b, where, {"card", "bond", "host", "free_zone", "committed", "damage"})
        c = r.card(b["card"], where)
        _place(r, s, c, 2, where)
        s.board.append(c)
        s.bond[c] = r.name(b["bond"], _BONDS, where)
        s.host[c] = r.opt_card(b["host"], where)
        if (s.host[c] >= 0) != (s.bond[c] != 0):
            raise r.fail(where, "a bonded card names its host, a free card none")
        s.free_ctrl[c] = r.seat(b["free_zone"], where)
        s.committed[c] = r.bool_(b["committed"], where)
        s.damage[c] = r.int_(b["damage"], where, 0, 1000)
    s.stack = []
    for i, item in enumerate(r.list_(d["stack"], "stack")):
        where = f"stack.{i}"
        item = r.obj(item, where, {"kind", "card", "controller", "ability", "chosen"})
        kind = r.name(item["kind"], _ITEMS, where)
        c = r.card(item["card"], where)
        ref = r.ref(item["ability"], where)
        if (kind == 0) != (ref is None):
            raise r.fail(where, "a card item names no ability; an ability item names one")
        who = r.seat(item["controller"], where)
        if kind == 0:
            _place(r, s, c, 4, where)
            s.ctrl[c] = who
        s.stack.append((kind, c, who, ref, r.opt_card(item["chosen"], where)))
    for c in s.board:
        if s.host[c] >= 0 and s.place[s.host[c]] != 2:
            raise r.fail("board", f"card {c}'s host is not on the board")
    s.pools = [
        [r.int_(x, "pools", 0, 10_000) for x in r.list_(p, "pools", len(card_set.identities))]
        for p in pools
    ]
    s.manifest_used = [
        r.int_(x, "manifest_used", 0, 100) for x in r.list_(d["manifest_used"], "manifest_used", n)
    ]
    s.alive = [r.bool_(x, "alive") for x in r.list_(d["alive"], "alive", n)]
    s.first_turn = [r.bool_(x, "first_turn") for x in r.list_(d["first_turn"], "first_turn", n)]
    s.turn_player = r.seat(d["turn_player"], "turn_player")
    s.turns = r.int_(d["turns"], "turns", 0, s.max_turns + 2)
    s.phase = r.name(d["phase"], PHASE_NAMES, "phase")
    s.step = r.name(d["step"], STEP_NAMES, "step")
    s.priority = r.seat(d["priority"], "priority")
    s.passes = r.int_(d["passes"], "passes", 0, n)
    s.resolving = r.bool_(d["resolving"], "resolving")
    s.attackers = [
        (r.card(a, "attackers"), r.int_(t, "attackers", 0, 255), r.int_(k, "attackers", 0, 2))
        for a, t, k in (r.list_(x, "attackers", 3) for x in r.list_(d["attackers"], "attackers"))
    ]
    s.blocks = [
        (r.card(b, "blocks"), r.card(a, "blocks"))
        for b, a in (r.list_(x, "blocks", 2) for x in r.list_(d["blocks"], "blocks"))
    ]
    s.blocked = [r.card(a, "blocked") for a in r.list_(d["blocked"], "blocked")]
    if not {a for _, a in s.blocks} <= set(s.blocked):
        raise r.fail("blocked", "every attacker with a blocker is blocked")
    s.divisions = [
        (
            r.seat(c, "divisions"),
            r.card(src, "divisions"),
            tuple(r.card(x, "divisions") for x in r.list_(rc, "divisions")),
            r.int_(pts, "divisions", 1, 100),
        )
        for c, src, rc, pts in (
            r.list_(x, "divisions", 4) for x in r.list_(d["divisions"], "divisions")
        )
    ]
    s.assigned = [
        (r.card(a, "assigned"), r.card(b, "assigned"))
        for a, b in (r.list_(x, "assigned", 2) for x in r.list_(d["assigned"], "assigned"))
    ]
    s.triggers = [_waiting(r, x, "triggers") for x in r.list_(d["triggers"], "triggers")]
    s.deferred = [_waiting(r, x, "deferred") for x in r.list_(d["deferred"], "deferred")]
    s.rng = r.int_(d["rng"], "rng")
    s.dirty = r.bool_(d["dirty"], "dirty")
    s.winner = r.int_(d["winner"], "winner", -1, n)
    s.steps = r.int_(d["steps"], "steps", 0, 10**9)
    s.pending = _pending(r, d["pending"])
    if s.pending is not None and s.pending[0] == P_PAY and s.pending[6][0] == "card":
        # A card being paid for has left the hand and is not yet on the stack.
        _place(r, s, s.pending[6][1], 4, "pending.then.card")
        s.ctrl[s.pending[6][1]] = s.pending[1]
    if 255 in s.place:
        raise r.fail("cards", "every card lies in exactly one pile, on the board or the stack")
    s.boost, s.withheld = {}, frozenset()
    s._legal = None
    _check_refs(r, s)
    from game.charter.board import recompute_control, recompute_statics

    recompute_control(s)
    recompute_statics(s)
    return s


def _place(r: _Reader, s: State, card: int, where: int, field: str) -> None:
    if s.place[card] != 255:
        raise r.fail(field, f"card {card} lies in two places")
    s.place[card] = where


def _grant(r: _Reader, v: Any) -> Grant | None:
    if v is None:
        return None
    g = r.obj(v, "manifest", {"per_turn", "complexity", "eligible"})
    eligible = frozenset(
        r.name(t, TYPE_NAMES, "manifest.eligible")
        for t in r.list_(g["eligible"], "manifest.eligible")
    )
    return Grant(
        r.int_(g["per_turn"], "manifest", 1, 10),
        r.int_(g["complexity"], "manifest", 1, 100),
        eligible,
    )


def _waiting(r: _Reader, v: Any, where: str) -> tuple[int, int, tuple[int, int, int], int]:
    c, who, ref, target = r.list_(v, where, 4)
    got = r.ref(ref, where)
    if got is None:
        raise r.fail(where, "names its ability")
    return (r.card(c, where), r.seat(who, where), got, r.int_(target, where, -1, 255))


def _pending(r: _Reader, v: Any) -> tuple[Any, ...] | None:
    if v is None:
        return None
    if type(v) is not dict:
        raise r.fail("pending", "expected an object or null")
    tag = r.name(v.get("step"), PENDING_NAMES, "pending.step")
    fields = {
        P_MULLIGAN: set(), P_ATTACK: set(), P_UPKEEP: {"owing"}, P_BLOCK: {"rest"},
        P_DIVIDE: {"source", "receivers", "points"}, P_SUPPORT: {"location"},
        P_PAY: {"need", "additional", "consume", "source", "then"},
        P_TARGET: {"card", "ability"},
    }[tag]  # fmt: skip
    v = r.obj(v, "pending", {"step", "player"} | fields)
    seat = r.seat(v["player"], "pending.player")
    if tag in (P_MULLIGAN, P_ATTACK):
        return (tag, seat)
    if tag == P_UPKEEP:
        return (
            tag,
            seat,
            tuple(r.card(x, "pending.owing") for x in r.list_(v["owing"], "pending.owing")),
        )
    if tag == P_BLOCK:
        return (
            tag,
            seat,
            tuple(r.seat(x, "pending.rest") for x in r.list_(v["rest"], "pending.rest")),
        )
    if tag == P_DIVIDE:
        receivers = tuple(
            r.card(x, "pending.receivers") for x in r.list_(v["receivers"], "pending.receivers")
        )
        return (
            tag,
            seat,
            r.card(v["source"], "pending"),
            receivers,
            r.int_(v["points"], "pending", 1, 100),
        )
    if tag == P_SUPPORT:
        return (tag, seat, r.card(v["location"], "pending.location"))
    if tag == P_TARGET:
        ref = r.ref(v["ability"], "pending.ability")
        if ref is None:
            raise r.fail("pending.ability", "names the choosing ability")
        return (tag, seat, r.card(v["card"], "pending.card"), ref)
    return _pay_pending(r, v, seat)


def _pay_pending(r: _Reader, v: dict[str, Any], seat: int) -> tuple[Any, ...]:
    need = tuple(
        (r.int_(i, "pending.need", 0, 16), r.int_(k, "pending.need", 1, 100))
        for i, k in (r.list_(x, "pending.need", 2) for x in r.list_(v["need"], "pending.need"))
    )
    then_v = v["then"]
    if type(then_v) is not dict:
        raise r.fail("pending.then", "expected an object")
    kind = then_v.get("for")
    if kind == "card":
        t = r.obj(then_v, "pending.then", {"for", "card", "chosen"})
        then: tuple[Any, ...] = (
            "card",
            r.card(t["card"], "pending.then"),
            r.int_(t["chosen"], "pending.then", -1, 255),
        )
    elif kind == "ability":
        t = r.obj(then_v, "pending.then", {"for", "item", "card", "ability", "chosen"})
        ref = r.ref(t["ability"], "pending.then")
        if ref is None:
            raise r.fail("pending.then", "names its ability")
        then = (
            "ability",
            r.name(t["item"], _ITEMS, "pending.then"),
            r.card(t["card"], "pending.then"),
            ref,
            r.int_(t["chosen"], "pending.then", -1, 255),
        )
    elif kind == "upkeep":
        t = r.obj(then_v, "pending.then", {"for", "card", "owing"})
        then = (
            "upkeep",
            r.card(t["card"], "pending.then"),
            tuple(r.card(x, "pending.then") for x in r.list_(t["owing"], "pending.then")),
        )
    else:
        raise r.fail("pending.then.for", "expected card, ability or upkeep")
    return (
        P_PAY,
        seat,
        need,
        r.int_(v["additional"], "pending", 0, 100),
        r.int_(v["consume"], "pending", 0, 5),
        r.int_(v["source"], "pending", 0, 255),
        then,
    )


def _check_refs(r: _Reader, s: State) -> None:
    """Every ability ref names an ability that exists; a pay's consume count fits its price."""
    refs = [x[3] for x in s.stack if x[3] is not None] + [t[2] for t in s.triggers + s.deferred]
    p = s.pending
    if p is not None and p[0] == P_PAY and p[6][0] == "ability":
        refs.append(p[6][3])
    if p is not None and p[0] == P_TARGET:
        refs.append(p[3])
    for ref in refs:
        try:
            ability_at(s, ref)
        except (IndexError, AssertionError):
            raise r.fail("ability", f"no ability {list(ref)}") from None
    if p is not None and p[0] == P_TARGET:
        waiting = s.triggers[0] if s.triggers else None
        if waiting is None or (waiting[0], waiting[1], waiting[2]) != (p[2], p[1], p[3]):
            raise r.fail("pending", "a target is chosen for the first waiting trigger")
        if ability_at(s, p[3]).chooses is None:
            raise r.fail("pending.ability", "the ability chooses nothing")
    if p is not None and p[0] == P_PAY:
        price = _price_of(s, p[6])
        if p[4] > len(price.consume):
            raise r.fail("pending.consume", "more consumes than the price states")
        s.pending = (*p[:4], price.consume[len(price.consume) - p[4] :], *p[5:])


def _price_of(s: State, then: tuple[Any, ...]) -> Any:
    if then[0] == "card":
        return s.defs[then[1]].price
    if then[0] == "ability":
        return ability_at(s, then[3]).price
    obligation = s.defs[then[1]].maintenance
    if obligation is None:
        raise SchemaError("not a charter position: pending.then: the card owes nothing")
    return obligation[0]
