"""The rewards of witnessed tables, asked of the treasury and recorded (``ledger.rewards``;
docs/economy.md "Witnessed tables: rewards paid for real"; docs/rulings.md L-25…L-29).

Every closed table is settled once, in the tables log's order of closes:

1. its **due**: the player's witnessed campaign (``game.window.rewards``) fed the player's
   closes up to this one, read from the log (the same fold the auditor makes);
2. a due of something is a :class:`~ledger.api.rewards.RewardOrder` signed by the tables key
   and sent to the treasury (``POST /treasury/rewards``), which pays each table once and answers
   the same order again with the same payment;
3. ``table-rewarded`` at version 0 of stream ``reward/<table>`` in the tables log: the due and
   the treasury's ``reward-paid`` event (None when nothing was due). A second record of the
   same table is refused by the log's stream versions.

The move that closes a table settles it before it is answered, and the answer carries the
reward (``closing.reward``: the notes and the prints, or nothing, or pending); whatever a
crash or a silent treasury left unsettled, the leader's resumer settles on start-up and every
:data:`RESUME_INTERVAL` seconds (a SIGKILL between the close and the payment, or between the
payment and its record: the order is the same, the treasury answers it the same, and nothing
is paid twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import aiohttp

from game.window.campaign import Campaign
from game.window.rewards import WitnessedCampaigns
from ledger.api.rewards import RewardAnswer, RewardDue, RewardOrder, RewardOutcome
from ledger.api.tables import TableView
from ledger.errors import LedgerError, RetryLater, VerificationError
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.rewards import TableRewarded, reward_stream
from ledger.tables import TableDealt, TableOpen, deal_seed, seed_bytes, table_secret
from services.eventlog import EventStore, StreamConflict

log = logging.getLogger(__name__)

#: Seconds between the resumer's rounds over the closed tables not yet settled.
RESUME_INTERVAL = 2.0
#: Most unsettled tables one round settles.
RESUME_BATCH = 200
#: Players whose witnessed campaign is kept between their closes.
MAX_CAMPAIGNS = 4096
#: Tables whose treasury answer is kept for their reads.
MAX_ANSWERS = 4096
#: The treasury's answers that say "not now" (not served here yet, a timeout, too many).
TRANSIENT = (404, 408, 429)
#: How long one reward order to the treasury may take (seconds).
PAY_TIMEOUT = 30.0

#: A player's closes after seq $2 up to the close at seq $3, in log order: table, its open
#: request, verdict, the dealt event's body.
PLAYER_CLOSES = """
SELECT e.body->>'table', o.body->'request', e.body->>'verdict', d.body::text
FROM tables.events e
JOIN tables.tables t ON t.table_id = e.body->>'table'
JOIN tables.events o ON o.stream = 'table/' || t.table_id AND o.stream_version = 1
JOIN tables.events d ON d.stream = 'table/' || t.table_id AND d.type = 'table-dealt'
WHERE e.type = 'table-closed' AND t.player = $1 AND e.seq > $2 AND e.seq <= $3
ORDER BY e.seq
"""
#: The close of one table: its seq and player.
CLOSE_OF = """
SELECT e.seq, t.player FROM tables.events e JOIN tables.tables t ON t.table_id = e.body->>'table'
WHERE e.type = 'table-closed' AND e.stream = 'table/' || $1::text
"""
#: Closed tables not settled yet, in log order.
UNSETTLED = """
SELECT e.body->>'table' FROM tables.events e
WHERE e.type = 'table-closed' AND NOT EXISTS (
    SELECT 1 FROM tables.events r
    WHERE r.stream = 'reward/' || (e.body->>'table') AND r.stream_version = 1)
ORDER BY e.seq LIMIT $1
"""
#: A table's record of its reward, if settled.
SETTLED = "SELECT body::text FROM tables.events WHERE stream = $1 AND stream_version = 1"


@dataclass(frozen=True, slots=True)
class Settled:
    """A table's reward settled: the record, and the treasury's answer (None when nothing was
    due, or when the record was found already made)."""

    record: TableRewarded
    answer: RewardAnswer | None = None


class Rewards:
    """The tables service's settling of its closed tables' rewards."""

    def __init__(
        self,
        manifest: LeagueManifest,
        key: SigningKey,
        store: EventStore,
        treasury_url: str | None,
    ) -> None:
        self.manifest = manifest
        self.key = key
        self.store = store
        self.treasury_url = treasury_url
        #: One settling at a time per table in this process.
        self._locks: dict[str, asyncio.Lock] = {}
        #: Each recent player's witnessed campaign after its close at a seq.
        self._campaigns: OrderedDict[str, tuple[int, Campaign]] = OrderedDict()
        #: The treasury's answers of the latest tables paid or read (reads ask it no more).
        self._answers: OrderedDict[str, RewardAnswer] = OrderedDict()

    async def due(self, table: str) -> tuple[str, TableOpen, str, RewardDue] | None:
        """(player, open request, verdict, due) of ``table``, None until it closed."""
        found = await self.closed(table)
        return None if found is None else found[:4]

    async def settles(self, table: str) -> bool | None:
        """Whether closed ``table`` settles in its player's witnessed campaign (its venue
        opened, its work carried: ``WitnessedCampaigns.settles``, L-25, L-28, L-41), None
        until it closed."""
        found = await self.closed(table)
        return None if found is None else found[4]

    async def closed(self, table: str) -> tuple[str, TableOpen, str, RewardDue, bool] | None:
        """(player, open request, verdict, due, whether it settles) of ``table``, None until
        it closed. The player's campaign is folded from its first close, or from the latest
        close this process folded it to (kept for :data:`MAX_CAMPAIGNS` players: closes are
        settled in the log's order, so each close is folded once)."""
        close = await self.store.fetchrow(CLOSE_OF, table)
        if close is None:
            return None
        seq, player = close
        campaigns = WitnessedCampaigns(self.manifest.policies)
        after = -1
        kept = self._campaigns.get(player)
        if kept is not None and kept[0] < seq:
            after = kept[0]
            campaigns.restore(player, kept[1])
        rows = await self.store.fetch(PLAYER_CLOSES, player, after, seq)
        found: tuple[str, TableOpen, str, RewardDue, bool] | None = None
        for closed, opened_text, verdict, dealt_text in rows:
            opened = TableOpen.from_wire(json.loads(opened_text))
            seed = 0
            if closed == table:  # only this table's bundles are opened here
                dealt = TableDealt.from_wire(dealt_text)
                secret = table_secret(self.key, self.manifest.league, table)
                seed = deal_seed(table, secret, seed_bytes(dealt.request))
            settles = campaigns.settles(opened)
            due = campaigns.settle(opened, verdict, seed)
            if closed == table:
                found = (player, opened, verdict, due, settles)
        if found is not None:
            self._campaigns[player] = (seq, campaigns.state(player))
            self._campaigns.move_to_end(player)
            while len(self._campaigns) > MAX_CAMPAIGNS:
                self._campaigns.popitem(last=False)
        return found

    async def order(self, table: str) -> tuple[str, RewardDue, RewardOrder | None] | None:
        """(player, due, the signed order of the due when it is something) of ``table``, None
        until it closed. The same table's order is the same bytes however often it is signed
        (Ed25519 is deterministic): the treasury answers it the same."""
        found = await self.due(table)
        if found is None:
            return None
        player, opened, verdict, due = found
        if due.nothing:
            return player, due, None
        order = RewardOrder.sign(
            self.key,
            league=self.manifest.league,
            manifest=self.manifest.hash_text(),
            table=table,
            player=player,
            venue=opened.venue,
            verdict=verdict,
            due=due,
        )
        return player, due, order

    async def outcome(self, table: str) -> RewardOutcome:
        """The reward of closed ``table`` for its answer: settled now if it is not yet; the
        treasury's answer (the notes and the prints) as it paid it, or, read later, as it
        answers the same order again (kept for the latest :data:`MAX_ANSWERS` tables)."""
        try:
            settled = await self.settle(table)
        except LedgerError as exc:
            return RewardOutcome(status="pending", detail=exc.diagnostics())
        if settled is None:
            return RewardOutcome(status="pending", detail="the close is not recorded yet")
        record = settled.record
        if record.paid is None:
            return RewardOutcome(status="nothing", due=record.due)
        answer = settled.answer or self._answers.get(table)
        if answer is None:
            try:
                found = await self.order(table)
                if found is None or found[2] is None:  # pragma: no cover (recorded paid)
                    raise RetryLater(f"table {table}'s order is gone", 60)
                answer = await self._ask(found[2])
            except LedgerError as exc:
                return RewardOutcome(
                    status="paid",
                    due=record.due,
                    paid=record.paid,
                    detail=f"paid; the treasury's answer is not at hand: {exc.diagnostics()}",
                )
        self._answers[table] = answer
        self._answers.move_to_end(table)
        while len(self._answers) > MAX_ANSWERS:
            self._answers.popitem(last=False)
        return RewardOutcome(
            status="paid",
            due=record.due,
            paid=record.paid,
            notes=answer.notes,
            prints=answer.prints,
        )

    async def settle(self, table: str) -> Settled | None:
        """Settle ``table``'s reward (see the module): None while it is open; RetryLater when
        the treasury does not pay now (the resumer asks again)."""
        lock = self._locks.setdefault(table, asyncio.Lock())
        try:
            async with lock:
                return await self._settle(table)
        finally:
            if not lock.locked():
                self._locks.pop(table, None)

    async def _settle(self, table: str) -> Settled | None:
        row = await self.store.fetchrow(SETTLED, reward_stream(table))
        if row is not None:
            return Settled(TableRewarded.from_wire(row[0]))
        found = await self.order(table)
        if found is None:
            return None
        player, due, order = found
        answer = None if order is None else await self._ask(order)
        record = TableRewarded(
            table=table, player=player, due=due, paid=None if answer is None else answer.paid
        )
        try:
            async with self.store.transaction() as tx:
                await tx.lock()
                await tx.append_batch([record.new_event(expected_version=0)])
        except StreamConflict:  # another worker recorded it first: the same payment
            row = await self.store.fetchrow(SETTLED, reward_stream(table))
            assert row is not None
            return Settled(TableRewarded.from_wire(row[0]))
        return Settled(record, answer)

    async def _ask(self, order: RewardOrder) -> RewardAnswer:
        if self.treasury_url is None:
            raise RetryLater("the tables service does not know where the treasury answers", 60)
        timeout = aiohttp.ClientTimeout(total=PAY_TIMEOUT)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(f"{self.treasury_url}/treasury/rewards", json=order.to_wire()) as got,
            ):
                text = await got.text()
                status = got.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise RetryLater(
                f"the treasury did not answer table {order.table}'s reward ({type(exc).__name__})",
                5,
            ) from None
        if status != 200:
            detail: Any = None
            with contextlib.suppress(ValueError, AttributeError):
                detail = json.loads(text).get("detail")
            said = f"the treasury answered table {order.table}'s reward {status}: {detail}"
            if 400 <= status < 500 and status not in TRANSIENT:
                raise VerificationError(said)  # for good: the operator's to look at
            raise RetryLater(said, 5)
        try:
            answer = RewardAnswer.model_validate_json(text)
        except ValueError:
            raise RetryLater(f"the treasury's answer for {order.table} is unreadable", 60) from None
        if answer.table != order.table:
            raise RetryLater(f"the treasury answered another table than {order.table}", 60)
        return answer

    async def resume_all(self) -> int:
        """Settle every closed table not settled yet, in log order; how many were."""
        rows = await self.store.fetch(UNSETTLED, RESUME_BATCH)
        settled = 0
        for (table,) in rows:
            try:
                if await self.settle(table) is not None:
                    settled += 1
            except RetryLater as exc:  # the treasury is away: the others would wait as well
                log.info("table %s's reward waits: %s", table, exc.diagnostics())
                break
            except LedgerError as exc:
                log.error("table %s's reward is refused: %s", table, exc.diagnostics())
        return settled

    async def run(self, interval: float = RESUME_INTERVAL) -> None:
        """Resume on start-up and every ``interval`` seconds until cancelled."""
        while True:
            try:
                await self.resume_all()
            except LedgerError as exc:
                log.warning("settling rewards: %s", exc.diagnostics())
            await asyncio.sleep(interval)


async def with_reward(rewards: Rewards, view: TableView) -> TableView:
    """``view`` with its table's reward when it closed (``closing.reward``): settled first if
    it is not yet (a move's close is settled before it is answered)."""
    if view.closing is None:
        return view
    closing = view.closing.model_copy(update={"reward": await rewards.outcome(view.table)})
    return view.model_copy(update={"closing": closing})
