"""The charter rulebook (in our words: ``docs/charter-rules.md``) as its own rules engine.

Cards as data (:mod:`.cards`, :mod:`.schema`), charters and decks (:mod:`.charters`), the
packaged sample (:mod:`.library`), the game (``State``: ``legal_actions``, ``apply``,
``current_player``, ``is_over``, ``returns``, ``clone``), positions (``to_json``,
``from_json``), the action notation (``parse_action``, ``format_action``), records
(``parse_record``, ``replay``, ``record_json``) and the search AI (:mod:`.search`). Pure: no
IO beyond reading the package's own data; nothing here imports a service or a client, nor THE
WINDOW.

The state and its rules are one idea here, and the engine's core is one import circle that
says so: ``State`` (:mod:`.state`) answers ``legal_actions`` and ``apply`` through the flow of
play (:mod:`.turns`), which runs payment (:mod:`.payment`), combat (:mod:`.combat`) and effects
and triggers (:mod:`.effects`) over the board (:mod:`.board`), each reading and changing a
``State``, and a defeat or a finished payment hands back to the flow; positions
(:mod:`.positions`, a state's equality) and the notation (:mod:`.notation`, a refusal's words)
read a ``State`` too. The imports that close the circle are made where they are used, never
while a module loads. Everything else (cards, charters, decks, records, the search) imports
the core one way.
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
