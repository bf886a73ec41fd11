"""The two games, pure (no IO): THE WINDOW (:mod:`game.window`: its rules engine and, above it,
the tables, the No-Go drill, the AI, the Registrars, the campaign and the offline economy) and
the charter game (:mod:`game.charter`: the second rulebook as its own rules engine, with its
search AI). The two import nothing of each other (an import-linter contract)."""
