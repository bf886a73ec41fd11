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
from game.window.catalog import BASE_SIX, FOLDED_SEVEN
from game.window.errors import DealError
from game.window.state import ASIDE, HAND, MARKET, STROKES, State

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
