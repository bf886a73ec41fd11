"""The flow of play: setup and mulligans, the six phases, the priority round, and which actions
are legal at each decision (Game setup, Turn structure, Resolution, Activated abilities).

Every phase opens a round with the turn player; a round passes clockwise and ends when every
living player has passed in succession. With the stack empty that ends the phase (so the stack
is always empty when a phase ends); otherwise the stack resolves, last addition first, until it
empties (a new round, turn player first) or something is added (the round reopens with the
player to the left of whoever added it). A player whose only legal action is to pass is passed
for: that is no decision (docs/charter.md, "Decisions").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from game.charter import actions as A
from game.charter.actions import (
    ATTACK,
    ATTACKS_DONE,
    BLOCK,
    BLOCKS_DONE,
    CONSUME,
    DEAL,
    KEEP,
    MULLIGAN,
    NEGLECT,
    PASS,
    PAY,
    PLAY,
    PRODUCE,
    TARGET,
    UNSUPPORT,
    UPKEEP,
    USE,
)
from game.charter.board import (
    abilities_of,
    ability_at,
    candidates,
    check,
    destroy,
    leave,
    matches,
    structures_on,
)
from game.charter.cards import ACTIVATED, ANY, INTERRUPT, LOCATION, YOU, Ability, Selector
from game.charter.cards import RESERVE as RESERVE_SPEED
from game.charter.combat import (
    attack_options,
    attacks_declared,
    block_options,
    deal_point,
    declare_attack,
    defenders,
    plan_divisions,
)
from game.charter.effects import (
    choose_target,
    draw,
    flush_triggers,
    queue_consequence,
    queue_triggers,
    release,
    resolve_top,
    trigger_targets,
)
from game.charter.payment import begin, can_pay, can_pay_from, choices, choose, resources
from game.charter.state import (
    ABILITY_ITEM,
    ACTION,
    AFTER_ATTACKS,
    AFTER_BLOCKS,
    AFTER_DAMAGE,
    ANCHORED,
    BLOCKING,
    BOARD,
    CARD_ITEM,
    COMBAT,
    DECK,
    DECLARING,
    DISCARD,
    DIVIDING,
    DRAW,
    END,
    MAINTENANCE,
    MIN_HAND,
    NO_COMBAT,
    P_ATTACK,
    P_BLOCK,
    P_DIVIDE,
    P_MULLIGAN,
    P_PAY,
    P_SUPPORT,
    P_TARGET,
    P_UPKEEP,
    RELEASE,
    RESERVE_ITEM,
    STACK,
    State,
)
from game.charter.tables import PLAY_CLASS, PLAY_LOCATION, PLAY_NONE, Tables

if TYPE_CHECKING:
    pass

_PASS = (A.PASS,)


# ----------------------------------------------------------------------------- legal actions


_PAY_KINDS = {"produce": PRODUCE, "pay": PAY, "consume": CONSUME}


def legal_actions(s: State) -> tuple[int, ...]:
    p = s.pending
    if p is None:
        return tuple(priority_actions(s, s.priority))
    tag, seat = p[0], p[1]
    enc = A.encode
    if tag == P_MULLIGAN:
        return (A.KEEP, A.MULLIGAN)
    if tag == P_PAY:
        return tuple([_PAY_KINDS[what] | x << 5 for what, x in choices(s)])
    if tag == P_UPKEEP:
        out = []
        for c in p[2]:
            obligation = s.defs[c].maintenance
            assert obligation is not None
            if can_pay(s, seat, obligation[0], c):
                out.append(enc(A.UPKEEP, c))
            out.append(enc(A.NEGLECT, c))
        return tuple(out)
    if tag == P_ATTACK:
        options = attack_options(s)
        return (ATTACKS_DONE, *[ATTACK | a << 5 | t << 13 | k << 21 for a, t, k in options])
    if tag == P_BLOCK:
        return (BLOCKS_DONE, *[BLOCK | b << 5 | a << 13 for b, a in block_options(s, seat)])
    if tag == P_DIVIDE:
        deal = DEAL | p[2] << 5
        return tuple([deal | r << 13 for r in p[3]])
    if tag == P_TARGET:
        sel = ability_at(s, p[3]).chooses
        assert sel is not None
        return tuple([TARGET | c << 5 for c in trigger_targets(s, p[2], seat, sel)])
    assert tag == P_SUPPORT
    return tuple([UNSUPPORT | c << 5 for c in structures_on(s, p[2])])


def priority_actions(s: State, p: int) -> list[int]:
    """What ``p`` may do holding priority: pass; the turn player anything of standard speed in
    their action phase with the stack empty; anyone, anything of interrupt speed."""
    out = [PASS]
    tables, place, board = s.tables, s.place, s.board
    standard = p == s.turn_player and s.phase == ACTION and not s.stack
    hand = s.hands[p]
    ctrl = s.ctrl
    terms: list[tuple[Selector, int]] = []  # Interrupt terms in force, with their reader
    if not standard:
        terms = _hand_terms(tables, place, ctrl, p)
        # Only interrupt speed open and no Interrupt term in force: skip what can never be
        # played.
        if not terms:
            if tables.self_interrupt_cards.isdisjoint(hand):
                hand = []
            else:
                hand = _self_interrupt_cards(tables.self_interrupt, hand)
    # (No comprehension in this function reads its locals: each would make them cells.)
    if tables.any_grants_activated and _granting(s):
        sources = _controlled(board, ctrl, p)
    else:
        # The few cards of the game with such an ability, in board order.
        among = tables.activated_cards if standard else tables.interrupt_cards
        sources = []
        for c in among:
            if place[c] == BOARD and ctrl[c] == p:
                sources.append(c)
        if len(sources) > 1:
            sources.sort(key=board.index)
    if not hand and not sources:
        return out
    have: list[int] | None = None
    total = 0  # sum(have)
    append = out.append
    if hand:
        defs, name_id, self_interrupt = s.defs, tables.name_id, tables.self_interrupt
        play_kind = tables.play_kind
        seen: set[int] = set()
        locations: list[int] | None = None  # where p's structures may go: the same for all
        for c in hand:
            k = name_id[c]
            if k in seen:  # copies in a hand are interchangeable: the first is offered
                continue
            seen.add(k)
            # Ability keywords: Interrupt names its own card, or every card its term matches.
            if not (standard or self_interrupt[c] or _termed(s, terms, c)):
                continue
            d = defs[c]
            price = d.price
            if price.need or price.additional:
                if have is None:
                    have = resources(s, p)
                    total = sum(have)
                if price.plain:
                    # can_pay_from for a price resources alone pay (a card in hand commits
                    # nothing): every named requirement, then the additional ones from the rest.
                    short = False
                    for identity, count in price.need:
                        if have[identity] < count:
                            short = True
                            break
                    if short or (price.additional and total - len(price.named) < price.additional):
                        continue
                elif not can_pay_from(s, p, price, c, d.type, have):
                    continue
            elif not price.plain and not can_pay_from(s, p, price, c, d.type, have):
                continue
            play = PLAY | c << 5
            kind = play_kind[c]
            if kind == PLAY_NONE:
                append(play)  # play_choices: [-1]
                continue
            if kind == PLAY_LOCATION:
                if locations is None:
                    locations = play_choices(s, c, p)
                chosen = locations
            else:
                chosen = play_choices(s, c, p)
            for x in chosen:
                append(play | (x + 1) << 13)
    granting = tables.any_grants_activated  # else only printed abilities are activated
    committed = s.committed
    for c in sources:
        listed: Sequence[tuple[int, Ability]] = (
            [(i, a) for i, (_, a) in enumerate(abilities_of(s, c)) if a.kind == ACTIVATED]
            if granting
            else tables.activated_abilities[c]
        )
        for i, a in listed:
            if a.speed != INTERRUPT and not standard:
                continue
            price = a.price
            if price.commit and committed[c]:
                continue  # can_pay_from: a committed card cannot commit to pay
            if not price.bare:  # else a source on the board pays it: nothing, or itself
                if (price.need or price.additional) and have is None:
                    have = resources(s, p)
                if not can_pay_from(s, p, price, c, -1, have):
                    continue
            use = USE | c << 5 | i << 13
            if a.chooses is None:
                append(use)  # ability_choices: [-1]
                continue
            for x in ability_choices(s, a, c, p):
                append(use | (x + 1) << 21)
    return out


def _self_interrupt_cards(self_interrupt: tuple[bool, ...], hand: list[int]) -> list[int]:
    return [c for c in hand if self_interrupt[c]]


def _granting(s: State) -> bool:
    """Whether an anchored card grants its host an activated ability (Ability keywords)."""
    grants, bond = s.tables.grants_activated, s.bond
    return any(grants[g] for g in s.board if bond[g] == ANCHORED)


def _controlled(board: list[int], ctrl: list[int], p: int) -> list[int]:
    return [c for c in board if ctrl[c] == p]


def _hand_terms(
    tables: Tables, place: bytearray, ctrl: list[int], p: int
) -> list[tuple[Selector, int]]:
    """The Interrupt terms in force that reach ``p``'s hand, each with its reader: only such a
    term can let ``p`` play a card there (C-25: read from the Interrupt card's controller; a
    hand holds its owner's cards)."""
    terms: list[tuple[Selector, int]] = []
    for b in tables.term_cards:
        if place[b] == BOARD:
            reader = ctrl[b]
            for a in tables.terms[b]:
                sel = a.target
                assert sel is not None
                if sel.zone == "hand" and (
                    sel.controller == ANY or (reader == p) == (sel.controller == YOU)
                ):
                    terms.append((sel, reader))
    return terms


def _termed(s: State, terms: list[tuple[Selector, int]], card: int) -> bool:
    """Whether an Interrupt term in force names ``card`` (Ability keywords)."""
    return any(matches(s, sel, card, reader) for sel, reader in terms)


def _silent(s: State, p: int) -> bool:
    """A quick sufficient test that ``p``, holding priority outside standard speed, can only
    pass (:func:`priority_actions` would offer nothing else): no granted activated ability in
    the game, no card with an interrupt-speed ability under their control that could pay its
    price (a committed card cannot pay a price that commits it), and no card in their hand
    that may be played at interrupt speed — naming itself Interrupt, or named by an Interrupt
    term in force — whose price they can pay and that has a host or target to choose (the
    same tests :func:`priority_actions` makes, without building its list)."""
    tables, place, ctrl = s.tables, s.place, s.ctrl
    if tables.any_grants_activated:
        return False
    if tables.interrupt_cards:
        committed, commits = s.committed, tables.interrupt_commits
        for c in tables.interrupt_cards:
            if place[c] == BOARD and ctrl[c] == p and not (committed[c] and commits[c]):
                return False
    hand = s.hands[p]
    if not hand:
        return True
    playable: list[int] = []
    if not tables.self_interrupt_cards.isdisjoint(hand):
        playable = _self_interrupt_cards(tables.self_interrupt, hand)
    types = tables.type
    for term, reader in _hand_terms(tables, place, ctrl, p):
        mask = term.types
        for c in hand:
            if mask >> types[c] & 1 and matches(s, term, c, reader):
                playable.append(c)  # a term naming a card in p's hand
    if not playable:
        return True
    have = None
    defs, play_kind, play_class = s.defs, tables.play_kind, tables.play_class
    for c in playable:
        kind = play_kind[c]
        if kind == PLAY_CLASS and not s.stack:
            sel = play_class[c]
            assert sel is not None
            if sel.zone == "stack":
                continue  # nothing on the stack to choose (play_choices, in short)
        d = defs[c]
        price = d.price
        if (price.need or price.additional) and have is None:
            have = resources(s, p)
        if can_pay_from(s, p, price, c, d.type, have) and (
            kind == PLAY_NONE or play_choices(s, c, p)
        ):
            return False
    return True


def interrupt_speed(s: State, card: int, p: int) -> bool:
    """Whether ``card`` may be played at interrupt speed (Ability keywords: Interrupt names the
    card it is printed on, or every card its term matches while it is in force)."""
    tables = s.tables
    if tables.self_interrupt[card]:
        return True
    terms = tables.terms
    for b in s.board:
        for a in terms[b]:
            assert a.target is not None
            if matches(s, a.target, card, s.ctrl[b]):
                return True
    return False


def play_choices(s: State, card: int, p: int) -> list[int]:
    """The hosts or targets ``card`` may be played with ([-1]: none needed; []: unplayable,
    ruling C-09). A structure is played on a location its player controls (Construction)."""
    tables = s.tables
    kind = tables.play_kind[card]
    if kind == PLAY_NONE:
        return [-1]
    if kind == PLAY_LOCATION:
        types, ctrl = tables.type, s.ctrl
        found = []
        for c in s.board:
            if types[c] == LOCATION and ctrl[c] == p:
                found.append(c)
        return found
    sel = tables.play_class[card]
    assert sel is not None
    found = candidates(s, sel, p)
    if card in found:
        found.remove(card)
    return found


def ability_choices(s: State, a: Ability, card: int, p: int) -> list[int]:
    sel = a.chooses
    if sel is None:
        return [-1]
    found = candidates(s, sel, p)
    if card in found:
        found.remove(card)
    if a.keyword == "Attach":
        # Attach moves it to a new host, never one anchored beneath it (C-31).
        host = s.host
        if card in host:  # something stands on it: look beneath
            found = _not_beneath(s, found, card)
        elif host[card] in found:
            found.remove(host[card])
    return found


def _not_beneath(s: State, found: list[int], card: int) -> list[int]:
    return [c for c in found if c != s.host[card] and not _beneath(s, c, card)]


def _beneath(s: State, c: int, card: int) -> bool:
    """Whether ``c`` is anchored, at any depth, to ``card``."""
    host = s.host
    x = host[c]
    while x >= 0:
        if x == card:
            return True
        x = host[x]
    return False


# ----------------------------------------------------------------------------- taking actions


def take(s: State, action: int, legal: tuple[int, ...] = ()) -> None:
    """Take ``action``, one of ``legal`` (the decision's actions, when the caller has them:
    an attacker or blocker declared leaves the others' options as they were, so the next
    list is that one less the card's), then play on to the next decision."""
    kind, a, b = action & 31, action >> 5 & 255, action >> 13 & 255
    p = s.priority if s.pending is None else s.pending[1]  # current_player: the game is on
    if kind == ATTACK:
        declare_attack(s, a, b, action >> 21 & 255)
        if legal:
            # attack_options less the attacker now committed: nothing else moved (Combat).
            s._legal = _without(legal, a, ATTACKS_DONE)
    elif kind == PLAY:
        s.hands[p].remove(a)
        s.place[a] = STACK
        s.ctrl[a] = p
        begin(s, p, s.defs[a].price, a, ("card", a, b - 1))
    elif kind == ATTACKS_DONE:
        s.pending = None
        if s.attackers:
            attacks_declared(s)
            s.step = AFTER_ATTACKS
            open_window(s)
        else:
            _to_end_phase(s)
    elif kind == PASS:
        do_pass(s)
    elif kind == USE:
        ref, ability = abilities_of(s, a)[b]
        item = RESERVE_ITEM if ability.speed == RESERVE_SPEED else ABILITY_ITEM
        begin(s, p, ability.price, a, ("ability", item, a, ref, (action >> 21 & 255) - 1))
    elif kind == BLOCK:
        s.blocks.append((a, b))
        if b not in s.blocked:
            s.blocked.append(b)
        if legal:
            # block_options less the blocker now busy (C-15): nothing else moved.
            s._legal = _without(legal, a, BLOCKS_DONE)
    elif kind == BLOCKS_DONE:
        _next_defender(s, s.pending[2] if s.pending else ())
    elif kind == PRODUCE:
        choose(s, "produce", a)
    elif kind == DEAL:
        deal_point(s, b)
        if s.pending is None:
            _after_damage(s)
    elif kind in (KEEP, MULLIGAN):
        _mulligan(s, p, kind == MULLIGAN)
    elif kind == UPKEEP:
        obligation = s.defs[a].maintenance
        assert obligation is not None
        assert s.pending is not None
        begin(s, p, obligation[0], a, ("upkeep", a, s.pending[2]))
    elif kind == NEGLECT:
        assert s.pending is not None
        queue_consequence(s, a)  # Maintenance: the unpaid obligation triggers its consequence
        _upkeep_done(s, p, a, s.pending[2])
    elif kind == PAY:
        choose(s, "pay", a)
    elif kind == CONSUME:
        choose(s, "consume", a)
    elif kind == UNSUPPORT:
        s.pending = None
        destroy(s, a)  # Construction: the rest are destroyed as unsupported
    elif kind == TARGET:
        choose_target(s, a)
    run(s)


def _without(legal: tuple[int, ...], card: int, done: int) -> tuple[int, ...]:
    """``legal`` less the actions whose first argument is ``card`` (``done`` kept)."""
    return tuple([x for x in legal if x >> 5 & 255 != card or x == done])


def after_payment(s: State, payer: int, then: tuple[Any, ...]) -> None:
    """A price is paid: the card or ability goes onto the stack, or the obligation is met."""
    if then[0] == "card":
        s.stack.append((CARD_ITEM, then[1], payer, None, then[2]))
        added(s, payer)
    elif then[0] == "ability":
        _, item, card, ref, chosen = then
        s.stack.append((item, card, payer, ref, chosen))
        added(s, payer)
    else:
        _upkeep_done(s, payer, then[1], then[2])


def added(s: State, adder: int) -> None:
    """Each new addition reopens the round, beginning left of whoever added (Resolution)."""
    s.resolving = False
    s.passes = 0
    s.priority = s.left_of(adder)


def do_pass(s: State) -> None:
    passes = s.passes = s.passes + 1
    if passes >= sum(s.alive):
        s.passes = 0
        if s.stack:
            s.resolving = True
        else:
            end_window(s)
    else:
        s.priority = s.left_of(s.priority)


def open_window(s: State) -> None:
    """A new round with the stack empty: the turn player acts first (Turn structure)."""
    s.priority = s.turn_player
    s.passes = 0
    s.resolving = False


def run(s: State) -> None:
    """Play out everything that needs no decision: checks, triggers, resolution, forced passes.

    ``quiet`` tracks, a bit a seat, who was found able only to pass since the position last
    changed: a round of forced passes asks only the others. Nothing outside this call moves
    the position while it runs, so the marks are wiped wherever it moves here — a check, a
    trigger added, an item resolved, a phase that changes more than its name
    (:func:`end_window` says whose options it left alone)."""
    alive, max_turns = s.alive, s.max_turns  # alive: mutated in place only
    quiet = 0
    living = sum(alive)  # counted again after whatever may defeat a player
    while s.winner < 0 and s.turns <= max_turns and living > 1:  # not is_over
        if s.pending is not None:
            return
        if s.dirty:
            size = len(s.board)
            check(s)
            if s.pending is not None:
                return
            if len(s.board) != size:
                quiet = 0  # a card destroyed (else the check found what the marks saw)

        if s.triggers:
            quiet = 0
            last = flush_triggers(s)
            if last >= 0:
                added(s, last)
            continue
        if s.resolving:
            if s.stack:
                quiet = 0
                resolve_top(s)
                living = sum(alive)  # damage to the opponents (C-34)
            else:
                s.priority, s.passes, s.resolving = s.turn_player, 0, False  # open_window
            continue
        # The round: each player in turn who can only pass is passed for (C-26). Asking
        # changes nothing, so the round goes on here until someone decides or all passed.
        stack, n = s.stack, s.n
        standard_seat = s.turn_player if s.phase == ACTION and not stack else -1
        passes = s.passes
        while True:
            p = s.priority
            if p == standard_seat:
                legal = priority_actions(s, p)
                if len(legal) > 1:
                    s.passes = passes
                    s._legal = tuple(legal)
                    return
            elif not quiet >> p & 1:
                if not _silent(s, p):
                    legal = priority_actions(s, p)
                    if len(legal) > 1:
                        s.passes = passes
                        s._legal = tuple(legal)
                        return
                quiet |= 1 << p
            passes += 1  # do_pass, inline
            if passes < living:
                q = p + 1  # left_of, inline
                if q == n:
                    q = 0
                s.priority = q if alive[q] else s.left_of(q)
                continue
            s.passes = 0
            if stack:
                s.resolving = True
            else:
                quiet &= end_window(s) or 0
                living = sum(alive)  # combat damage (Defense and defeat)
            break
    if s.dirty:
        check(s)  # the game ended mid-action: the type rules still apply (ruling C-28)


# ----------------------------------------------------------------------------- phases


#: :func:`end_window`'s answer when the phase moved and nothing else: every seat's options
#: stand as they were.
UNCHANGED = -1


def end_window(s: State) -> int:
    """Every player passed with the stack empty: the phase (or combat step) moves on.

    Returns the seats (a bit each) whose interrupt-speed options the move cannot have changed
    (:func:`run`): all of them when only the phase or step moved, all but the drawing turn
    player after the draw when no class of the game reads a hand, none otherwise."""
    tp, phase = s.turn_player, s.phase
    if phase == RELEASE:
        s.phase = DRAW
        s.priority, s.passes, s.resolving = tp, 0, False  # open_window
        if not s.decks[tp]:
            return UNCHANGED  # an empty deck gives nothing (C-18)
        draw(s, tp, 1)  # Turn structure: the turn player draws one card
        return 0 if s.tables.reads_hands else ~(1 << tp)
    if phase == DRAW:
        s.phase = MAINTENANCE
        ctrl, upkeep = s.ctrl, s.tables.upkeep
        owed = []
        for c in s.board:
            if upkeep[c] and ctrl[c] == tp:
                owed.append(c)
        if owed:
            s.pending = (P_UPKEEP, tp, tuple(owed))
        else:
            s.priority, s.passes, s.resolving = tp, 0, False  # open_window
        return UNCHANGED
    if phase == MAINTENANCE:
        s.phase = ACTION
        s.priority, s.passes, s.resolving = tp, 0, False  # open_window
        return UNCHANGED
    if phase == ACTION:
        s.phase = COMBAT
        # No attack on a player's own first turn (Game setup); an attacker must be available.
        options = () if s.first_turn[tp] else attack_options(s)
        if options:
            s.step = DECLARING
            s.pending = (P_ATTACK, tp)
            s._legal = (ATTACKS_DONE, *[ATTACK | a << 5 | t << 13 | k << 21 for a, t, k in options])
        else:
            _to_end_phase(s)
        return UNCHANGED
    if phase == COMBAT:
        if s.step == AFTER_ATTACKS:
            s.step = BLOCKING
            _next_defender(s, tuple(defenders(s)))  # blocks triggers wait in s.triggers
            return UNCHANGED
        if s.step == AFTER_BLOCKS:
            s.step = DIVIDING
            living = sum(s.alive)
            plan_divisions(s)
            if s.pending is None:
                _after_damage(s)
            # Damage counters are no part of anyone's options; what they destroy, the check
            # does (run sees it); a defeat takes the defeated player's cards off the board.
            return UNCHANGED if sum(s.alive) == living else 0
        _to_end_phase(s)
        return UNCHANGED
    end_turn(s)
    return 0


def _to_end_phase(s: State) -> None:
    s.phase, s.step = END, NO_COMBAT
    open_window(s)


def _after_damage(s: State) -> None:
    s.step = AFTER_DAMAGE
    open_window(s)


def _next_defender(s: State, rest: tuple[int, ...]) -> None:
    """The next attacked player declares blockers; one with none to declare is skipped."""
    alive = s.alive
    if not all(alive):
        rest = tuple([p for p in rest if alive[p]])
    options: list[tuple[int, int]] = []
    while rest:
        options = block_options(s, rest[0])
        if options:
            break
        rest = rest[1:]
    if rest:
        s.pending = (P_BLOCK, rest[0], rest[1:])
        s._legal = (BLOCKS_DONE, *[BLOCK | b << 5 | a << 13 for b, a in options])
    else:
        s.pending = None
        s.step = AFTER_BLOCKS
        triggers = s.tables.triggers
        for b, _ in s.blocks:  # the atomic action is over: blockers' triggers fire (C-33)
            if "blocks" in triggers[b]:
                queue_triggers(s, b, "blocks")
        open_window(s)


def _upkeep_done(s: State, seat: int, card: int, owing: tuple[int, ...]) -> None:
    """One obligation settled; the turn player picks the next, in an order of their choosing."""
    ctrl, place = s.ctrl, s.place
    left = tuple(c for c in owing if c != card and place[c] == BOARD and ctrl[c] == seat)
    if left:
        s.pending = (P_UPKEEP, seat, left)
    else:
        s.pending = None
        open_window(s)


def end_turn(s: State) -> None:
    """The end phase closes: every pool clears and the turn passes (Turn structure)."""
    for pool in s.pools:
        pool[:] = [0] * len(pool)
    s.first_turn[s.turn_player] = False
    begin_turn(s, s.left_of(s.turn_player))


def begin_turn(s: State, seat: int) -> None:
    """The release phase: the turn player's committed cards release unless withheld."""
    s.turns += 1
    if s.turns > s.max_turns:
        return  # ruling C-19: the table's turn limit ends the game without a winner
    s.turn_player = seat
    s.phase, s.step = RELEASE, NO_COMBAT
    s.manifest_used = [0] * s.n
    ctrl, committed, withheld = s.ctrl, s.committed, s.withheld
    for c in s.board:
        if ctrl[c] == seat and committed[c] and c not in withheld:
            release(s, c)
    turn_start = s.tables.turn_start
    for c in s.board:
        if turn_start[c]:
            queue_triggers(s, c, "turn_start")
    open_window(s)


def _mulligan(s: State, seat: int, again: bool) -> None:
    """Game setup: a mulligan returns the hand, reshuffles and redraws one card fewer, to a
    minimum hand of three; a player may take as many as they wish (C-29)."""
    if again:
        hand, deck = s.hands[seat], s.decks[seat]
        size = max(len(hand) - 1, MIN_HAND)
        for c in hand:
            s.place[c] = DECK
        deck.extend(hand)
        hand.clear()
        s.shuffle(deck)
        draw(s, seat, size)
        return
    _next_mulligan(s, seat + 1)


def _next_mulligan(s: State, seat: int) -> None:
    while seat < s.n and not s.hands[seat]:  # an empty hand has nothing to return
        seat += 1
    if seat < s.n:
        s.pending = (P_MULLIGAN, seat)
        return
    s.pending = None
    begin_turn(s, 0)


def defeat(s: State, seat: int) -> None:
    """An exposed player dealt damage is defeated and leaves the game with what they own and
    control (ruling C-17); the last player standing wins."""
    s.alive[seat] = False
    for c in [c for c in s.board if s.owner[c] == seat or s.ctrl[c] == seat]:
        if s.place[c] == BOARD:
            leave(s, c, DISCARD)
    for item in [i for i in s.stack if i[2] == seat]:
        s.stack.remove(item)
        if item[0] == CARD_ITEM:
            s.place[item[1]] = DISCARD
            s.discards[s.owner[item[1]]].append(item[1])
    s.triggers = [t for t in s.triggers if t[1] != seat]
    s.deferred = [d for d in s.deferred if d[1] != seat]
    living = [p for p in range(s.n) if s.alive[p]]
    if len(living) == 1:
        s.winner = living[0]
