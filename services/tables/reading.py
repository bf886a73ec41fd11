"""Reading witnessed tables cheaply, and sharing the service's thinking fairly between sources.

Replaying a table runs the opponent's search again for every reply (a Chair XII table is
seconds of it), so the service replays only what it must:

- a **closed** table is read from its events alone (:func:`closed_view`): the deal, every
  action, and the close, whose revealed secret gives the seed; the engine does not run;
- a table **in play** is shown as this process holds it, or, when it does not hold it (after a
  restart, or another worker's move), followed from its events (:func:`recorded`,
  ``game.window.witnessed.follow_table``): its recorded actions applied as they stand, in
  milliseconds, with no search and no thinking slot; the table so followed is never played on;
- a table in play is **replayed** (every reply searched again) only to play its next move, once
  however many moves ask for it at once (:class:`Replays`: the others await the same replay).

Thinking (the opponent's search for a move, a cold replay for a move) takes one of a few
**slots** per process, about one per core, since the search holds the interpreter's lock.
When every slot is busy the next free one goes round-robin to the sources waiting
(:class:`FairSlots`), so a script with twenty Chair XII tables waits its turn behind itself
and delays another source's move by about one search, not twenty; a source with
:data:`MAX_WAITING_PER_SOURCE` thoughts already waiting is refused (429 ``rate-limited``).
Reads are limited per source besides (:data:`READS_PER_MINUTE`), as opens are.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar, cast

from ledger.api.tables import Closing, TableView
from ledger.errors import RateLimited
from ledger.events import body_as
from ledger.leaf import Event
from ledger.tables import (
    DuelSeats,
    MovePlayed,
    TableClosed,
    TableDealt,
    TableJoined,
    TableOpened,
    TableSeeded,
    deal_seed,
    duel_seed,
    is_duel,
    reveals,
    seed_bytes,
)
from services.tables.projection import TableRow

T = TypeVar("T")

#: Reads of tables a source may make a minute, and in one burst (``GET /tables/table/…``).
READS_PER_MINUTE = 600
READS_BURST = 120
#: Thinking slots a process has: the opponent's search holds the interpreter's lock, so more
#: than about one per core only slices the same CPU thinner.
THINKING_SLOTS = max(2, os.cpu_count() or 2)
#: Thoughts (moves, cold replays) one source may have waiting for a slot in one process.
MAX_WAITING_PER_SOURCE = 64
#: Sources whose last turn :class:`FairSlots` remembers.
MAX_REMEMBERED = 10_000


@dataclass(frozen=True, slots=True)
class Recorded:
    """A dealt table as its events record it: its open, its deal and when, a duel's seats, and
    its moves with when each was recorded."""

    opened: TableOpened
    dealt: TableDealt
    dealt_at: datetime
    duel: DuelSeats | None
    moves: list[tuple[MovePlayed, datetime]]

    def actions(self) -> list[str]:
        """Every action taken, in order."""
        return [action for move, _ in self.moves for action in move.actions]


def recorded(events: Sequence[Event], venue: str) -> Recorded | None:
    """The table ``events`` (a table's stream, in order) record at ``venue``; None before its
    deal."""
    dealt = next((e for e in events if e.type == TableDealt.TYPE), None)
    if dealt is None:
        return None
    duel = None
    if is_duel(venue):
        joined = next(e for e in events if e.type == TableJoined.TYPE)
        seeded = next(e for e in events if e.type == TableSeeded.TYPE)
        duel = DuelSeats(body_as(joined, TableJoined), body_as(seeded, TableSeeded))
    moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events if e.type == MovePlayed.TYPE]
    opened = body_as(events[0], TableOpened)
    return Recorded(opened, body_as(dealt, TableDealt), dealt.recorded_at, duel, moves)


def closed_view(row: TableRow, events: Sequence[Event]) -> TableView:
    """The view of ``row``'s closed table from its ``events`` alone (no replay): what
    ``playing.Tables.view`` answers for it, the seed derived from the revealed secret."""
    opened = body_as(events[0], TableOpened)
    dealt = next(body_as(e, TableDealt) for e in events if e.type == TableDealt.TYPE)
    closed = next(body_as(e, TableClosed) for e in events if e.type == TableClosed.TYPE)
    actions = [
        action
        for event in events
        if event.type == MovePlayed.TYPE
        for action in body_as(event, MovePlayed).actions
    ]
    secret = reveals(opened, closed.secret)
    seed = deal_seed(row.table_id, secret, seed_bytes(dealt.request))
    first = next((body_as(e, TableSeeded) for e in events if e.type == TableSeeded.TYPE), None)
    if first is not None:  # a duel: the secret and both seeds, the opener's first
        seeds = {r.player: seed_bytes(r) for r in (first.request, dealt.request)}
        seed = duel_seed(row.table_id, secret, (seeds[row.player], seeds[str(row.opponent)]))
    return TableView(
        table=row.table_id,
        venue=row.venue,
        player=row.player,
        opponent=row.opponent,
        commitment=row.commitment,
        waiting="closed",
        ply=len(actions),
        deal=dealt.deal,
        actions=actions,
        closing=Closing(
            secret=closed.secret,
            seed=seed,
            verdict=closed.verdict,
            columns=[list(closed.columns[0]), list(closed.columns[1])],
        ),
    )


class Replays:
    """One replay per table at a time: whoever asks while one runs awaits its result."""

    def __init__(self) -> None:
        self._running: dict[str, asyncio.Future[object]] = {}

    async def once(self, table: str, replay: Callable[[], Awaitable[T]]) -> T:
        running = self._running.get(table)
        if running is not None:
            return cast(T, await asyncio.shield(running))
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._running[table] = future
        try:
            result = await replay()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here: a replay nobody else awaited logs nothing
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._running[table]


class FairSlots:
    """``slots`` holders at once; when all are held, a freed slot goes to the waiting source
    served least recently (round-robin), each source's waiters in arrival order."""

    def __init__(self, slots: int = THINKING_SLOTS, per_source: int = MAX_WAITING_PER_SOURCE):
        self.free = slots
        self.per_source = per_source
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        #: When a slot last went to each source (a count of turns), least recent first.
        self._served: OrderedDict[str, int] = OrderedDict()
        self._turn = 0

    @property
    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    @asynccontextmanager
    async def hold(self, source: str) -> AsyncIterator[None]:
        """Hold a slot for ``source`` (:class:`RateLimited` when too many of its own wait)."""
        if self.free and not self._waiting:
            self.free -= 1
            self._serve(source)
        else:
            await self._wait(source)
        try:
            yield
        finally:
            self._release()

    async def _wait(self, source: str) -> None:
        queue = self._waiting.get(source)
        if queue is None:
            queue = self._waiting[source] = deque()
        if len(queue) >= self.per_source:
            raise RateLimited(
                f"{source} already has {len(queue)} moves or reads waiting for the tables' "
                f"thinking; wait for their answers",
                retry_after=5,
            )
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(granted)
        try:
            await granted
        except BaseException:
            if granted.done() and not granted.cancelled():
                self._release()  # granted as it was cancelled: pass the slot on
            else:
                queue.remove(granted)
                if not queue:
                    self._waiting.pop(source, None)
            raise

    def _serve(self, source: str) -> None:
        self._turn += 1
        self._served[source] = self._turn
        self._served.move_to_end(source)
        while len(self._served) > MAX_REMEMBERED:
            self._served.popitem(last=False)

    def _next(self) -> str:
        """The waiting source served least recently (one never served, or forgotten, first)."""
        served = self._served
        return min(self._waiting, key=lambda source: served.get(source, -1))

    def _release(self) -> None:
        while self._waiting:
            source = self._next()
            queue = self._waiting[source]
            granted = queue.popleft()
            if not queue:
                del self._waiting[source]
            if not granted.done():
                self._serve(source)
                granted.set_result(None)
                return
        self.free += 1


__all__ = [
    "MAX_WAITING_PER_SOURCE",
    "READS_BURST",
    "READS_PER_MINUTE",
    "THINKING_SLOTS",
    "FairSlots",
    "Replays",
    "closed_view",
]
