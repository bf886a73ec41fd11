"""The offline store (V.5): bought with unstamped marks, it yields unstamped prints.

Buying with marks returns an unstamped print (the offline path); buying with notes is the
treasury's business, not this module's. Each operation returns the new collection or refuses
with a :class:`StoreRefusal`, whose ``diagnostics()`` is the sentence the player reads.
"""

from __future__ import annotations

from dataclasses import replace

from game.window.economy import bundles
from game.window.economy.collection import Collection
from game.window.economy.prices import BUNDLE_PRICE, SINGLE_PRICE, UPGRADE_PRICE
from game.window.economy.prints import Finish, Print
from ledger.catalog import BY_NAME
from ledger.errors import LedgerError

_FINISH_ORDER = (Finish.STANDARD, Finish.GILT, Finish.HOLOFOIL)


class StoreRefusal(LedgerError):
    """The offline store will not do this: too few marks, no such title or print, a bad upgrade."""

    problem_type = "store-refusal"
    http_status = 409


def _pay(collection: Collection, price: int, what: str) -> Collection:
    if collection.marks < price:
        raise StoreRefusal(f"{what} costs M{price}; you hold M{collection.marks} unstamped")
    return replace(collection, marks=collection.marks - price)


def single_price(title: str) -> int:
    """The price in marks of one standard print of ``title``, by its set's rarity."""
    if title not in BY_NAME:
        raise StoreRefusal(f"the store sells no certificate called {title!r}")
    return SINGLE_PRICE[BY_NAME[title].rarity]


def buy_single(collection: Collection, title: str) -> Collection:
    """Buy one unstamped standard print of ``title``."""
    price = single_price(title)
    return _pay(collection, price, f"a {title} print").add(prints=(Print(title),))


def upgrade_price(current: Finish, target: Finish) -> int:
    """What raising an unstamped print from ``current`` to ``target`` costs.

    Priced by the finish reached (gilt M80, holofoil M200), from any lower finish; a finish is
    never lowered, and the Misprint is never upgraded (docs/modes.md, M-03).
    """
    if current not in _FINISH_ORDER or target not in UPGRADE_PRICE:
        raise StoreRefusal(f"a {current.value} print cannot be raised to {target.value}")
    if _FINISH_ORDER.index(target) <= _FINISH_ORDER.index(current):
        raise StoreRefusal(f"a {current.value} print is already {target.value} or finer")
    return UPGRADE_PRICE[target]


def upgrade(collection: Collection, index: int, target: Finish) -> Collection:
    """Raise the unstamped print at ``index`` of the collection to ``target``.

    A stamped print is upgraded only at the mint (it is returned and re-issued), never here.
    """
    if not 0 <= index < len(collection.prints):
        raise StoreRefusal(f"there is no print number {index} in the collection")
    old = collection.prints[index]
    if old.stamped:
        raise StoreRefusal("a stamped print's finish is upgraded at the mint, not offline")
    paid = _pay(collection, upgrade_price(old.finish, target), f"a {target.value} upgrade")
    prints = list(paid.prints)
    prints[index] = replace(old, finish=target)
    return replace(paid, prints=tuple(prints))


def buy_bundle(collection: Collection) -> Collection:
    """Buy one sealed (unopened) bundle for marks; it is opened with :func:`open_bundle`."""
    return _pay(collection, BUNDLE_PRICE, "a bundle").add(bundles=1)


def open_bundle(collection: Collection, seed: int | str) -> tuple[Collection, tuple[Print, ...]]:
    """Open one sealed bundle: it leaves the collection and its three prints join it."""
    if collection.bundles < 1:
        raise StoreRefusal("there is no sealed bundle to open")
    prints = bundles.open_bundle(seed)
    opened = replace(collection, bundles=collection.bundles - 1).add(prints=prints)
    return opened, prints
