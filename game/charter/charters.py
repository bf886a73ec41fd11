"""Charters and decks: loading them, and whether a deck satisfies its charter (The Charter).

A deck satisfies its charter only when its card count is exact and its cards' summed complexity
fits the charter's complexity; besides those two limits, every card must be one the charter
sets, and a card whose price spends a manifest use needs a grant that covers it (Manifest,
rulings C-05, C-06). :func:`deck_failures` lists every fault, one sentence each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from game.charter import schema as S
from game.charter.cards import TYPE_BY_NAME, TYPE_NAMES, CardDef, CardSet
from game.charter.errors import CardDataError, CharterViolation


@dataclass(frozen=True, slots=True)
class Grant:
    """The manifest grant: uses per turn, the complexity one use accounts for, eligible types."""

    per_turn: int
    complexity: int
    eligible: frozenset[int]


@dataclass(frozen=True, slots=True)
class Charter:
    name: str
    card_set: str
    cards: frozenset[str] | None  # None: every card of the set
    deck_size: int
    complexity: int
    manifest: Grant | None
    source: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Deck:
    name: str
    charter: str
    cards: tuple[tuple[str, int], ...]  # (card name, copies) in the file's order
    source: dict[str, Any]

    def card_list(self) -> list[str]:
        """Every copy, in the file's order: the deck before it is shuffled."""
        return [name for name, n in self.cards for _ in range(n)]


def format_line(charter: S.Charter | Charter) -> str:
    """The charter's format line as the rulebook has it state the manifest grant (Manifest)."""
    line = f"deck {charter.deck_size} · complexity {charter.complexity}"
    grant = charter.manifest
    if grant is not None:
        line += f" · manifest {grant.per_turn}/turn at complexity {grant.complexity}"
    return line


def load_charter(data: Any, cards: CardSet) -> Charter:
    """The charter ``data`` holds, checked against its card set; :class:`CardDataError`."""
    parsed: S.Charter = S.parse_model(S.Charter, data, "charter")
    where = f"charter {parsed.name!r}"
    if parsed.card_set != cards.name:
        raise CardDataError(f"{where}: sets cards of {parsed.card_set!r}, not {cards.name!r}")
    if parsed.format_line != format_line(parsed):
        raise CardDataError(
            f"{where}: the format line must read {format_line(parsed)!r} (The Charter, Manifest)"
        )
    allowed = None
    if parsed.cards != "all":
        unknown = [n for n in parsed.cards if n not in cards.by_name]
        if unknown:
            raise CardDataError(f"{where}: no card {unknown[0]!r} in {cards.name!r}")
        allowed = frozenset(parsed.cards)
    grant = None
    if parsed.manifest is not None:
        m = parsed.manifest
        eligible = TYPE_NAMES if m.eligible is None else m.eligible
        grant = Grant(m.per_turn, m.complexity, frozenset(TYPE_BY_NAME[t] for t in eligible))
    return Charter(
        parsed.name,
        parsed.card_set,
        allowed,
        parsed.deck_size,
        parsed.complexity,
        grant,
        data,
    )


def load_deck(data: Any) -> Deck:
    """The deck ``data`` holds (its shape only: :func:`deck_failures` judges it)."""
    parsed: S.Deck = S.parse_model(S.Deck, data, "deck")
    return Deck(parsed.name, parsed.charter, tuple(parsed.cards.items()), data)


def deck_failures(deck: Deck, charter: Charter, cards: CardSet) -> list[str]:
    """Every way ``deck`` fails ``charter``, one sentence each; empty when it satisfies it."""
    failures: list[str] = []
    if deck.charter != charter.name:
        failures.append(f"the deck is designed under {deck.charter!r}, not {charter.name!r}")
    count = complexity = 0
    for name, copies in deck.cards:
        count += copies
        if name not in cards.by_name:
            failures.append(f"{name!r} is no card of the set {cards.name!r}")
            continue
        card = cards.card(name)
        complexity += card.complexity * copies
        if charter.cards is not None and name not in charter.cards:
            failures.append(f"{name!r} is not among the cards the charter sets")
        if card.price.manifest:
            failures.extend(_manifest_failures(card, charter.manifest))
    if count != charter.deck_size:
        failures.append(
            f"the deck holds {count} cards; the charter sets exactly {charter.deck_size}"
        )
    if complexity > charter.complexity:
        failures.append(
            f"the cards' complexity sums to {complexity}; the charter's complexity is "
            f"{charter.complexity}"
        )
    return failures


def _manifest_failures(card: CardDef, grant: Grant | None) -> list[str]:
    name, type_ = card.name, card.type
    if grant is None:
        return [f"{name!r} is placed by manifest, but the charter holds no manifest grant"]
    out = []
    if type_ not in grant.eligible:
        out.append(f"{name!r} is a {TYPE_NAMES[type_]}: not eligible for the manifest grant")
    if card.price.resources == 0 and card.complexity > grant.complexity:
        out.append(
            f"{name!r} has complexity {card.complexity}; a manifest use alone accounts for "
            f"{grant.complexity} (C-06)"
        )
    if card.price.resources > 0 and card.complexity <= grant.complexity:
        out.append(
            f"{name!r} has complexity {card.complexity}: a manifest use accounts for all of it, "
            "so its resource price accounts for nothing (C-06)"
        )
    return out


def check_deck(deck: Deck, charter: Charter, cards: CardSet) -> None:
    """Raise :class:`CharterViolation` (every failure) unless ``deck`` satisfies ``charter``."""
    failures = deck_failures(deck, charter, cards)
    if failures:
        raise CharterViolation(deck.name, charter.name, tuple(failures))
