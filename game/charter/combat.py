"""Combat and defense (Combat, Defense and defeat, Entities, Structures, Locations).

Three atomic actions: attackers are declared, blockers are declared, all combat damage resolves
at once; players respond only between them. Inside an atomic action the deciding player makes
each of its parts as one decision (``attack``…``attacks done``, ``block``…``blocks done``,
``deal`` one point at a time), and nobody else acts until it is complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from game.charter.board import resilience, strength
from game.charter.cards import ENTITY, LOCATION, STRUCTURE
from game.charter.effects import queue_triggers
from game.charter.state import BOARD, CONSTRUCTED, P_DIVIDE

if TYPE_CHECKING:
    from game.charter.state import State


def attack_options(s: State) -> list[tuple[int, int, int]]:
    """(attacker, location or seat, 1 if a seat) for every attack still to be declared."""
    tp, types, ctrl, committed = s.turn_player, s.tables.type, s.ctrl, s.committed
    ready = []
    for c in s.board:
        if types[c] == ENTITY and ctrl[c] == tp and not committed[c]:
            ready.append(c)
    if s.attackers:
        declared = {a for a, _, _ in s.attackers}
        ready = _undeclared(ready, declared)
    if not ready:
        return []
    held: dict[int, list[int]] = {}  # seat -> the locations it controls, in board order
    for c in s.board:
        if types[c] == LOCATION:
            held.setdefault(ctrl[c], []).append(c)
    targets: list[tuple[int, int]] = []
    for p in range(s.n):
        if p == tp or not s.alive[p]:
            continue
        locations = held.get(p)
        # Locations: while a player controls a location, attacks on them go to their locations.
        if locations:
            targets.extend((loc, 0) for loc in locations)
        else:
            targets.append((p, 1))
    return _pairs(ready, targets)


def _undeclared(ready: list[int], declared: set[int]) -> list[int]:
    return [c for c in ready if c not in declared]


def _pairs(ready: list[int], targets: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    return [(a, t, is_seat) for a in ready for t, is_seat in targets]


def declare_attack(s: State, attacker: int, target: int, is_seat: int) -> None:
    """An uncommitted entity is committed to the attack (Entities, Commitment)."""
    s.committed[attacker] = 1
    s.attackers.append((attacker, target, is_seat))


def attacks_declared(s: State) -> None:
    for a, _, _ in s.attackers:
        queue_triggers(s, a, "attacks")


def defender_of(s: State, target: int, is_seat: int) -> int:
    return target if is_seat else s.ctrl[target]


def defenders(s: State) -> list[int]:
    """The attacked players, in turn order from the turn player's left."""
    attacked = {defender_of(s, t, k) for _, t, k in s.attackers if k or s.place[t] == BOARD}
    out, p = [], s.left_of(s.turn_player)
    while p != s.turn_player:
        if p in attacked:
            out.append(p)
        p = s.left_of(p)
    return out


def block_options(s: State, defender: int) -> list[tuple[int, int]]:
    """(blocker, attacker) pairs open to ``defender``: any of their entities against any attack
    on them or their locations, committed or not; a structure only against attackers of the
    location it is constructed on (Defense and defeat). A blocker blocks one attacker (C-15)."""
    types, ctrl, host, bond, place = s.tables.type, s.ctrl, s.host, s.bond, s.place
    busy = {b for b, _ in s.blocks}
    mine = []  # the attacks on the defender or their locations (plain loops: no cells)
    for attack in s.attackers:
        t = attack[1]
        if t == defender if attack[2] else place[t] == BOARD and ctrl[t] == defender:
            mine.append(attack)
    out: list[tuple[int, int]] = []
    if not mine:
        return out
    for c in s.board:
        if ctrl[c] != defender or c in busy:
            continue
        kind = types[c]
        if kind == ENTITY:
            for a, _, _ in mine:
                out.append((c, a))
        elif kind == STRUCTURE and bond[c] == CONSTRUCTED:
            for a, tgt, k in mine:
                if not k and tgt == host[c]:
                    out.append((c, a))
    return out


def plan_divisions(s: State) -> None:
    """Who divides which strength pool among whom (Combat: strength is a pool, never a
    multiplier; Locations strike back once, divided by the defender).

    Combat is between sides (C-32): a blocker its attacker's controller now controls blocks no
    more (the attacker stays blocked, C-24), and an attacker whose controller now controls what
    it attacks deals it nothing."""
    ctrl = s.ctrl
    if s.blocks:
        s.blocks = [(b, a) for b, a in s.blocks if ctrl[b] != ctrl[a]]
    blockers: dict[int, list[int]] = {}
    for b, a in s.blocks:
        blockers.setdefault(a, []).append(b)
    tasks: list[tuple[int, int, tuple[int, ...], int]] = []
    assigned: list[tuple[int, int]] = []
    struck: dict[int, list[int]] = {}
    blocked = s.blocked
    for a, t, k in s.attackers:
        faced = blockers.get(a)
        pts = strength(s, a)
        if faced:
            _divide(s.ctrl[a], a, tuple(faced), pts, tasks, assigned)
        elif a in blocked:
            continue  # Combat: its damage goes only to its blockers, and none is left (C-24)
        elif not k and s.place[t] == BOARD and ctrl[t] != ctrl[a]:
            assigned.extend([(a, t)] * pts)  # Defense and defeat: it strikes the location
            struck.setdefault(t, []).append(a)
    for b, a in s.blocks:
        assigned.extend([(b, a)] * strength(s, b))  # a blocker faces one attacker
    for loc, hitters in struck.items():
        if s.defs[loc].type == LOCATION:
            _divide(s.ctrl[loc], loc, tuple(hitters), strength(s, loc), tasks, assigned)
    s.divisions, s.assigned = tasks, assigned
    next_division(s)


def _divide(
    chooser: int,
    source: int,
    receivers: tuple[int, ...],
    pts: int,
    tasks: list[tuple[int, int, tuple[int, ...], int]],
    assigned: list[tuple[int, int]],
) -> None:
    if pts <= 0:
        return
    if len(receivers) == 1:
        assigned.extend([(source, receivers[0])] * pts)
    else:
        tasks.append((chooser, source, receivers, pts))


def next_division(s: State) -> None:
    """Ask the next division, or resolve all combat damage when none is left."""
    if s.divisions:
        chooser, source, receivers, pts = s.divisions[0]
        s.pending = (P_DIVIDE, chooser, source, receivers, pts)
        return
    s.pending = None
    resolve_damage(s)


def deal_point(s: State, receiver: int) -> None:
    chooser, source, receivers, pts = s.divisions[0]
    s.assigned.append((source, receiver))
    if pts > 1:
        s.divisions[0] = (chooser, source, receivers, pts - 1)
    else:
        s.divisions.pop(0)
    next_division(s)


def resolve_damage(s: State) -> None:
    """All combat damage at once: each receiver's share from each source, less its resilience
    (ruling C-16); unblocked attackers on a player strike them (an exposed player is then
    defeated, Defense and defeat)."""
    shares: dict[tuple[int, int], int] = {}
    place, get = s.place, shares.get
    for pair in s.assigned:  # (source, receiver)
        if place[pair[0]] == BOARD and place[pair[1]] == BOARD:
            shares[pair] = get(pair, 0) + 1
    blocked = set(s.blocked)  # an attacker blocked stays blocked (C-24)
    ctrl, hit_players = s.ctrl, set()
    for a, t, k in s.attackers:
        if k and a not in blocked and ctrl[a] != t and strength(s, a) > 0:  # C-32
            hit_players.add(t)
    # Damage is reduced against the resilience each receiver has before any of it lands.
    dealt = []
    for (_, r), pts in shares.items():
        dealt.append((r, pts - resilience(s, r)))
    for receiver, amount in dealt:
        if amount > 0:
            s.damage[receiver] += amount
    s.dirty = True
    for seat in sorted(hit_players):
        if s.alive[seat] and s.exposed(seat):
            _turns.defeat(s, seat)
    s.attackers, s.blocks, s.blocked, s.assigned = [], [], [], []


# A defeat hands back to the flow of play (game.charter.turns, which imports this module: its
# functions are looked up when called, never while either module is still loading).
from game.charter import turns as _turns  # noqa: E402
