"""Prices (Resources, Commitment, Consume, Manifest, Privileges): whether one can be paid, and
paying it — the forced parts at once, the payer's choices as decisions.

Resources enter a pool by production (ruling C-01): while paying, the payer commits producers
they control, each adding what it produces to their running pool, and the price is paid from
the pool. One resource pays exactly one requirement whatever its tier; named requirements take
only their identity, additional ones any. Each requirement is filled from the pool or by a
producer, as the payer chooses (C-01). Named requirements are paid first (a resource of the
named identity is the only one that can pay them), then additional ones, then consumes. A choice
with one possible answer is made for the payer; a decision is asked only when answers differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from game.charter.actions import CONSUME, PAY, PRODUCE
from game.charter.board import destroy, matches
from game.charter.cards import Price, Selector
from game.charter.state import BOARD, P_PAY

if TYPE_CHECKING:
    from game.charter.state import State


# A payment choice's action kind (game.charter.turns.legal_actions reads choices() so).
_KINDS = {"produce": PRODUCE, "pay": PAY, "consume": CONSUME}


def consumable(s: State, sel: Selector, payer: int, source: int) -> list[int]:
    """The payer's own cards (owned and controlled, ruling C-14) of class ``sel``."""
    owner, ctrl = s.owner, s.ctrl
    return [
        c
        for c in s.board
        if c != source and owner[c] == payer and ctrl[c] == payer and matches(s, sel, c, payer)
    ]


def producers(s: State, payer: int, source: int, wanted: set[int] | None = None) -> list[int]:
    """Uncommitted producers ``payer`` controls (of a ``wanted`` identity, if given); of two
    copies alike in every respect only the first is offered, the choice between them being
    none (C-26)."""
    produces, ctrl, committed = s.tables.produces, s.ctrl, s.committed
    name_id = s.tables.name_id
    out = []
    names: set[int] = set()
    repeated = False
    for c in s.board:
        made = produces[c]
        if not made or ctrl[c] != payer or committed[c]:
            continue  # a price that commits its source has committed it already (C-30)
        if wanted is not None and wanted.isdisjoint(made):
            continue
        out.append(c)
        k = name_id[c]
        if k in names:
            repeated = True
        else:
            names.add(k)
    if not repeated:
        return out
    marked = _marked(s)
    seen: set[tuple[object, ...]] = set()
    kept = []
    for c in out:
        if c in marked:
            kept.append(c)  # something holds it, names it or waits on it: it is itself
            continue
        key = (name_id[c], s.owner[c], s.host[c], s.bond[c], s.damage[c], s.boost.get(c))
        if key not in seen:
            seen.add(key)
            kept.append(c)
    return kept


def _marked(s: State) -> set[int]:
    """The board cards that differ from any copy by more than their printed card, where they
    stand and their counters: a card anchored or constructed on them, a release withheld, a
    reserve effect or trigger waiting on them, a stack item or a combat naming them."""
    marked = set(s.host)  # every host, and -1 for the cards with none
    marked.discard(-1)
    marked.update(s.withheld)
    for item in s.stack:
        marked.add(item[1])
        marked.add(item[4])
    for waiting in (s.triggers, s.deferred):
        for card, _, _, target in waiting:
            marked.add(card)
            marked.add(target)
    for a, t, _ in s.attackers:
        marked.add(a)
        marked.add(t)
    for b, a in s.blocks:
        marked.add(b)
        marked.add(a)
    return marked


def can_pay(s: State, payer: int, price: Price, source: int, card_type: int = -1) -> bool:
    """Whether ``payer`` can pay ``price`` now (``source``: the card paying or being played)."""
    return can_pay_from(s, payer, price, source, card_type, None)


def resources(s: State, payer: int) -> list[int]:
    """What ``payer`` could put in their pool now: the pool, plus one resource of each identity
    every uncommitted producer they control produces (ruling C-01)."""
    have = s.pools[payer][:]
    produces, ctrl, committed = s.tables.produces, s.ctrl, s.committed
    for c in s.board:
        made = produces[c]
        if made and ctrl[c] == payer and not committed[c]:
            if len(made) == 1:
                have[made[0]] += 1
            else:
                for identity in made:
                    have[identity] += 1
    return have


def can_pay_from(
    s: State, payer: int, price: Price, source: int, card_type: int, have: list[int] | None
) -> bool:
    """:func:`can_pay` given ``have``, :func:`resources` of ``payer`` (None: worked out here),
    so that one priority round counts the producers once for every price it weighs."""
    if price.commit and (s.committed[source] or s.place[source] != BOARD):
        return False
    if price.manifest:
        grant = s.grant
        if grant is None or card_type not in grant.eligible:
            return False
        if s.manifest_used[payer] >= grant.per_turn:
            return False
    if price.need or price.additional:
        if have is None:
            have = resources(s, payer)
        made = s.tables.produces[source]
        if (
            made
            and price.commit  # committed to pay, it produces nothing more (C-30)
            and s.place[source] == BOARD
            and s.ctrl[source] == payer
            and not s.committed[source]
        ):
            have = have[:]
            for identity in made:
                have[identity] -= 1
        for identity, count in price.need:
            if have[identity] < count:
                return False
        # With every named requirement met, what is left is at least zero.
        if price.additional and sum(have) - len(price.named) < price.additional:
            return False
    if price.consume:
        chosen: set[int] = set()
        for sel in price.consume:
            for c in consumable(s, sel, payer, source):
                if c not in chosen:
                    chosen.add(c)  # the first one left
                    break
            else:
                return False
    return True


def begin(s: State, payer: int, price: Price, source: int, then: tuple[Any, ...]) -> None:
    """Pay ``price``: commitment and the manifest use at once, then resources and consumes,
    asking the payer where answers differ; ``then`` runs when all is paid."""
    if price.commit:
        s.committed[source] = 1
    if price.manifest:
        s.manifest_used[payer] += 1
    advance(s, (P_PAY, payer, price.need, price.additional, price.consume, source, then))


def advance(s: State, pending: tuple[Any, ...]) -> None:
    """Make every forced payment step; stop at the first real choice, or finish.

    Each requirement is filled by a pooled resource that can pay it or by committing a
    producer (the payer chooses: the book gives no order, C-01); a producer's resource pays at
    once (:func:`_produce_and_pay`). Named requirements come before additional ones, then
    consumes."""
    _, payer, need, additional, consume, source, then = pending
    pool = s.pools[payer]
    while True:
        if need or additional:
            options = _resource_options(s, payer, need, additional, source)
            if len(options) != 1:
                s.pending = (P_PAY, payer, need, additional, consume, source, then)
                s._legal = tuple(_KINDS[what] | x << 5 for what, x in options)  # choices(s)
                return
            what, x = options[0]
            if what == "pay":
                need, additional = _pay_from_pool(pool, need, additional, x)
            else:
                need, additional = _produce_and_pay(s, payer, x, need, additional)
            continue
        if consume:
            options_c = consumable(s, consume[0], payer, source)
            if len(options_c) == 1:
                destroy(s, options_c[0])  # Consume: to the payer's discard pile, as a payment
                consume = consume[1:]
                continue
            s.pending = (P_PAY, payer, need, additional, consume, source, then)
            s._legal = tuple(CONSUME | c << 5 for c in options_c)  # choices(s)
            return
        break
    s.pending = None
    _turns.after_payment(s, payer, then)


def _resource_options(
    s: State, payer: int, need: tuple[tuple[int, int], ...], additional: int, source: int
) -> list[tuple[str, int]]:
    """The ways to fill the next requirement: ``("pay", identity)`` from the pool, ``("produce",
    card)``; a choice that cannot differ is one option (C-26)."""
    pool = s.pools[payer]
    if need:
        wanted = {i for i, _ in need}
        made = producers(s, payer, source, wanted)
        produces = s.tables.produces
        paid: list[tuple[str, int]] = []
        for i in sorted(wanted):
            if pool[i]:
                for c in made:
                    if i in produces[c]:
                        break
                else:
                    # Only the pool can fill this identity's requirement: nothing to choose.
                    return [("pay", i)]
                paid.append(("pay", i))
        return paid + [("produce", c) for c in made]
    held = [i for i, k in enumerate(pool) if k]
    made = producers(s, payer, source)
    if not made and held and (len(held) == 1 or sum(pool) <= additional):
        return [("pay", held[0])]  # the pool alone pays, all of it or from one identity
    return [("pay", i) for i in held] + [("produce", c) for c in made]


def _pay_from_pool(
    pool: list[int], need: tuple[tuple[int, int], ...], additional: int, identity: int
) -> tuple[tuple[tuple[int, int], ...], int]:
    """One pooled resource of ``identity`` fills a named requirement of it, else an
    additional one."""
    pool[identity] -= 1
    if need:
        return _less(need, identity), additional
    return need, additional - 1


def _less(need: tuple[tuple[int, int], ...], identity: int) -> tuple[tuple[int, int], ...]:
    return tuple((i, k - (i == identity)) for i, k in need if i != identity or k > 1)


def _produce_and_pay(
    s: State, payer: int, card: int, need: tuple[tuple[int, int], ...], additional: int
) -> tuple[tuple[tuple[int, int], ...], int]:
    """Commit ``card`` to production; what it makes pays the requirement it was committed for
    at once (named ones first; an additional one when it makes a single identity), the rest
    staying in the pool. Leaving a fresh resource in the pool while paying with another is no
    choice worth asking: the producer left uncommitted could always make it later."""
    produce(s, payer, card)
    pool = s.pools[payer]
    made = s.defs[card].produces
    if need:
        for identity in made:
            if any(i == identity for i, _ in need):
                pool[identity] -= 1
                need = _less(need, identity)
        return need, additional
    if additional and len(made) == 1:
        pool[made[0]] -= 1
        additional -= 1
    return need, additional


def produce(s: State, payer: int, card: int) -> None:
    """Production: the card is committed and its resources join the payer's pool."""
    s.committed[card] = 1
    pool = s.pools[payer]
    for identity in s.defs[card].produces:
        pool[identity] += 1


def choices(s: State) -> list[tuple[str, int]]:
    """The open choices of the payment under way: ``("produce", card)``, ``("pay",
    identity)`` or ``("consume", card)``."""
    pending = s.pending
    assert pending is not None
    _, payer, need, additional, consume, source, _then = pending
    if need or additional:
        return _resource_options(s, payer, need, additional, source)
    return [("consume", c) for c in consumable(s, consume[0], payer, source)]


def choose(s: State, what: str, x: int) -> None:
    """Take one payment choice and carry the payment on."""
    pending = s.pending
    assert pending is not None
    _, payer, need, additional, consume, source, then = pending
    if what == "produce":
        need, additional = _produce_and_pay(s, payer, x, need, additional)
    elif what == "pay":
        need, additional = _pay_from_pool(s.pools[payer], need, additional, x)
    else:
        destroy(s, x)
        consume = consume[1:]
    advance(s, (P_PAY, payer, need, additional, consume, source, then))


# A paid price hands back to the flow of play (game.charter.turns, which imports this module:
# its functions are looked up when called, never while either module is still loading).
from game.charter import turns as _turns  # noqa: E402
