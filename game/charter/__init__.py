"""The charter rulebook (``../shared/seeds/001_07b1a9a4e610bf5c.txt``) as its own rules engine.

Cards as data (:mod:`game.charter.cards`), charters and decks (:mod:`game.charter.charters`),
the packaged sample (:mod:`game.charter.library`). Pure: nothing here does IO beyond reading
the package's own data, and nothing imports a service or a client.
"""
