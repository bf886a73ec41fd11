"""The campaign (Book IV) as a pure state machine: venues, unlocks, the record, and rewards.

The path: the four clerks' base tables (IV.1; settle three of four — a win or a Balance settles
— and the market seal breaks), the Assessor's market table (IV.2), then the four Registrars
(IV.5) and the Standing Table's twelve Chairs (IV.6; beat Chair n to unlock Chair n+1).

:func:`convene` gives the table a venue convenes (``game.window.tables``); :func:`settle` takes a
state, the venue a table was played at and its verdict, and returns the new state and the
:class:`Reward` paid. The campaign never plays a table: the engine and the players do; it records
what they settled. Every result is kept in its own column — wins, losses and Balances apart,
never added (I.10, IV.6).

All published numbers (marks per result, the Chair and Registrar payments) are in this module
and in docs/modes.md; the readings the book leaves open are named there (M-xx).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from game.window.economy.collection import Collection
from game.window.economy.prints import Finish, Print
from game.window.registrars import convene_registrar_table
from game.window.scoring import Verdict
from game.window.tables import Holding, Table, convene_base, convene_market
from ledger.catalog import ARCHIVE_SETS, CardSet
from ledger.errors import LedgerError, SchemaError

CLERKS = 4
CLERKS_TO_BREAK_SEAL = 3
CHAIRS = 12
#: The Misprint is paid for the first Balance at this Chair or above (IV.6).
MISPRINT_FROM_CHAIR = 6


class CampaignRefusal(LedgerError):
    """The campaign will not record this: the venue is still locked, or does not exist."""

    problem_type = "venue-locked"
    http_status = 409


@dataclass(frozen=True, slots=True, order=True)
class Venue:
    """A place a table is convened: ``clerk`` 1–4, ``assessor``, ``registrar`` 1–4, ``chair`` 1–12.

    Registrars are numbered in Book III's order of their sets: 1 Lettered, 2 Begotten,
    3 Counted, 4 Sealed.
    """

    kind: str
    number: int = 0

    def __post_init__(self) -> None:
        limits = {"clerk": CLERKS, "assessor": 0, "registrar": len(ARCHIVE_SETS), "chair": CHAIRS}
        if self.kind not in limits:
            raise CampaignRefusal(f"there is no venue of kind {self.kind!r}")
        low = 0 if self.kind == "assessor" else 1
        if not low <= self.number <= limits[self.kind]:
            raise CampaignRefusal(f"there is no {self.kind} number {self.number}")

    @property
    def name(self) -> str:
        """``clerk-2``, ``assessor``, ``registrar-lettered``, ``chair-VI``."""
        if self.kind == "assessor":
            return "assessor"
        if self.kind == "registrar":
            return f"registrar-{self.card_set.value}"
        if self.kind == "chair":
            return f"chair-{ROMAN[self.number]}"
        return f"{self.kind}-{self.number}"

    @property
    def card_set(self) -> CardSet:
        """The Archive set a Registrar teaches (only for registrars)."""
        if self.kind != "registrar":
            raise CampaignRefusal(f"{self.name} teaches no set")
        return list(ARCHIVE_SETS)[self.number - 1]


ROMAN = ("", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
ASSESSOR = Venue("assessor")


def clerk(n: int) -> Venue:
    return Venue("clerk", n)


def registrar(card_set: CardSet) -> Venue:
    return Venue("registrar", list(ARCHIVE_SETS).index(card_set) + 1)


def chair(n: int) -> Venue:
    return Venue("chair", n)


def _both(win: int, balance: int) -> MappingProxyType[Verdict, int]:
    return MappingProxyType({Verdict.WIN: win, Verdict.BALANCE: balance, Verdict.LOSS: 0})


#: Unstamped marks per result (V.5: "marks earned at the tables"). A loss pays nothing. The
#: Registrars pay more for a Balance than for a win (IV.5); elsewhere a Balance pays as a win —
#: it is its own verdict, never half of one (I.10).
CLERK_MARKS = _both(10, 10)
ASSESSOR_MARKS = _both(25, 25)
REGISTRAR_FIRST_MARKS = _both(100, 150)
REGISTRAR_REPEAT_MARKS = _both(30, 45)
CHAIR_MARKS: MappingProxyType[int, MappingProxyType[Verdict, int]] = MappingProxyType(
    {n: _both(10 + 10 * n, 10 + 10 * n) for n in range(1, CHAIRS + 1)}
)
#: Sealed (unopened) bundles per repeat settlement at a Registrar (IV.5).
REGISTRAR_REPEAT_BUNDLES = 1
#: A sealed bundle at every second first-clearing of a Chair (IV.6): the 2nd, 4th, ... 12th.
BUNDLE_EVERY_NTH_CLEARING = 2
#: The first clearing of the Twelfth Chair pays a holofoil Zenoseal (IV.6).
TWELFTH_CHAIR_PRINT = Print("Zenoseal", Finish.HOLOFOIL)


@dataclass(frozen=True, slots=True)
class Tally:
    """One venue's record: wins, losses and Balances, three columns never added."""

    wins: int = 0
    losses: int = 0
    balances: int = 0

    @property
    def settled(self) -> bool:
        """A win or a Balance settles (IV.1, IV.5); a loss does not."""
        return self.wins > 0 or self.balances > 0

    def counted(self, result: Verdict) -> Tally:
        if result is Verdict.WIN:
            return replace(self, wins=self.wins + 1)
        if result is Verdict.LOSS:
            return replace(self, losses=self.losses + 1)
        return replace(self, balances=self.balances + 1)


@dataclass(frozen=True, slots=True)
class Reward:
    """What one settlement paid, with the book's reason for each part."""

    marks: int = 0
    prints: tuple[Print, ...] = ()
    bundles: int = 0
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Campaign:
    """A player's progress: the record per venue, the collection, and the seeded draw counter.

    ``seed`` and ``draws`` make the one chance in the rewards (which of a Registrar's seven
    prints is holofoil) reproducible: the n-th draw of a campaign uses ``(seed, n)``.
    """

    seed: int
    record: tuple[tuple[Venue, Tally], ...] = ()
    collection: Collection = field(default_factory=Collection)
    #: The first Balance at Chair VI or above is recorded (the Misprint itself is the
    #: league's to award, L-24; the name is kept so saved campaigns read as they were).
    misprint_paid: bool = False
    draws: int = 0

    def tally(self, venue: Venue) -> Tally:
        return dict(self.record).get(venue, Tally())

    def market_seal_broken(self) -> bool:
        """IV.1: three of the four clerks' tables settled."""
        settled = sum(self.tally(clerk(n)).settled for n in range(1, CLERKS + 1))
        return settled >= CLERKS_TO_BREAK_SEAL

    def cleared_chairs(self) -> int:
        """How many distinct Chairs have been beaten (a win) at least once."""
        return sum(self.tally(chair(n)).wins > 0 for n in range(1, CHAIRS + 1))

    def is_open(self, venue: Venue) -> bool:
        """Whether a table may be convened at ``venue`` now (docs/modes.md M-06, M-07)."""
        if venue.kind == "clerk":
            return True
        if venue.kind == "assessor":
            return self.market_seal_broken()
        if venue.kind == "registrar" or venue.number == 1:
            return self.tally(ASSESSOR).settled
        return self.tally(chair(venue.number - 1)).wins > 0

    def open_venues(self) -> list[Venue]:
        return [v for v in all_venues() if self.is_open(v)]

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "draws": self.draws,
            "misprint_paid": self.misprint_paid,
            "record": {
                v.name: {"wins": t.wins, "losses": t.losses, "balances": t.balances}
                for v, t in self.record
            },
            "collection": self.collection.to_json(),
        }

    @classmethod
    def from_json(cls, data: object) -> Campaign:
        """Read a campaign back from a save code; anything malformed is a SchemaError."""
        keys = {"seed", "draws", "misprint_paid", "record", "collection"}
        if not isinstance(data, dict) or set(data) != keys:
            raise SchemaError(f"a campaign is an object with exactly {sorted(keys)}")
        seed, draws, paid = data["seed"], data["draws"], data["misprint_paid"]
        if type(seed) is not int or type(draws) is not int or draws < 0:
            raise SchemaError("a campaign's seed and draws are whole numbers")
        if not isinstance(paid, bool) or not isinstance(data["record"], dict):
            raise SchemaError("misprint_paid is a boolean and record an object")
        by_name = {v.name: v for v in all_venues()}
        record = []
        for name, tally in data["record"].items():
            if name not in by_name or not isinstance(tally, dict):
                raise SchemaError(f"unknown venue {name!r} in the record")
            if set(tally) != {"wins", "losses", "balances"} or any(
                type(n) is not int or n < 0 for n in tally.values()
            ):
                raise SchemaError(f"the record of {name} is three whole-number counts")
            record.append((by_name[name], Tally(**tally)))
        collection = Collection.from_json(data["collection"])
        return cls(seed, tuple(sorted(record)), collection, paid, draws)


def all_venues() -> list[Venue]:
    """Every venue in the order of the campaign's path."""
    clerks = [clerk(n) for n in range(1, CLERKS + 1)]
    registrars = [Venue("registrar", n) for n in range(1, len(ARCHIVE_SETS) + 1)]
    return [*clerks, ASSESSOR, *registrars, *(chair(n) for n in range(1, CHAIRS + 1))]


def convene(venue: Venue, seed: int, portfolio: Sequence[Holding] = ()) -> Table:
    """The table convened at ``venue``: a base table at a clerk's (IV.1), a market table at the
    Assessor's and the Standing Table (IV.2, M-09), a portfolio table at a Registrar's, where
    ``portfolio`` is the player's eight (IV.3, IV.5)."""
    if venue.kind == "clerk":
        return convene_base(seed)
    if venue.kind == "registrar":
        return convene_registrar_table(venue.card_set, portfolio, seed)
    return convene_market(seed)


def settle(state: Campaign, venue: Venue, result: Verdict) -> tuple[Campaign, Reward]:
    """Record one finished table at ``venue`` and pay what IV.1–IV.6 and the marks table say.

    A locked venue is refused (its table could not have been convened). The reward is added to
    the collection of the returned state.
    """
    if not state.is_open(venue):
        raise CampaignRefusal(f"{venue.name} is still locked")
    before = state.tally(venue)
    if venue.kind == "clerk":
        reward = Reward(marks=CLERK_MARKS[result])
    elif venue.kind == "assessor":
        reward = Reward(marks=ASSESSOR_MARKS[result])
    elif venue.kind == "registrar":
        reward, state = _registrar_reward(state, venue, result, first=not before.settled)
    else:
        reward, state = _chair_reward(state, venue, result)
    record = dict(state.record)
    record[venue] = before.counted(result)
    collection = state.collection.add(
        marks=reward.marks, prints=reward.prints, bundles=reward.bundles
    )
    return replace(state, record=tuple(sorted(record.items())), collection=collection), reward


def _registrar_reward(
    state: Campaign, venue: Venue, result: Verdict, *, first: bool
) -> tuple[Reward, Campaign]:
    if result is Verdict.LOSS:
        return Reward(), state
    if not first:
        return (
            Reward(
                marks=REGISTRAR_REPEAT_MARKS[result],
                bundles=REGISTRAR_REPEAT_BUNDLES,
                reasons=("IV.5: a repeat settlement pays marks and a sealed bundle",),
            ),
            state,
        )
    titles = [c.name for c in ARCHIVE_SETS[venue.card_set]]
    holofoil = random.Random(f"campaign:{state.seed}:{state.draws}").choice(titles)
    prints = tuple(Print(t, Finish.HOLOFOIL if t == holofoil else Finish.STANDARD) for t in titles)
    reward = Reward(
        marks=REGISTRAR_FIRST_MARKS[result],
        prints=prints,
        reasons=(f"IV.5: first settlement strikes the {venue.card_set.value} set's seven prints",),
    )
    return reward, replace(state, draws=state.draws + 1)


def _chair_reward(state: Campaign, venue: Venue, result: Verdict) -> tuple[Reward, Campaign]:
    marks = CHAIR_MARKS[venue.number][result]
    prints: list[Print] = []
    bundles = 0
    reasons: list[str] = []
    if result is Verdict.WIN and state.tally(venue).wins == 0:
        clearings = state.cleared_chairs() + 1
        if clearings % BUNDLE_EVERY_NTH_CLEARING == 0:
            bundles += 1
            reasons.append(f"IV.6: a sealed bundle at every second first-clearing ({clearings})")
        if venue.number == CHAIRS:
            prints.append(TWELFTH_CHAIR_PRINT)
            reasons.append("IV.6: a holofoil Zenoseal for the first clearing of the Twelfth Chair")
    if (
        result is Verdict.BALANCE
        and venue.number >= MISPRINT_FROM_CHAIR
        and not state.misprint_paid
    ):
        # The Balance is recorded, not the card: the Misprint exists exactly once, by award
        # (V.8), and only the league awards it, to a witnessed Balance (L-24).
        reasons.append(
            "IV.6: the first Balance at Chair VI+; the Misprint CZ-TALLY-000 exists once and "
            "is awarded only at the league's witnessed tables (L-24)"
        )
        state = replace(state, misprint_paid=True)
    return Reward(marks, tuple(prints), bundles, tuple(reasons)), state
