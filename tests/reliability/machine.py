"""What the economy machine's parts share (tests/reliability/test_economy_machine.py, attacks.py,
invariants.py): the league's published bounds, the step counts of the short and long forms, the
totals the figures report, and how answers compare."""

from __future__ import annotations

import os
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ledger.api.mint import StampAnswer
from ledger.api.notary import NotarizeAnswer
from ledger.api.treasury import (
    BuyAnswer,
    BuyRequest,
    ClaimAnswer,
    ClaimRequest,
)
from ledger.certificates import NoteCertificate
from ledger.endorsements import Chain
from ledger.requests import StampRequest
from services.mint.app import MINT_LOG
from services.notary.app import NOTARY_LOG
from services.treasury.app import TREASURY_LOG
from tests.reliability.figures import long_form
from tests.reliability.league import RUNS

#: L-22: the notary logs at most this many refused conflicts per (serial, issue, hop).
MAX_CONFLICTS_PER_HOP = 4
#: Book V.5: the note set is M1,500,000, fixed.
SUPPLY = 1_500_000
#: Wallet times: endorsement times are claims only (nothing orders by them).
T0 = 1_800_000_000
HONEST = 4
ATTACKERS = 4
TITLES = tuple(RUNS)
CLAIMS = (5, 25, 30, 50, 80, 100, 200, 300)

#: The long form's floor of steps in all (the issue's target), over leagues of
#: :data:`LONG_EXAMPLE_STEPS` steps each.
LONG_STEPS = 2_000
LONG_EXAMPLE_STEPS = 250
#: The short form: hypothesis tries the simplest example first (every rule's simplest
#: arguments: claims, and restarts), then a random one (derandomized in CI).
SHORT_STEPS = 30
SHORT_EXAMPLES = 3
#: The long form's games: another every run, unless ``RELIABILITY_SEED`` names the seed of a
#: run to play again (as far as a league's timing lets a game be played again).
LONG_SEED = int(os.environ.get("RELIABILITY_SEED") or secrets.randbits(32))
#: Every this many steps the deep check runs, and the audit every :data:`AUDIT_EVERY` (less
#: often in the long form, whose leagues grow larger).
DEEP_EVERY = 25 if long_form() else 10
AUDIT_EVERY = 125 if long_form() else 50

LOGS = {"mint": MINT_LOG, "treasury": TREASURY_LOG, "notary": NOTARY_LOG}


@dataclass
class Totals:
    """What every machine of this run did, for the figures."""

    examples: int = 0
    steps: int = 0
    checks: int = 0
    deep: int = 0
    kills: int = 0
    #: Kills that cut an honest request off without its answer.
    cut: int = 0
    restarts: int = 0
    audits: int = 0
    attacks: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)


TOTALS = Totals()


@dataclass
class Sent:
    """A request sent and its answer, kept for the attacker to replay."""

    kind: str
    request: ClaimRequest | StampRequest | BuyRequest | list[Chain]
    answer: ClaimAnswer | StampAnswer | BuyAnswer | NotarizeAnswer


def marks(chain: Chain) -> int:
    """The denomination of a note's chain (0 for a print's)."""
    certificate = chain.certificate
    return certificate.denomination if isinstance(certificate, NoteCertificate) else 0


def same(a: Any, b: Any) -> bool:
    """Two answers equal but for ``replayed``."""
    strip = {"replayed", "faucet", "allowance"}  # the key's day as of now, not as then
    return bool(a.model_dump(exclude=strip) == b.model_dump(exclude=strip))
