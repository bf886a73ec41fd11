"""The offline economy (Book V.1, V.5): unstamped marks, prints, the offline store, bundles.

Pure: every operation takes a :class:`~game.window.economy.collection.Collection` and returns a new
one (or refuses with a :class:`~game.window.economy.store.StoreRefusal`); every draw is seeded.
"""
