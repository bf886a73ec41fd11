"""The offline economy (Book V.1, V.5): unstamped marks, prints, the offline store, bundles.

Pure: every operation takes a :class:`~game.economy.collection.Collection` and returns a new
one (or refuses with a :class:`~game.economy.store.StoreRefusal`); every draw is seeded.
"""
