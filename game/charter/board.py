"""The board: zones and control, classes of cards, statics in force, leaving play, and the
checks that keep every type rule (Zones, Control and ownership, Anchoring, Construction,
Structures, Edicts, Static abilities).

Control is positional: a free card's controller is the seat whose free zone it stands in; a
constructed or anchored card's is its host's, all the way down to a free card (Zones). So
:func:`recompute_control` walks each card's bonds to its root and nothing else ever assigns
control. The checks run whenever the board changed (``state.dirty``) before anyone decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from game.charter.cards import (
    ANY,
    EDICT,
    ENTITY,
    LOCATION,
    STRUCTURE,
    YOU,
    Ability,
    Selector,
)
from game.charter.state import (
    ANCHORED,
    BOARD,
    CONSEQUENCE,
    CONSTRUCTED,
    DISCARD,
    FREE,
    GRANTED,
    HAND,
    P_SUPPORT,
    PRINTED,
    STACK,
)

if TYPE_CHECKING:
    from game.charter.state import State

Ref = tuple[int, int, int]
_NO_BOOST = (0, 0, 0, 0)
_ZONES = {"board": BOARD, "stack": STACK, "hand": HAND}
#: Card types that carry strength, resilience and integrity and so accumulate damage.
DAMAGEABLE = frozenset({LOCATION, STRUCTURE, ENTITY})


def ability_at(s: State, ref: Ref) -> Ability:
    """The ability a ref names: printed on a card, granted by an anchored card, a consequence."""
    origin, index, how = ref
    d = s.defs[origin]
    if how == PRINTED:
        return d.abilities[index]
    if how == GRANTED:
        granted = d.abilities[index].granted
        assert granted is not None
        return granted
    consequence = s.tables.consequence[origin]
    assert how == CONSEQUENCE
    assert consequence is not None
    return consequence


def abilities_of(s: State, card: int) -> list[tuple[Ref, Ability]]:
    """A permanent's abilities: its own, then those its anchored cards Grant it (Ability
    keywords: Grant is in force while the granting card is anchored)."""
    out: list[tuple[Ref, Ability]] = [
        ((card, i, PRINTED), a) for i, a in enumerate(s.defs[card].abilities)
    ]
    host, bond, defs = s.host, s.bond, s.defs
    for g in s.board:
        if host[g] == card and bond[g] == ANCHORED:
            for i, a in enumerate(defs[g].abilities):
                if a.keyword == "Grant" and a.granted is not None:
                    out.append(((g, i, GRANTED), a.granted))
    return out


def strength(s: State, card: int) -> int:
    return max(0, s.defs[card].strength + s.boost.get(card, _NO_BOOST)[0])


def resilience(s: State, card: int) -> int:
    return max(0, s.defs[card].resilience + s.boost.get(card, _NO_BOOST)[1])


def integrity(s: State, card: int) -> int:
    return max(0, s.defs[card].integrity + s.boost.get(card, _NO_BOOST)[2])


def extent(s: State, card: int) -> int:
    return max(0, s.defs[card].extent + s.boost.get(card, _NO_BOOST)[3])


def matches(s: State, sel: Selector, card: int, chooser: int) -> bool:
    """Whether ``card`` is of the class ``sel``, read from ``chooser``'s side."""
    d = s.defs[card]
    if not sel.types >> d.type & 1:
        return False
    where = s.place[card]
    if where != _ZONES[sel.zone]:
        return False
    if sel.controller != ANY:
        who = s.owner[card] if where == HAND else s.ctrl[card]
        if (who == chooser) != (sel.controller == YOU):
            return False
    if sel.name is not None and d.name != sel.name:
        return False
    if sel.anchored is not None and (s.bond[card] == ANCHORED) != sel.anchored:
        return False
    if sel.committed is not None and bool(s.committed[card]) != sel.committed:
        return False
    return d.value >= sel.min_value


def candidates(s: State, sel: Selector, chooser: int) -> list[int]:
    """Every card of class ``sel`` for ``chooser`` (board and stack in their order)."""
    types, mask = s.tables.type, sel.types
    if sel.zone == "board":
        if sel.anchored and ANCHORED not in s.bond:
            return []  # nothing is anchored anywhere
        # Every board card stands on the board: :func:`matches` without its zone test, the
        # type and controller tests first (plain loops: cheaper than comprehensions here).
        found = []
        controller = sel.controller
        if controller == ANY:
            for c in s.board:
                if mask >> types[c] & 1:
                    found.append(c)
        else:
            ctrl, mine = s.ctrl, controller == YOU
            for c in s.board:
                if mask >> types[c] & 1 and (ctrl[c] == chooser) == mine:
                    found.append(c)
        if found and (
            sel.anchored is not None
            or sel.committed is not None
            or sel.name is not None
            or sel.min_value > 0  # a resource value is never negative
        ):
            return _matching(s, sel, found, chooser)
        return found
    return _off_board(s, sel, chooser)


def _matching(s: State, sel: Selector, cards: list[int], chooser: int) -> list[int]:
    return [c for c in cards if matches(s, sel, c, chooser)]


def _off_board(s: State, sel: Selector, chooser: int) -> list[int]:
    """:func:`candidates` on the stack (its cards, bottom first) or in the hands."""
    if sel.zone == "stack":
        pool = [item[1] for item in s.stack if item[0] == 0]
    else:
        pool = [c for h in s.hands for c in h]
    types, mask = s.tables.type, sel.types
    return [c for c in pool if mask >> types[c] & 1 and matches(s, sel, c, chooser)]


def recompute_control(s: State) -> None:
    host, free_ctrl, ctrl = s.host, s.free_ctrl, s.ctrl
    for c in s.board:
        x = host[c]
        if x < 0:
            ctrl[c] = free_ctrl[c]  # a free card: its own zone's
            continue
        while host[x] >= 0:
            x = host[x]
        ctrl[c] = free_ctrl[x]


def recompute_statics(s: State) -> None:
    """The standing facts in force: attribute changes and withheld releases (Static
    abilities: a term that is not the card itself names every matching card)."""
    tables, place = s.tables, s.place
    for c in tables.static_cards:
        if place[c] == BOARD:
            break
    else:  # no card on the board states one
        s.boost, s.withheld = {}, frozenset()
        return
    statics, host, bond = tables.statics, s.host, s.bond
    holders = []
    for c in s.board:
        if statics[c]:
            holders.append(c)
    boost: dict[int, tuple[int, int, int, int]] = {}
    withheld: set[int] = set()
    for c in holders:
        held = statics[c]
        for a, granted in held:
            if not granted:
                bearer = c
            elif bond[c] == ANCHORED:  # Grant: in force while the granting card is anchored
                bearer = host[c]
            else:
                continue
            for x in _static_cards(s, a, bearer, c):
                _add_static(a, x, boost, withheld)
    s.boost = boost
    s.withheld = frozenset(withheld)


def _static_cards(s: State, a: Ability, bearer: int, source: int) -> list[int]:
    """The cards a static ability held by ``bearer`` touches: itself, or every match."""
    assert a.effect is not None
    target = a.effect.target
    if target in ("self", None):
        return [bearer]
    if target == "host":
        return [s.host[bearer]] if s.host[bearer] >= 0 else []
    assert isinstance(target, Selector)
    return [x for x in s.board if matches(s, target, x, s.ctrl[source])]


def _add_static(
    a: Ability, card: int, boost: dict[int, tuple[int, int, int, int]], withheld: set[int]
) -> None:
    assert a.effect is not None
    if a.effect.do == "withhold":
        withheld.add(card)
        return
    old = boost.get(card, _NO_BOOST)
    m = a.effect.mods
    boost[card] = (old[0] + m[0], old[1] + m[1], old[2] + m[2], old[3] + m[3])


def leave(s: State, card: int, pile: int) -> None:
    """``card`` leaves the board (or the stack) for its owner's hand or discard pile
    (Control and ownership: a card that leaves play goes to its owner's pile)."""
    was_board = s.place[card] == BOARD
    if was_board:
        s.board.remove(card)
        free_bonded(s, card)
        _effects.queue_triggers(s, card, "leaves")
    owner = s.owner[card]
    s.place[card] = pile
    (s.hands if pile == HAND else s.discards)[owner].append(card)
    s.host[card] = -1
    s.bond[card] = FREE
    s.committed[card] = 0
    s.damage[card] = 0
    if s.deferred:
        s.deferred = [d for d in s.deferred if d[0] != card]
    if s.attackers:
        s.attackers = [a for a in s.attackers if a[0] != card]
    if s.blocks:
        s.blocks = [b for b in s.blocks if card not in b]  # its attacker stays blocked (C-24)
    if s.blocked:
        s.blocked = [a for a in s.blocked if a != card]
    s.dirty = True


def free_bonded(s: State, host: int) -> None:
    """``host`` has left the board: every card bonded to it is set free at once.

    Anchoring: "When the host leaves the board ... the card is immediately evaluated as free
    with whatever its type rule then does" — it stands in the free zone of the controller it had
    (its host's, C-11), and :func:`check` then applies its type rule (an edict is destroyed,
    Edicts; an object or entity stands, Objects). Construction: a structure whose location left
    is no longer supported, and :func:`check` destroys it (Structures; C-23). :func:`leave` is
    the only way off the board, so no position ever names a host that is not on it.
    """
    hosts, bond, ctrl, free_ctrl = s.host, s.bond, s.ctrl, s.free_ctrl
    for c in s.board:
        if hosts[c] == host:
            hosts[c], bond[c], free_ctrl[c] = -1, FREE, ctrl[c]


def destroy(s: State, card: int) -> None:
    leave(s, card, DISCARD)


def check(s: State) -> None:
    """Apply every type rule until none applies, or until a location's controller must choose
    which structures stay supported (Construction); clears ``dirty`` when the board is sound.

    Cards bonded to a card that left were already set free as it left (:func:`free_bonded`);
    here their type rules apply. Once the game is over nobody chooses (ruling C-28): the rules
    that need no decision still apply, and a location over its extent is left as it stands,
    ``dirty`` still set."""
    types, sizes_of, defs = s.tables.type, s.tables.size, s.defs
    while True:
        recompute_control(s)
        recompute_statics(s)
        bond, damage, host, boost = s.bond, s.damage, s.host, s.boost
        doomed = []
        sizes: dict[int, int] = {}
        for c in s.board:
            t = types[c]
            if t == EDICT:
                if bond[c] != ANCHORED:
                    doomed.append(c)  # Edicts: destroyed while unanchored
                continue
            if t == STRUCTURE:
                if bond[c] != CONSTRUCTED:
                    doomed.append(c)  # Structures: nothing rescues an unsupported structure
                    continue
                sizes[host[c]] = sizes.get(host[c], 0) + sizes_of[c]
            hurt = damage[c]
            # Combat: counters beyond integrity destroy (integrity(), inline: with counters
            # on it, above max(0, x) is above x).
            if hurt and t in DAMAGEABLE:
                changed = boost.get(c) if boost else None
                if hurt > defs[c].integrity + (changed[2] if changed else 0):
                    doomed.append(c)
        for c in doomed:
            destroy(s, c)
        if doomed:
            continue
        if sizes:
            place, over = s.place, []
            for loc, size in sizes.items():
                if place[loc] == BOARD and types[loc] == LOCATION and size > extent(s, loc):
                    over.append(loc)
            if over:
                loc = min(over, key=s.board.index)  # the first in board order
                if not s.is_over:
                    s.pending = (P_SUPPORT, s.ctrl[loc], loc)
                return
        s.dirty = False
        return


def supported_size(s: State, location: int) -> int:
    """The total size of the structures constructed on ``location``."""
    host, bond, defs = s.host, s.bond, s.defs
    return sum(defs[c].size for c in s.board if host[c] == location and bond[c] == CONSTRUCTED)


def structures_on(s: State, location: int) -> list[int]:
    host, bond = s.host, s.bond
    return [c for c in s.board if host[c] == location and bond[c] == CONSTRUCTED]


def zone_of(s: State, card: int) -> tuple[str, int]:
    """A permanent's zone: ``("free", seat)`` or ``("location", location id)`` (Zones)."""
    host, defs = s.host, s.defs
    x = card
    while host[x] >= 0:
        x = host[x]
        if defs[x].type == LOCATION:
            return ("location", x)
    return ("free", s.free_ctrl[x])


def take_control(s: State, card: int, seat: int) -> None:
    """``seat`` takes control of ``card`` (Control and ownership): a bonded card's bond breaks
    and it stands free in ``seat``'s free zone; a free card's zone, with its contents, moves."""
    if s.host[card] >= 0:
        s.host[card] = -1
        s.bond[card] = FREE
    s.free_ctrl[card] = seat
    s.dirty = True


# A card leaving fires its triggers (game.charter.effects, which imports this module: its
# functions are looked up when called, never while either module is still loading).
from game.charter import effects as _effects  # noqa: E402
