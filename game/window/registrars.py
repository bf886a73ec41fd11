"""The four Registrars (IV.5): portfolio tables built around their set, played by a fixed AI.

Each Registrar brings a portfolio of its set's seven certificates plus one certificate of the
Assessor's thirteen that the player did not bring (drawn by the table's seed), and plays them
against you at its fixed strength (:data:`game.window.ai.roster.REGISTRAR_STRENGTH`). It teaches its
cards by playing them: when its die calls for a slip, it builds one of its own set's cards if it
can, instead of a uniformly drawn action (docs/modes.md, M-16) — a legal action like any other.

The player's portfolio is eight distinct certificates they own, each carried by one of their
prints (the finest finish they hold of it); a player who lacks prints may complete the eight with
house copies of the Assessor's thirteen (M-11).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from game.window import actions as A
from game.window.ai.player import AIPlayer, Strength
from game.window.economy.collection import Collection
from game.window.economy.prints import Finish
from game.window.errors import DealError
from game.window.state import State
from game.window.tables import PORTFOLIO_SIZE, Holding, Table, convene_portfolio
from ledger.catalog import ARCHIVE_SETS, BASE_SIX, FOLDED_SEVEN, CardSet

#: The Assessor's thirteen: the titles anyone may bring as house copies (M-11).
HOUSE_TITLES: tuple[str, ...] = tuple(c.name for c in BASE_SIX + FOLDED_SEVEN)
_FINISH_RANK = {Finish.STANDARD: 0, Finish.GILT: 1, Finish.HOLOFOIL: 2, Finish.MISPRINT: 3}


def set_titles(card_set: CardSet) -> tuple[str, ...]:
    """The seven titles a Registrar teaches."""
    return tuple(c.name for c in ARCHIVE_SETS[card_set])


def player_portfolio(collection: Collection, titles: Sequence[str]) -> tuple[Holding, ...]:
    """The player's eight: each title carried by their finest print of it, or a house copy of
    one of the Assessor's thirteen when they hold no print of it (M-11)."""
    if len(titles) != PORTFOLIO_SIZE or len(set(titles)) != PORTFOLIO_SIZE:
        raise DealError(f"a portfolio is {PORTFOLIO_SIZE} distinct certificates (IV.3)")
    holdings = []
    for title in titles:
        prints = [p for p in collection.prints if p.title == title]
        if prints:
            best = max(prints, key=lambda p: (_FINISH_RANK[p.finish], p.stamped))
            holdings.append(Holding(title, best))
        elif title in HOUSE_TITLES:
            holdings.append(Holding(title))
        else:
            raise DealError(f"you hold no print of {title}, and it is no house certificate")
    return tuple(holdings)


def registrar_portfolio(
    card_set: CardSet, player_titles: Sequence[str], seed: int
) -> tuple[Holding, ...]:
    """The Registrar's eight: its set's seven, and one of the Assessor's thirteen that the
    player did not bring (any of the thirteen if the player brought them all), seeded."""
    spare = [t for t in HOUSE_TITLES if t not in player_titles] or list(HOUSE_TITLES)
    eighth = random.Random(f"registrar-eighth:{card_set.value}:{seed}").choice(spare)
    return tuple(Holding(t) for t in (*set_titles(card_set), eighth))


def convene_registrar_table(card_set: CardSet, player: Sequence[Holding], seed: int) -> Table:
    """A Registrar's portfolio table: the player in the first seat, the Registrar second."""
    ours = registrar_portfolio(card_set, [h.title for h in player], seed)
    return convene_portfolio(player, ours, seed)


class RegistrarPlayer(AIPlayer):
    """A Registrar at its table: the one search at the Registrars' fixed strength, whose slips
    build its own set's cards when it can (it teaches them by playing them)."""

    def __init__(self, card_set: CardSet, strength: Strength, seed: int | str) -> None:
        super().__init__(strength, f"registrar-{card_set.value}:{seed}")
        self.teaches = frozenset(set_titles(card_set))

    def slip(self, state: State, legal: tuple[int, ...]) -> int:
        lessons = [
            a for a in legal if a & 31 == A.BUILD and state.title_of(a >> 5 & 63) in self.teaches
        ]
        return self.rng.choice(lessons or list(legal))
