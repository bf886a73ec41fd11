"""Per-game lookup tables, built once from the cards dealt (shared by every clone): what each
card id can do, so that the hot path asks a tuple instead of walking the card's data."""

from __future__ import annotations

from dataclasses import dataclass

from game.charter.cards import ACTIVATED, INTERRUPT, TRIGGERED, Ability, CardDef, Effect
from game.charter.cards import FREE_PRICE as _FREE


@dataclass(frozen=True, slots=True)
class Tables:
    activated: tuple[bool, ...]  # card id -> has a printed activated ability
    interrupt_ability: tuple[bool, ...]  # card id -> has a printed interrupt-speed one
    term_cards: tuple[int, ...]  # card ids with an Interrupt term
    any_grants_activated: bool
    grants_activated: tuple[bool, ...]  # card id -> grants its host an activated ability
    self_interrupt: tuple[bool, ...]  # card id -> Interrupt naming itself (Ability keywords)
    terms: tuple[tuple[Ability, ...], ...]  # card id -> its Interrupt abilities with a term
    any_interrupt: bool  # some card of this game can ever be played at interrupt speed
    triggers: tuple[dict[str, tuple[int, ...]], ...]  # card id -> event -> ability indices
    consequence: tuple[Ability | None, ...]  # card id -> its unpaid obligation's consequence


def consequence_ability(d: CardDef) -> Ability | None:
    """An unpaid obligation's consequence as the triggered ability it is (Maintenance:
    destruction unless the card states a different one)."""
    if d.maintenance is None:
        return None
    effect = d.maintenance[1] or Effect("destroy", "self")
    return Ability(TRIGGERED, None, 0, None, "unpaid", _FREE, effect, None, None, None, 0)


def build_tables(defs: tuple[CardDef, ...]) -> Tables:
    by_name: dict[str, tuple[bool, bool, bool, tuple[Ability, ...], dict[str, tuple[int, ...]],
                             Ability | None, bool]] = {}  # fmt: skip
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
        )
    rows = [by_name[d.name] for d in defs]
    return Tables(
        activated=tuple(r[0] for r in rows),
        interrupt_ability=tuple(r[6] for r in rows),
        term_cards=tuple(c for c, r in enumerate(rows) if r[3]),
        any_grants_activated=any(r[1] for r in rows),
        grants_activated=tuple(r[1] for r in rows),
        self_interrupt=tuple(r[2] for r in rows),
        terms=tuple(r[3] for r in rows),
        any_interrupt=any(r[2] or r[3] for r in rows),
        triggers=tuple(r[4] for r in rows),
        consequence=tuple(r[5] for r in rows),
    )
