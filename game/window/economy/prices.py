"""The offline store's published numbers (V.5; docs/architecture.md §5). The one place they are
written.

Prices are in unstamped marks: the counter in your own ledger, spendable only in the offline
store. Marks are not money; notes are (V.5). See docs/modes.md for the readings.
"""

from __future__ import annotations

from types import MappingProxyType

from game.window.economy.prints import Finish
from ledger.catalog import Rarity

#: A single unstamped print in the standard finish, by rarity of its set.
SINGLE_PRICE = MappingProxyType(
    {Rarity.COMMON: 30, Rarity.UNCOMMON: 60, Rarity.RARE: 120, Rarity.SEALED: 240}
)
#: A finish upgrade of an unstamped print, by the finish it is raised to.
UPGRADE_PRICE = MappingProxyType({Finish.GILT: 80, Finish.HOLOFOIL: 200})
#: One sealed (unopened) bundle, marks only.
BUNDLE_PRICE = 50
#: Prints in one bundle.
BUNDLE_PRINTS = 3
#: Bundle odds in percent: rarity and finish are drawn independently for each print.
RARITY_ODDS = MappingProxyType(
    {Rarity.COMMON: 50, Rarity.UNCOMMON: 30, Rarity.RARE: 17, Rarity.SEALED: 3}
)
FINISH_ODDS = MappingProxyType({Finish.STANDARD: 70, Finish.GILT: 20, Finish.HOLOFOIL: 10})
