"""The tables service's answers: one view of a witnessed table (``ledger.tables``).

``POST /tables/open``, ``/tables/seed`` and ``/tables/move`` and ``GET /tables/{table}`` all
answer a :class:`TableView`: what the log holds of the table, what it waits for, and (to a
move) what that move took.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ledger.api.logs import FeedEvent
from ledger.api.rewards import RewardOutcome
from ledger.certificates import PrintCertificate
from ledger.tables import Deal


class MisprintOutcome(BaseModel):
    """The Misprint for a settling Balance at Chair VI or above (Book IV.6, L-41): awarded (its
    one certificate), gone (awarded before, to another table), or pending (the mint did not
    answer; reading the table asks again)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["awarded", "gone", "pending"]
    certificate: PrintCertificate | None = None
    detail: str = ""


class Closing(BaseModel):
    """What the close revealed and reckoned (the ``table-closed`` event)."""

    model_config = ConfigDict(extra="forbid")

    secret: str = Field(description="The service's secret, base64url: it opens the commitment")
    seed: int = Field(description="The table's seed, derived from both halves of the deal")
    verdict: Literal["win", "loss", "balance"] = Field(
        description="The player's verdict (at a duel, the opener's: the first seat's)"
    )
    columns: list[list[int]] = Field(
        description="Substance, Form, Holdings of each seat, the player's (the opener's) first"
    )
    misprint: MisprintOutcome | None = Field(
        default=None,
        description="At a settling Balance at Chair VI or above (L-41): the Misprint's award",
    )
    reward: RewardOutcome | None = Field(
        default=None,
        description="The table's reward (Book IV.1-IV.6, paid for real: docs/economy.md)",
    )


class TableView(BaseModel):
    """One witnessed table as its log holds it."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(description="The table's id (hex)")
    venue: str
    player: str = Field(description="The player's key (at a duel, the opener's: seat 0)")
    opponent: str | None = Field(
        default=None, description="At a duel, the second key (seat 1), once it has joined"
    )
    commitment: str = Field(description="The service's commitment to its secret")
    code: str | None = Field(
        default=None,
        description="A duel's join code: only in the answer to the request that opened it",
    )
    waiting: Literal["join", "seed", "move", "drill", "closed", "abandoned"] = Field(
        description="What the table waits for: a duel's second key, a seed, a move, the "
        "answer to a human's No-Go drill, or nothing (closed; abandoned when its move clock "
        "ran out, settling nothing)"
    )
    turn: str | None = Field(
        default=None,
        description="The key whose request the table waits for (none: either player's seed, "
        "a join, or nothing)",
    )
    deadline: datetime | None = Field(
        default=None,
        description="When the move clock runs out: a request that arrives later is refused "
        "(timed-out) and the table is abandoned",
    )
    ply: int = Field(description="Actions taken so far: the ply of the next move")
    deal: Deal | None = Field(default=None, description="The deal, once the seed is in")
    actions: list[str] = Field(default_factory=list, description="Every action taken, in order")
    played: list[str] = Field(
        default_factory=list, description="The actions this request took (a move's answer)"
    )
    legal: list[str] = Field(
        default_factory=list, description="The deciding seat's legal actions at a move"
    )
    drill: str | None = Field(
        default=None,
        description="The pattern of the pending No-Go drill (IV.4), shown only once it has "
        "started: answer it within the drill's time, counted by the service's clock from the "
        "event that started it to the answer's arrival",
    )
    closing: Closing | None = None


class TableEvents(BaseModel):
    """``GET /tables/table/{table}/events``: the table's stream of the tables log, in order,
    each event as the signed feed serves it (its leaf hash and the tables key's signature), so
    the player checks the close's reveal and replays the table with the log's own times."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(description="The table's id (hex)")
    events: list[FeedEvent] = Field(
        description="table-opened, table-dealt, every move-played, table-closed: in order"
    )
