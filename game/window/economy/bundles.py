"""Bundle opening with the published odds (V.5).

A bundle yields three prints. For each print the rarity (50/30/17/3) and the finish (70/20/10)
are drawn independently; the title is then drawn uniformly among the titles of that rarity
(six commons, seven uncommons, twenty-one rares, seven sealed). That last step is our reading:
V.5 publishes only the rarity and finish odds (docs/modes.md, M-05).
"""

from __future__ import annotations

import random

from game.window.economy.prices import BUNDLE_PRINTS, FINISH_ODDS, RARITY_ODDS
from game.window.economy.prints import Finish, Print
from ledger.catalog import PLAYING, Rarity

TITLES_BY_RARITY: dict[Rarity, tuple[str, ...]] = {
    rarity: tuple(c.name for c in PLAYING if c.rarity is rarity) for rarity in Rarity
}
_RARITIES = tuple(RARITY_ODDS)
_RARITY_WEIGHTS = tuple(RARITY_ODDS[r] for r in _RARITIES)
_FINISHES = tuple(FINISH_ODDS)
_FINISH_WEIGHTS = tuple(FINISH_ODDS[f] for f in _FINISHES)


def open_bundle(seed: int | str) -> tuple[Print, ...]:
    """The three unstamped prints a bundle opened under ``seed`` yields (same seed, same prints)."""
    rng = random.Random(f"bundle:{seed}")
    prints = []
    for _ in range(BUNDLE_PRINTS):
        (rarity,) = rng.choices(_RARITIES, _RARITY_WEIGHTS)
        (finish,) = rng.choices(_FINISHES, _FINISH_WEIGHTS)
        title = rng.choice(TITLES_BY_RARITY[rarity])
        prints.append(Print(title, Finish(finish)))
    return tuple(prints)
