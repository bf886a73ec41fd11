"""THE WINDOW: its rules engine (Books I–III, VI) and, above it, the tables and modes of Book IV
and the offline economy of Book V.1, V.5 (docs/modes.md).

The engine is this package's public surface: ``State`` (``legal_actions``, ``apply``,
``current_player``, ``is_over``, ``columns``, ``verdict``, ``clone``), convening
(``new_base_table``, ``new_market_table``, ``from_deal``), positions (``to_json``,
``from_json``), the action notation (``parse_action``, ``format_action``) and table records
(``parse_record``, ``replay``). Its modules (:mod:`.actions`, :mod:`.titles`, :mod:`.powers`,
:mod:`.state`, :mod:`.refusals`, :mod:`.notation`, :mod:`.scoring`, :mod:`.convening`,
:mod:`.records`, :mod:`.positions`, :mod:`.errors`) import nothing above them (an
import-linter contract). The state and its rules are one idea, and the engine keeps the one
import circle that says so: :mod:`.state` asks :mod:`.scoring` for a table's verdict,
:mod:`.refusals` why an action is illegal and :mod:`.notation` how to name it, and each of those
reads a ``State``; ``state`` imports them where it uses them, never while loading.

Above the engine, each a client of it and none of it of them: :mod:`.tables` (convening a table
and playing one out), :mod:`.drill` (the No-Go drill), :mod:`.ai` (the one search and the
published roster), :mod:`.registrars`, :mod:`.campaign` and :mod:`.economy` (marks, prints,
the offline store, bundles).
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
