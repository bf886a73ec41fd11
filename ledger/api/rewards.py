"""What the treasury reads and answers for the rewards of witnessed tables (Book IV.1–IV.6,
V.5; docs/formats.md "Rewards of witnessed tables").

``POST /treasury/rewards`` reads a :class:`RewardOrder`, the tables service's request (signed
by the tables key the manifest names, as it signs ``misprint-award`` for the mint) to pay one
closed table's :class:`RewardDue` to its player, and answers a :class:`RewardAnswer`: the notes
issued from the reserve and the mint's answer to each print's order. The treasury pays a table
once (stream ``reward/<table>`` of its log) and answers the same order again with the same
payment. This module imports no event: the treasury's ``reward-paid`` event
(``ledger.events.RewardPaid``) carries these.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ledger.api.treasury import Answer, OrderAnswer
from ledger.certificates import NoteCertificate
from ledger.manifest import LeagueId
from ledger.print_runs import RunFinish, TitleText
from ledger.wire import HashText, KeyText, SignedModel, WireModel, WireTuple

#: Most marks one table pays (Chair XII pays 130, a Registrar's first Balance 150).
MAX_REWARD_MARKS = 1_000
#: Most prints one table pays: a Registrar's seven, and three per bundle.
MAX_REWARD_PRINTS = 32
#: Most bundles one table pays.
MAX_REWARD_BUNDLES = 4
#: Most notes one reward is paid in (the reserve's denominations, largest first).
MAX_REWARD_NOTES = 64
#: The prefix of the mint order ids of reward prints: ``reward.<table>.<k>``. A purchase id
#: of this form is refused (``services.treasury.opening``), so the two never meet at the mint.
REWARD_ORDER_PREFIX = "reward."
#: A witnessed table's id (``ledger.tables.TableId``: 32 lower-case hex digits).
RewardedTable = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
#: A venue's name (``ledger.tables.VenueText``; checked against the venues when settled).
VenueName = Annotated[str, Field(pattern=r"^[a-z]+(-[A-Za-z0-9]+)?$", max_length=32)]


def reward_order_id(table: str, k: int) -> str:
    """The mint order id of the ``k``-th print of ``table``'s reward."""
    return f"{REWARD_ORDER_PREFIX}{table}.{k}"


def rewarded_table(order_id: str) -> str | None:
    """The table a mint order id names, when it is a reward print's (else None)."""
    if not order_id.startswith(REWARD_ORDER_PREFIX):
        return None
    table, _, k = order_id.removeprefix(REWARD_ORDER_PREFIX).partition(".")
    return table if len(table) == 32 and k.isdigit() else None


def reward_stream(table: str) -> str:
    """The stream of a table's reward, in the treasury's log and in the tables log alike."""
    return f"reward/{table}"


class RewardPrint(WireModel):
    """One print a reward pays: a title in a finish, stamped by the mint inside its run."""

    WHAT = "reward print"

    title: TitleText
    finish: RunFinish


class RewardDue(WireModel):
    """What a table pays its player: marks (as notes), prints (stamped), and how many sealed
    bundles those prints include (opened, three prints each, V.5: L-26). Nothing for a loss,
    a table at a venue the player's witnessed campaign had not opened (L-25), or one opened
    without its proof of work (L-28)."""

    WHAT = "reward due"

    marks: Annotated[int, Field(ge=0, le=MAX_REWARD_MARKS)] = 0
    prints: Annotated[tuple[RewardPrint, ...], WireTuple, Field(max_length=MAX_REWARD_PRINTS)] = ()
    bundles: Annotated[int, Field(ge=0, le=MAX_REWARD_BUNDLES)] = 0

    @property
    def nothing(self) -> bool:
        return self.marks == 0 and not self.prints


class RewardOrder(SignedModel):
    """The tables service asks the treasury to pay a closed table's due to its player, signed
    by the tables key."""

    KIND: ClassVar[str] = "reward-order"
    WHAT = "reward order"

    kind: Literal["reward-order"]
    league: LeagueId
    manifest: HashText
    table: RewardedTable
    player: KeyText
    venue: VenueName
    verdict: Literal["win", "loss", "balance"]
    due: RewardDue


class RewardAnswer(Answer):
    """How a table's reward was paid: the treasury's ``reward-paid`` event, the notes issued
    to the player, and the mint's answer to each print's order (a print refused: its run is
    exhausted, the fixed supply being the bound)."""

    table: str
    replayed: bool = Field(description="True when this answer repeats an earlier payment")
    paid: int = Field(description="The seq of the treasury's reward-paid event")
    notes: list[NoteCertificate]
    prints: list[OrderAnswer]


class RewardOutcome(BaseModel):
    """A closed table's reward, as the tables service answers it (``closing.reward``): paid
    (the notes and each print's stamp or refusal), nothing (nothing was due: a loss, a venue
    the player's witnessed campaign had not opened, a table opened without its proof of
    work), or pending (the treasury did not pay yet; the service asks again by itself)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["paid", "nothing", "pending"]
    due: RewardDue | None = Field(default=None, description="What the table pays its player")
    paid: int | None = Field(
        default=None, description="The seq of the treasury's reward-paid event"
    )
    notes: list[NoteCertificate] = Field(
        default_factory=list, description="The notes issued to the player, as certificates"
    )
    prints: list[OrderAnswer] = Field(
        default_factory=list, description="The mint's answer to each print's order"
    )
    detail: str = ""
