"""Per-game lookup tables, built once from the cards dealt (shared by every clone): what each
card id can do, so that the hot path asks a tuple instead of walking the card's data."""

from __future__ import annotations

from dataclasses import dataclass

from game.charter.cards import (
    ACTIVATED,
    INTERRUPT,
    STATIC,
    STRUCTURE,
    TRANSACTIONAL,
    TRIGGERED,
    Ability,
    CardDef,
    Effect,
    Selector,
)
from game.charter.cards import FREE_PRICE as _FREE

# How a card chooses when it is played (C-09): nothing, a location (a structure), or a class.
PLAY_NONE, PLAY_LOCATION, PLAY_CLASS = range(3)


@dataclass(frozen=True, slots=True)
class Tables:
    activated: tuple[bool, ...]  # card id -> has a printed activated ability
    interrupt_ability: tuple[bool, ...]  # card id -> has a printed interrupt-speed one
    activated_cards: tuple[int, ...]  # card ids with a printed activated ability
    # card id -> its printed activated abilities, with their indices
    activated_abilities: tuple[tuple[tuple[int, Ability], ...], ...]
    interrupt_cards: tuple[int, ...]  # card ids with a printed interrupt-speed one
    interrupt_commits: tuple[bool, ...]  # card id -> each of those commits the card to pay
    term_cards: tuple[int, ...]  # card ids with an Interrupt term
    any_grants_activated: bool
    grants_activated: tuple[bool, ...]  # card id -> grants its host an activated ability
    self_interrupt: tuple[bool, ...]  # card id -> Interrupt naming itself (Ability keywords)
    self_interrupt_cards: frozenset[int]  # the card ids naming themselves Interrupt
    terms: tuple[tuple[Ability, ...], ...]  # card id -> its Interrupt abilities with a term
    any_interrupt: bool  # some card of this game can ever be played at interrupt speed
    triggers: tuple[dict[str, tuple[int, ...]], ...]  # card id -> event -> ability indices
    consequence: tuple[Ability | None, ...]  # card id -> its unpaid obligation's consequence
    # Plain card data by id, for loops that would otherwise read it through ``defs``.
    type: tuple[int, ...]  # card id -> its type
    name_id: tuple[int, ...]  # card id -> a small integer per distinct card name
    produces: tuple[tuple[int, ...], ...]  # card id -> the identities it produces
    size: tuple[int, ...]  # card id -> its printed size (structures)
    play_kind: tuple[int, ...]  # card id -> PLAY_NONE, PLAY_LOCATION or PLAY_CLASS
    play_class: tuple[Selector | None, ...]  # card id -> the class it chooses (PLAY_CLASS)
    # card id -> the static effects it states: (ability, True if granted to its host)
    statics: tuple[tuple[tuple[Ability, bool], ...], ...]
    static_cards: tuple[int, ...]  # the card ids that state one
    turn_start: tuple[bool, ...]  # card id -> has a turn_start trigger
    upkeep: tuple[bool, ...]  # card id -> carries a maintenance obligation
    # Some class of the game other than an Interrupt term names cards in hand: a player's
    # options may then change when another's hand does.
    reads_hands: bool


def consequence_ability(d: CardDef) -> Ability | None:
    """An unpaid obligation's consequence as the triggered ability it is (Maintenance:
    destruction unless the card states a different one)."""
    if d.maintenance is None:
        return None
    effect = d.maintenance[1] or Effect("destroy", "self")
    return Ability(TRIGGERED, None, 0, None, "unpaid", _FREE, effect, None, None, None, 0)


def _play_choice(d: CardDef) -> tuple[int, Selector | None]:
    """What the card chooses when played (mirrors :func:`game.charter.turns.play_choices`)."""
    if d.type == STRUCTURE:
        return PLAY_LOCATION, None
    for a in d.abilities:
        if a.kind == TRANSACTIONAL:
            sel = a.chooses
            if sel is not None:
                return PLAY_CLASS, sel
    return PLAY_NONE, None


def _statics(d: CardDef) -> tuple[tuple[Ability, bool], ...]:
    """The static effects ``d`` states, in the order :func:`board.recompute_statics` reads."""
    out: list[tuple[Ability, bool]] = []
    for a in d.abilities:
        if a.kind == STATIC and a.effect is not None:
            out.append((a, False))
        elif a.keyword == "Grant" and a.granted is not None:
            g = a.granted
            if g.kind == STATIC and g.effect is not None:
                out.append((g, True))
    return tuple(out)


_CACHE: dict[tuple[int, ...], tuple[tuple[CardDef, ...], Tables]] = {}
_CACHE_SIZE = 32


def tables_for(defs: tuple[CardDef, ...]) -> Tables:
    """:func:`build_tables`, remembered for the last few card lists dealt (a new game of the
    same decks reuses them). Keyed by the cards' identities; the entry holds the cards, so an
    identity cannot be reused while it is remembered."""
    key = tuple(map(id, defs))
    hit = _CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], defs, strict=True)):
        return hit[1]
    tables = build_tables(defs)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = (defs, tables)
    return tables


def _selectors(d: CardDef) -> list[Selector]:
    """Every class ``d`` states but its Interrupt terms (which read only their reader's own
    hand): hosts, targets, effect targets, consume qualifications, granted abilities' too."""
    out: list[Selector] = []
    prices = [d.price] + ([d.maintenance[0]] if d.maintenance is not None else [])
    abilities = list(d.abilities)
    consequence = consequence_ability(d)
    if consequence is not None:
        abilities.append(consequence)
    while abilities:
        a = abilities.pop()
        prices.append(a.price)
        if a.granted is not None:
            abilities.append(a.granted)
        if a.host is not None:
            out.append(a.host)
        if a.target is not None and a.keyword != "Interrupt":
            out.append(a.target)
        if a.effect is not None and isinstance(a.effect.target, Selector):
            out.append(a.effect.target)
    for price in prices:
        out.extend(price.consume)
    return out


def build_tables(defs: tuple[CardDef, ...]) -> Tables:
    by_name: dict[str, tuple[bool, bool, bool, tuple[Ability, ...], dict[str, tuple[int, ...]],
                             Ability | None, bool, int]] = {}  # fmt: skip
    for d in defs:
        if d.name in by_name:
            continue
        triggers: dict[str, list[int]] = {}
        for i, a in enumerate(d.abilities):
            if a.kind == TRIGGERED and a.trigger is not None:
                triggers.setdefault(a.trigger, []).append(i)
        by_name[d.name] = (
            any(a.kind == ACTIVATED for a in d.abilities),
            any(a.granted is not None and a.granted.kind == ACTIVATED for a in d.abilities),
            any(a.keyword == "Interrupt" and a.target is None for a in d.abilities),
            tuple(a for a in d.abilities if a.keyword == "Interrupt" and a.target is not None),
            {event: tuple(ix) for event, ix in triggers.items()},
            consequence_ability(d),
            any(a.kind == ACTIVATED and a.speed == INTERRUPT for a in d.abilities),
            len(by_name),
        )
    rows = [by_name[d.name] for d in defs]
    plays = [_play_choice(d) for d in defs]
    return Tables(
        activated=tuple(r[0] for r in rows),
        interrupt_ability=tuple(r[6] for r in rows),
        activated_cards=tuple(c for c, r in enumerate(rows) if r[0]),
        activated_abilities=tuple(
            tuple((i, a) for i, a in enumerate(d.abilities) if a.kind == ACTIVATED) for d in defs
        ),
        interrupt_cards=tuple(c for c, r in enumerate(rows) if r[6]),
        interrupt_commits=tuple(
            all(a.price.commit for a in d.abilities if a.kind == ACTIVATED and a.speed == INTERRUPT)
            for d in defs
        ),
        term_cards=tuple(c for c, r in enumerate(rows) if r[3]),
        any_grants_activated=any(r[1] for r in rows),
        grants_activated=tuple(r[1] for r in rows),
        self_interrupt=tuple(r[2] for r in rows),
        self_interrupt_cards=frozenset(c for c, r in enumerate(rows) if r[2]),
        terms=tuple(r[3] for r in rows),
        any_interrupt=any(r[2] or r[3] for r in rows),
        triggers=tuple(r[4] for r in rows),
        consequence=tuple(r[5] for r in rows),
        type=tuple(d.type for d in defs),
        name_id=tuple(r[7] for r in rows),
        produces=tuple(d.produces for d in defs),
        size=tuple(d.size for d in defs),
        play_kind=tuple(k for k, _ in plays),
        play_class=tuple(sel for _, sel in plays),
        statics=tuple(_statics(d) for d in defs),
        static_cards=tuple(c for c, d in enumerate(defs) if _statics(d)),
        turn_start=tuple("turn_start" in r[4] for r in rows),
        upkeep=tuple(d.maintenance is not None for d in defs),
        reads_hands=any(sel.zone == "hand" for d in defs for sel in _selectors(d)),
    )
