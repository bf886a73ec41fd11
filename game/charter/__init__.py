"""The charter rulebook (in our words: ``docs/charter-rules.md``) as its own rules engine.

Cards as data (:mod:`.cards`, :mod:`.schema`), charters and decks (:mod:`.charters`), the
packaged sample (:mod:`.library`), the game (``State``: ``legal_actions``, ``apply``,
``current_player``, ``is_over``, ``returns``, ``clone``), positions (``to_json``,
``from_json``), the action notation (``parse_action``, ``format_action``), records
(``parse_record``, ``replay``, ``record_json``) and the search AI (:mod:`.search`). Pure: no
IO beyond reading the package's own data; nothing here imports a service or a client.
"""

from game.charter.cards import CardSet, load_card_set
from game.charter.charters import Charter, Deck, check_deck, deck_failures, load_charter, load_deck
from game.charter.errors import CardDataError, CharterViolation, IllegalActionError, NotationError
from game.charter.notation import format_action, parse_action
from game.charter.opening import new_game
from game.charter.positions import from_json, to_json
from game.charter.records import Record, outcome, parse_record, record_json, replay
from game.charter.state import TERMINAL, State

__all__ = [
    "TERMINAL",
    "CardDataError",
    "CardSet",
    "Charter",
    "CharterViolation",
    "Deck",
    "IllegalActionError",
    "NotationError",
    "Record",
    "State",
    "check_deck",
    "deck_failures",
    "format_action",
    "from_json",
    "load_card_set",
    "load_charter",
    "load_deck",
    "new_game",
    "outcome",
    "parse_action",
    "parse_record",
    "record_json",
    "replay",
    "to_json",
]
