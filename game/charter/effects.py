"""The stack and what resolves from it (Resolution, Triggered, Activated, Transactional
abilities, Ability keywords), and the small vocabulary every card's effect is built from.

A card resolves into a permanent (or, an edict, performs and goes unless anchored); its
transactional abilities are part of that resolution, Affix first so that the edict it anchors
stands. An ability resolves by performing its effect; a reserve ability resolves by setting its
effect aside until the card next releases (ruling C-08). A chosen card that is no longer of its
class when the effect would touch it is left alone (ruling C-10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from game.charter.board import (
    DAMAGEABLE,
    ability_at,
    candidates,
    destroy,
    leave,
    matches,
    resilience,
    take_control,
)
from game.charter.cards import (
    STRUCTURE,
    TRANSACTIONAL,
    Ability,
    Selector,
)
from game.charter.state import (
    ABILITY_ITEM,
    ANCHORED,
    BOARD,
    CARD_ITEM,
    CONSEQUENCE,
    CONSTRUCTED,
    DISCARD,
    FREE,
    HAND,
    P_TARGET,
    PRINTED,
    RESERVE_ITEM,
    STACK,
)

if TYPE_CHECKING:
    from game.charter.state import State

Ref = tuple[int, int, int]


def queue_triggers(s: State, card: int, event: str) -> None:
    """Every triggered ability of ``card`` whose trigger is ``event`` fires (Triggered
    abilities); they wait in ``s.triggers`` until added to the stack in turn order."""
    for i in s.tables.triggers[card].get(event, ()):
        s.triggers.append((card, s.ctrl[card], (card, i, PRINTED), -1))


def queue_consequence(s: State, card: int) -> None:
    s.triggers.append((card, s.ctrl[card], (card, 0, CONSEQUENCE), -1))


def flush_triggers(s: State) -> int:
    """Add the waiting triggered abilities to the stack in turn order, beginning with the turn
    player (Triggered abilities); within one player, in the order they fired (ruling C-13).
    One that chooses a card has its controller choose as it goes on (C-33): with one candidate
    it is chosen, with none the ability does nothing (C-09), with more the flush stops at a
    ``target`` decision, the rest waiting. Returns the controller of the last added, or -1."""
    n, tp = s.n, s.turn_player
    waiting = s.triggers
    if len(waiting) > 1:
        waiting = sorted(waiting, key=lambda t: (t[1] - tp) % n)  # stable: firing order kept
    s.triggers = []
    last = -1
    for k, (card, controller, ref, target) in enumerate(waiting):
        if not s.alive[controller]:
            continue
        if target < 0:
            sel = ability_at(s, ref).chooses
            if sel is not None:
                options = trigger_targets(s, card, controller, sel)
                if not options:
                    continue
                if len(options) > 1:
                    s.triggers = waiting[k:]
                    s.pending = (P_TARGET, controller, card, ref)
                    return last
                target = options[0]
        s.stack.append((ABILITY_ITEM, card, controller, ref, target))
        last = controller
    return last


def trigger_targets(s: State, card: int, controller: int, sel: Selector) -> list[int]:
    """The cards a triggered ability of ``card`` may choose (never the card itself)."""
    return [c for c in candidates(s, sel, controller) if c != card]


def choose_target(s: State, chosen: int) -> None:
    """The ``target`` decision: the first waiting trigger takes ``chosen``."""
    card, controller, ref, _ = s.triggers[0]
    s.triggers[0] = (card, controller, ref, chosen)
    s.pending = None


def resolve_top(s: State) -> None:
    """The last addition resolves (Resolution)."""
    kind, card, controller, ref, target = s.stack.pop()
    if kind == CARD_ITEM:
        _resolve_card(s, card, controller, target)
        return
    assert ref is not None
    ability = ability_at(s, ref)
    if kind == RESERVE_ITEM:
        # Activated abilities: reserve is paid up front, its effect deferred until the card
        # next releases (ruling C-08); a card gone from the board takes it along.
        if s.place[card] == BOARD:
            s.deferred.append((card, controller, ref, target))
        return
    perform(s, ability, card, controller, target)


def _resolve_card(s: State, card: int, controller: int, chosen: int) -> None:
    d = s.defs[card]
    s.place[card] = BOARD
    s.board.append(card)
    s.ctrl[card] = controller
    s.free_ctrl[card] = controller
    s.committed[card] = 0  # Commitment: a card arrives on the board released
    s.dirty = True
    # Construction: a structure is constructed on the location chosen when it was played, if
    # that is still on the board; otherwise it is unsupported and the check destroys it.
    if d.type == STRUCTURE and chosen >= 0 and s.place[chosen] == BOARD:
        s.host[card], s.bond[card] = chosen, CONSTRUCTED
    for a in d.abilities:
        if a.keyword == "Affix":
            _anchor(s, card, chosen, a, controller)
    for a in d.abilities:
        if a.kind == TRANSACTIONAL and a.keyword is None and a.effect is not None:
            perform(s, a, card, controller, chosen)
    queue_triggers(s, card, "enters")


def _anchor(s: State, card: int, host: int, a: Ability, controller: int) -> None:
    """Affix and Attach: anchor ``card`` to ``host`` if the host is still of its class."""
    assert a.host is not None
    if host < 0 or host == card or not matches(s, a.host, host, controller):
        return
    x = host
    while x >= 0:  # never anchor a card beneath itself
        if x == card:
            return
        x = s.host[x]
    s.host[card], s.bond[card] = host, ANCHORED
    s.dirty = True


def perform(s: State, a: Ability, card: int, controller: int, target: int) -> None:
    """Perform ``a`` of ``card`` for ``controller`` on the chosen ``target`` (or -1)."""
    if a.keyword == "Attach":
        if s.place[card] == BOARD:
            _anchor(s, card, target, a, controller)
        return
    if a.keyword == "Free":
        assert a.target is not None
        if target >= 0 and matches(s, a.target, target, controller):
            # Ability keywords: Free evaluates the card as free, where its controller stood.
            s.host[target], s.bond[target] = -1, FREE
            s.free_ctrl[target] = s.ctrl[target]
            s.dirty = True
        return
    effect = a.effect
    if effect is None:
        return
    do = effect.do
    if effect.target == "self":
        victim = card if s.place[card] == BOARD else -1
    elif effect.target == "host":
        victim = s.host[card] if s.place[card] == BOARD else -1
    elif isinstance(effect.target, Selector):
        victim = target if target >= 0 and matches(s, effect.target, target, controller) else -1
    else:
        victim = -1
    if effect.target == "opponents":
        damage_players(s, controller)
    elif do == "draw":
        draw(s, controller, effect.amount)
    elif do == "add":
        s.pools[controller][effect.identity] += effect.amount
    elif victim < 0:
        return  # ruling C-10: the chosen card is gone or no longer qualifies
    elif do == "damage":
        deal_damage(s, victim, effect.amount)
    elif do == "destroy":
        destroy(s, victim)
    elif do == "return":
        leave(s, victim, HAND)
    elif do == "release":
        release(s, victim)
    elif do == "repair":
        s.damage[victim] = max(0, s.damage[victim] - effect.amount)
    elif do == "control":
        take_control(s, victim, controller)
    elif do == "counter":
        counter(s, victim)


def deal_damage(s: State, card: int, amount: int) -> None:
    """Damage reduced by the receiver's resilience, kept as counters (Combat, Entities)."""
    if s.defs[card].type in DAMAGEABLE:
        dealt = amount - resilience(s, card)
        if dealt > 0:
            s.damage[card] += dealt
            s.dirty = True


def damage_players(s: State, controller: int) -> None:
    """Damage dealt to each of ``controller``'s opponents (C-34): "the moment any damage is
    dealt to an exposed player, that player is defeated" (Defense and defeat); a player who
    controls a location carries no counters, and the damage does nothing to them."""
    from game.charter.turns import defeat

    for p in range(s.n):
        if p != controller and s.alive[p] and s.exposed(p) and s.winner < 0:
            defeat(s, p)


def counter(s: State, card: int) -> None:
    """A card on the stack is answered: it leaves the stack for its owner's discard pile."""
    for i, item in enumerate(s.stack):
        if item[0] == CARD_ITEM and item[1] == card:
            del s.stack[i]
            s.place[card] = DISCARD
            s.discards[s.owner[card]].append(card)
            return


def release(s: State, card: int) -> None:
    """``card`` releases, restoring its readiness; a reserve effect set aside on it fires, and
    so do its ``releases`` triggers if it was committed."""
    if s.committed[card] and "releases" in s.tables.triggers[card]:
        queue_triggers(s, card, "releases")
    s.committed[card] = 0
    if s.deferred:
        _fire_deferred(s, card)


def _fire_deferred(s: State, card: int) -> None:
    """The reserve effects set aside on ``card`` fire as it releases (ruling C-08)."""
    waiting = [d for d in s.deferred if d[0] == card]
    if waiting:
        s.deferred = [d for d in s.deferred if d[0] != card]
        s.triggers.extend(waiting)


def draw(s: State, seat: int, count: int) -> None:
    """``seat`` draws from the top of its deck; an empty deck gives nothing (ruling C-18)."""
    deck, hand, place = s.decks[seat], s.hands[seat], s.place
    for _ in range(min(count, len(deck))):
        c = deck.pop()
        place[c] = HAND
        hand.append(c)


def stack_cards(s: State) -> list[int]:
    return [item[1] for item in s.stack if item[0] == CARD_ITEM and s.place[item[1]] == STACK]
