"""Convening tables (I.5, IV.2, IV.3) on top of the engine, and playing one out.

A :class:`Table` is a deal — two hands, the market, the set-aside — plus where each dealt card
came from: at portfolio tables the seat that brought it and its print, whose finish travels with
it (IV.3, R-11). Card ids at the engine are given in deal order (first hand, second hand,
market, set aside), so ``table.provenance[card]`` answers for card id ``card``.

Every convening is seeded and reproducible: the same seed (and portfolios) give the same deal.

Portfolio tables (IV.3) and the single-copy rule (Book II, Balance): a table holds one copy of
each title. When both portfolios bring a title, the pool takes one of the two prints, chosen by
the table's seed; the other stays with its owner, outside the table (docs/modes.md, M-10). The
pool is then shuffled: five to each seat, three to the market, the rest set aside. A pool of
fewer than thirteen titles cannot convene and is refused.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from game.window import actions as A
from game.window.convening import from_deal, new_base_table, new_market_table, shuffled
from game.window.drill import DrillOutcome
from game.window.economy.prints import Print
from game.window.errors import DealError
from game.window.records import ExplicitDeal, SeededDeal
from game.window.state import CHANCE, State
from ledger.catalog import BY_NAME, PLAYING

PORTFOLIO_SIZE = 8
HAND_SIZE = 5
MARKET_SIZE = 3
_BOOK_ORDER = {c.name: i for i, c in enumerate(PLAYING)}


@dataclass(frozen=True, slots=True)
class Holding:
    """One certificate a player brings to a portfolio table: its title and the print that
    carries it, or ``None`` for a house copy (a title played without a print, M-11)."""

    title: str
    print: Print | None = None

    def __post_init__(self) -> None:
        if self.title not in BY_NAME:
            raise DealError(f"no playing certificate is called {self.title!r}")
        if self.print is not None and self.print.title != self.title:
            raise DealError(f"a {self.print.title} print cannot carry {self.title}")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a dealt card came from: the seat that brought it (None: the table's own) and the
    print it is, whose finish it shows wherever it lands (IV.3)."""

    owner: int | None = None
    print: Print | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A convened table: the deal, each card's provenance, and what stayed home (M-10)."""

    kind: str  # "base", "market" or "portfolio"
    seed: int
    hands: tuple[tuple[str, ...], tuple[str, ...]]
    market: tuple[str, ...]
    aside: tuple[str, ...]
    provenance: tuple[Provenance, ...]
    stayed_home: tuple[Holding, ...] = ()

    def new_state(self) -> State:
        """The opening position of this table (a fresh State every call)."""
        if self.kind == "base":
            return new_base_table(self.seed)
        if self.kind == "market":
            return new_market_table(self.seed)
        return from_deal(self.hands, self.market, self.aside, kind=self.kind)

    def deal_record(self) -> SeededDeal | ExplicitDeal:
        """The deal as a table record names it (docs/formats.md), so the table replays."""
        if self.kind in ("base", "market"):
            return SeededDeal(table=cast(Literal["base", "market"], self.kind), seed=self.seed)
        return ExplicitDeal(
            table=cast(Literal["portfolio", "deal"], self.kind),
            hands=[list(self.hands[0]), list(self.hands[1])],
            market=list(self.market),
            aside=list(self.aside),
        )

    def titles_in_deal_order(self) -> tuple[str, ...]:
        return (*self.hands[0], *self.hands[1], *self.market, *self.aside)


def _from_state(kind: str, seed: int, state: State) -> Table:
    def names(cards: Sequence[int]) -> tuple[str, ...]:
        return tuple(state.title_of(c) for c in cards)

    return Table(
        kind=kind,
        seed=seed,
        hands=(names(state.hands[0]), names(state.hands[1])),
        market=names(state.market),
        aside=names(state.aside),
        provenance=tuple(Provenance() for _ in state.titles),
    )


def convene_base(seed: int) -> Table:
    """I.5, IV.1: the base six shuffled, three to each seat."""
    return _from_state("base", seed, new_base_table(seed))


def convene_market(seed: int) -> Table:
    """IV.2: the base six and the Folded seven shuffled, five each, three to the market."""
    return _from_state("market", seed, new_market_table(seed))


def _check_portfolio(seat: int, portfolio: Sequence[Holding]) -> None:
    titles = [h.title for h in portfolio]
    if len(titles) != PORTFOLIO_SIZE or len(set(titles)) != PORTFOLIO_SIZE:
        raise DealError(
            f"seat {seat + 1} must bring {PORTFOLIO_SIZE} distinct certificates (IV.3), "
            f"not {len(set(titles))} distinct of {len(titles)}"
        )


def convene_portfolio(first: Sequence[Holding], second: Sequence[Holding], seed: int) -> Table:
    """IV.3: two portfolios of eight distinct certificates, one pool, five each, three to the
    market, the remainder set aside; one copy per title (M-10)."""
    _check_portfolio(0, first)
    _check_portfolio(1, second)
    rng = random.Random(f"portfolio-table:{seed}")
    theirs = {h.title: h for h in second}
    pool: list[tuple[int, Holding]] = []
    home: list[Holding] = []
    for holding in first:
        twin = theirs.pop(holding.title, None)
        if twin is None:
            pool.append((0, holding))
        elif rng.random() < 0.5:
            pool.append((0, holding))
            home.append(twin)
        else:
            pool.append((1, twin))
            home.append(holding)
    pool.extend((1, h) for h in second if h.title in theirs)
    if len(pool) < 2 * HAND_SIZE + MARKET_SIZE:
        raise DealError(
            f"the two portfolios hold only {len(pool)} distinct titles; a portfolio table "
            f"needs {2 * HAND_SIZE + MARKET_SIZE} (IV.3, M-10)"
        )
    by_title = {h.title: (seat, h) for seat, h in pool}
    deck = shuffled(sorted(by_title, key=_BOOK_ORDER.__getitem__), seed)
    hands = (tuple(deck[:HAND_SIZE]), tuple(deck[HAND_SIZE : 2 * HAND_SIZE]))
    market = tuple(deck[2 * HAND_SIZE : 2 * HAND_SIZE + MARKET_SIZE])
    aside = tuple(deck[2 * HAND_SIZE + MARKET_SIZE :])
    provenance = tuple(
        Provenance(by_title[t][0], by_title[t][1].print)
        for t in (*hands[0], *hands[1], *market, *aside)
    )
    return Table("portfolio", seed, hands, market, aside, provenance, tuple(home))


class Player(Protocol):
    """Whoever decides for a seat: an AI, or a client that asks a person."""

    def decide(self, state: State) -> int: ...

    def answer_drill(self) -> DrillOutcome: ...


def play_out(state: State, players: Sequence[Player]) -> list[int]:
    """Play ``state`` to its close, each decision by the player of the seat that must decide;
    the No-Go drill is answered by the challenger (IV.4). Returns the actions taken."""
    taken: list[int] = []
    while not state.is_over:
        seat = state.current_player
        if seat == CHANCE:
            assert state.pending is not None  # a chance node is a pending drill
            challenger = state.pending[1]
            success = players[challenger].answer_drill() is DrillOutcome.SUCCESS
            action = A.encode(A.DRILL, 1 if success else 0)
        else:
            action = players[seat].decide(state)
        state.apply(action)
        taken.append(action)
    return taken
