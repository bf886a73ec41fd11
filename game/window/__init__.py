"""THE WINDOW rules engine (Books I–III, VI): the public surface.

``State`` (``legal_actions``, ``apply``, ``current_player``, ``is_over``, ``columns``,
``verdict``, ``clone``), convening (``new_base_table``, ``new_market_table``, ``from_deal``),
positions (``to_json``, ``from_json``), the action notation (``parse_action``,
``format_action``) and table records (``parse_record``, ``replay``).
"""

from game.window.convening import from_deal, new_base_table, new_market_table
from game.window.errors import DealError, IllegalActionError, NotationError
from game.window.notation import format_action, parse_action
from game.window.positions import from_json, to_json
from game.window.records import Record, parse_record, record_json, replay
from game.window.scoring import Reckoning, Verdict, reckon
from game.window.state import CHANCE, TERMINAL, State

__all__ = [
    "CHANCE",
    "TERMINAL",
    "DealError",
    "IllegalActionError",
    "NotationError",
    "Reckoning",
    "Record",
    "State",
    "Verdict",
    "format_action",
    "from_deal",
    "from_json",
    "new_base_table",
    "new_market_table",
    "parse_action",
    "parse_record",
    "reckon",
    "record_json",
    "replay",
    "to_json",
]
