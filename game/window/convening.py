"""Convening a table: the base table (I.5), the market table (IV.2), or any explicit deal.

Seeded tables are reproducible: ``random.Random(seed).shuffle`` of the titles in catalog (book)
order, then dealt from the front — first seat's hand, second seat's hand, then the market.
Every table then follows I.5: the first seat takes three strokes (the plenum shows 27) and the
Seal shows 0 (Q-09 for the market and portfolio tables).

Card ids are given in deal order (first hand, second hand, market, set aside) and never change,
so whatever travels with a card (a print's serial and finish, IV.3) can be keyed by its id.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from game.window import titles as T
from game.window.errors import DealError
from game.window.state import ASIDE, HAND, MARKET, STROKES, State
from ledger.catalog import BASE_SIX, FOLDED_SEVEN

FIRST_SEAT_STROKES = 3
TABLE_KINDS = ("base", "market", "portfolio", "deal")
MAX_CARDS = 63  # card ids must fit the action encoding


def from_deal(
    hands: Sequence[Sequence[str]],
    market: Sequence[str] = (),
    aside: Sequence[str] = (),
    *,
    kind: str = "deal",
) -> State:
    """A table convened from an explicit deal (titles as printed, one copy each, Q-05).

    ``kind`` names the table in its positions: "portfolio" (IV.3) or "deal" (anything else).
    """
    if kind not in TABLE_KINDS:
        raise DealError(f"a table is one of {', '.join(TABLE_KINDS)}, not {kind!r}")
    if len(hands) != 2:
        raise DealError("a deal has exactly two hands, one per seat")
    order = [*hands[0], *hands[1], *market, *aside]
    if len(order) > MAX_CARDS:
        raise DealError(f"a deal holds at most {MAX_CARDS} certificates")
    unknown = [t for t in order if t not in T.INDEX]
    if unknown:
        raise DealError(f"no playing certificate is called {unknown[0]!r}")
    if len(set(order)) != len(order):
        twice = next(t for t in order if order.count(t) > 1)
        raise DealError(f"{twice} is dealt twice; a table holds one copy of each title (Q-05)")
    _check_kind(kind, hands, market, aside)
    titles = tuple(T.INDEX[t] for t in order)
    where = [-1] * T.COUNT
    for card, title in enumerate(titles):
        where[title] = card
    n0, n1, nm = len(hands[0]), len(hands[1]), len(market)
    loc = bytearray([HAND] * n0 + [HAND + 1] * n1 + [MARKET] * nm + [ASIDE] * len(aside))

    s = State.__new__(State)
    s.titles = titles
    s.costs = tuple(T.COSTS[t] for t in titles)
    s.where = tuple(where)
    s.table_kind = kind
    s.aside = tuple(range(n0 + n1 + nm, len(order)))
    s.loc = loc
    s.up = bytearray(len(order))
    s.hands = [list(range(n0)), list(range(n0, n0 + n1))]
    s.chains = [[], []]
    s.spoils = [[], []]
    s.market = list(range(n0 + n1, n0 + n1 + nm))
    s.hoards = [FIRST_SEAT_STROKES, 0]
    s.plenum = STROKES - FIRST_SEAT_STROKES
    s.seal = 0
    s.to_move = 0
    s.turn = 0
    s.hostage = s.hostage_owner = -1
    s.ransoms = [0, 0]
    s.last_kind = [-1, -1]
    s.exhausted = [0, 0]
    s.pending = None
    s.closed = False
    s._legal = None
    return s


#: The titles a base (I.5) and a market (IV.2) table convene with; other kinds deal any.
KIND_TITLES: dict[str, frozenset[str]] = {
    "base": frozenset(c.name for c in BASE_SIX),
    "market": frozenset(c.name for c in BASE_SIX + FOLDED_SEVEN),
}
PORTFOLIO_POOL = 16  # IV.3: two portfolios of eight
MARKET_DEAL = 3  # IV.2, IV.3


def _check_kind(
    kind: str, hands: Sequence[Sequence[str]], market: Sequence[str], aside: Sequence[str]
) -> None:
    """A base or market table is dealt as I.5 and IV.2 say; a portfolio pool is at most 16."""
    dealt = {*hands[0], *hands[1], *market, *aside}
    if kind == "base" and (dealt != KIND_TITLES["base"] or market or aside or _uneven(hands, 3)):
        raise DealError("a base table deals the base six, three to each seat, no market (I.5)")
    if kind == "market" and (
        dealt != KIND_TITLES["market"] or aside or len(market) != MARKET_DEAL or _uneven(hands, 5)
    ):
        raise DealError(
            "a market table deals the thirteen, five to each seat and three to the market (IV.2)"
        )
    if kind == "portfolio" and (len(dealt) > PORTFOLIO_POOL or len(market) > MARKET_DEAL):
        raise DealError(
            f"a portfolio pool holds at most {PORTFOLIO_POOL} certificates and deals "
            f"{MARKET_DEAL} to the market (IV.3)"
        )


def _uneven(hands: Sequence[Sequence[str]], each: int) -> bool:
    return len(hands[0]) != each or len(hands[1]) != each


def shuffled(titles: Sequence[str], seed: int) -> list[str]:
    """``titles`` shuffled by ``random.Random(seed)`` (the documented, reproducible deal)."""
    deck = list(titles)
    random.Random(seed).shuffle(deck)
    return deck


def new_base_table(seed: int) -> State:
    """I.5: the base six shuffled, three to each seat."""
    deck = shuffled([c.name for c in BASE_SIX], seed)
    return from_deal([deck[:3], deck[3:6]], kind="base")


def new_market_table(seed: int) -> State:
    """IV.2: the base six and the Folded seven shuffled, five to each seat, three to the market."""
    deck = shuffled([c.name for c in BASE_SIX + FOLDED_SEVEN], seed)
    return from_deal([deck[:5], deck[5:10]], deck[10:13], kind="market")
