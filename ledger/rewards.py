"""Rewards of witnessed tables, paid for real (Book IV.1–IV.6, V.5; docs/economy.md
"Witnessed tables: rewards paid for real"; docs/formats.md "Rewards of witnessed tables").

A player key's **witnessed campaign** is its closed witnessed tables in the tables log's order;
a table's **due** is what the offline campaign's ``settle`` pays for it given the tables before
it (``game.window.rewards``, handed to the auditor as the referee is): marks, prints, and
sealed bundles opened into their three prints (V.5 odds) under the table's deal seed.

The payment, exactly once per table:

1. the tables service signs a :class:`~ledger.api.rewards.RewardOrder` (its key, as it signs
   ``misprint-award``) naming the table, the player and the due, and sends it to the treasury;
2. the treasury appends :class:`~ledger.events.RewardPaid` at version 0 of stream
   ``reward/<table>`` (the log itself refuses a second payment of a table), in the transaction
   that issues the marks as notes from the reserve (``note-issued``, reason ``reward``, request
   id the table), with its signed mint orders of the prints (order ids ``reward.<table>.<k>``),
   which it sends through its order path; the mint stamps each inside its run
   (``print-stamped``, ``ordered``, its request id the order id, which names the table);
3. the tables service appends :class:`TableRewarded` at version 0 of its own stream
   ``reward/<table>``: the due and the treasury's event that paid it, so an auditor pairs them.
   A table that pays nothing is recorded too (``paid`` None): every closed table is settled.

Everything here is pure protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Protocol

from pydantic import Field

from ledger.api.rewards import (
    MAX_REWARD_MARKS,
    RewardDue,
    RewardOrder,
    RewardPrint,
    reward_order_id,
    reward_stream,
    rewarded_table,
)
from ledger.events import EventBody, RewardPaid
from ledger.tables import TableId, TableOpen
from ledger.wire import KeyText


class TableRewarded(EventBody):
    """The tables service's record that a closed table's reward is settled: its due, and the
    seq of the treasury's ``reward-paid`` event that paid it (None when nothing was due)."""

    TYPE: ClassVar[str] = "table-rewarded"
    WHAT = "table-rewarded event"

    table: TableId
    player: KeyText
    due: RewardDue
    paid: Annotated[int, Field(ge=0)] | None = None

    def stream(self) -> str:
        return reward_stream(self.table)


#: The reward events of the tables log.
TABLES_REWARD_EVENTS: Mapping[str, type[EventBody]] = {TableRewarded.TYPE: TableRewarded}


class Campaigns(Protocol):
    """The witnessed campaigns of a league's players, fed their closed tables in the tables
    log's order (the game's, ``game.window.rewards.WitnessedCampaigns``): each close settled,
    its due returned."""

    def settles(self, opened: TableOpen) -> bool:
        """Whether the table ``opened`` opened settles, closing next (its venue opened in the
        player's campaign, its proof of work carried: L-25, L-28); only a settling Balance at
        Chair VI or above can win the Misprint (L-41)."""
        ...

    def settle(self, opened: TableOpen, verdict: str, seed: int) -> RewardDue: ...


__all__ = [
    "MAX_REWARD_MARKS",
    "TABLES_REWARD_EVENTS",
    "Campaigns",
    "RewardDue",
    "RewardOrder",
    "RewardPaid",
    "RewardPrint",
    "TableRewarded",
    "reward_order_id",
    "reward_stream",
    "rewarded_table",
]
