"""Titles as small integers for the engine's hot path, read from the catalog.

A title's integer is its index in :data:`ledger.catalog.PLAYING` (book order), so the
catalog stays the single source of names and costs.
"""

from __future__ import annotations

from ledger.catalog import PLAYING

NAMES: tuple[str, ...] = tuple(c.name for c in PLAYING)
COSTS: tuple[int, ...] = tuple(c.cost for c in PLAYING)
INDEX: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
COUNT = len(NAMES)

TALLY = INDEX["Tally"]
PAIRING = INDEX["Pairing"]
SEPARATION = INDEX["Separation"]
ESCROW = INDEX["Escrow"]
REFLECTION = INDEX["Reflection"]
EXCHANGE = INDEX["Exchange"]
TORSOR = INDEX["Torsor"]
BALANCE = INDEX["Balance"]
DESCENT = INDEX["Descent"]
TURN = INDEX["Turn"]
KEEPING = INDEX["Keeping"]
NOGO = INDEX["No-Go"]
SPEND_COVERING = INDEX["Spend-Covering"]
ALPHABET = INDEX["Alphabet"]
GRAM = INDEX["Gram"]
CANONICAL = INDEX["Canonical"]
WELLFORMED = INDEX["Wellformed"]
FAITHFUL = INDEX["Faithful"]
ADMISSION = INDEX["Admission"]
INTERFACE = INDEX["Interface"]
CONSTRUCTOR = INDEX["Constructor"]
GENERATOR = INDEX["Generator"]
FORK = INDEX["Fork"]
GENEALOGY = INDEX["Genealogy"]
MODEL_A = INDEX["Model-A"]
MODEL_B = INDEX["Model-B"]
OMEGAFAM = INDEX["Omegafam"]
HEMIRING = INDEX["Hemiring"]
PRIMELADDER = INDEX["Primeladder"]
EULERFUSE = INDEX["Eulerfuse"]
TRACE = INDEX["Trace"]
INDEPENDENCE = INDEX["Independence"]
SELECTION = INDEX["Selection"]
EXHAUSTION = INDEX["Exhaustion"]
PLENUM = INDEX["Plenum"]
REFUSAL = INDEX["Refusal"]
SHADOW = INDEX["Shadow"]
STAGE = INDEX["Stage"]
TRANSPORT = INDEX["Transport"]
NONINSCRIPT = INDEX["Noninscript"]
ZENOSEAL = INDEX["Zenoseal"]

#: The seven core action powers a Model may copy (R-08).
MODEL_COPYABLE = frozenset({PAIRING, SEPARATION, REFLECTION, ESCROW, EXCHANGE, TURN, NOGO})
