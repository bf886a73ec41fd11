"""The sample card set, its charters and decks, shipped as package data (docs/charter.md)."""
