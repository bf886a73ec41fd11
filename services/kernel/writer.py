"""A log's one writer: requests wait, are decided in groups in one transaction, in order.

Every service that appends on behalf of its callers (the mint's stamps, the notary's hops)
has one :class:`GroupWriter`: a request waits here; the writer takes every request waiting
(up to ``max_group`` units of work, at least one request) and hands them to ``decide``,
which answers them all in one transaction under the log's lock, so one commit serves the
whole group and a busy service spends its time deciding rather than waiting for the disk.
A writer given the log's ``turn`` (the treasury's, where several processes append to its log:
services/eventlog/turns.py) takes it before it forms a group, so the group holds what arrived
while the others wrote. The queue is bounded: past ``max_waiting`` units a request is refused
at once with :class:`~ledger.errors.Overloaded` (503 with Retry-After) rather than queued
without end.
A refusal (a :class:`~ledger.errors.LedgerError` in ``decide``'s answers) fails that request
alone; a failure of the transaction fails its whole group.

What a group's transaction does is the same for every writer, so it is written once,
:func:`run_group`: take the log's lock (the next ``seq`` and the database's time come with
it), read the state the group is decided on, decide the group (pure, off the event loop: it
signs), append the decision's events, write what they change in the projection, record the
answers a replay will get (``services.kernel.answered``), commit. A service gives its
``read`` and ``decide`` (and what to ``record``); the writer's group function is then one
call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Protocol, TypeVar

from ledger.errors import LedgerError, Overloaded
from ledger.leaf import NewEvent
from services.eventlog import Event, EventLogError, EventStore, StoreTransaction
from services.kernel.projections import Projection

R = TypeVar("R")
A = TypeVar("A")
S = TypeVar("S")

#: Decides a group of requests in one transaction: an answer or a refusal for each, in order.
Decide = Callable[[Sequence[R]], Awaitable[Sequence[A | LedgerError]]]


@dataclass
class _Waiting(Generic[R, A]):
    request: R
    units: int
    future: asyncio.Future[A]


class GroupWriter(Generic[R, A]):
    """Requests of type ``R`` in, answers of type ``A`` out, decided in groups."""

    def __init__(
        self,
        decide: Decide[R, A],
        *,
        units: Callable[[R], int],
        max_group: int,
        max_waiting: int,
        what: str,
        turn: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    ) -> None:
        self._decide = decide
        #: Taken before each group is formed: the log's turn among the processes appending
        #: to it (``EventStore.turn``, services/eventlog/turns.py), for a writer whose groups
        #: append to a log; None for one whose groups go to a peer.
        self._turn = turn or contextlib.nullcontext
        self._units = units
        self.max_group = max_group
        self.max_waiting = max_waiting
        #: What the units are and who waits for them, for the overload message.
        self.what = what
        self._waiting: list[_Waiting[R, A]] = []
        #: Units of the requests in ``_waiting`` (bounded by ``max_waiting``).
        self._waiting_units = 0
        self._task: asyncio.Task[None] | None = None

    async def submit(self, request: R) -> A:
        """Wait for ``request``'s group to be decided; its answer, or its refusal raised."""
        units = self._units(request)
        if self._waiting and self._waiting_units + units > self.max_waiting:
            raise Overloaded(
                f"{self._waiting_units} {self.what} are waiting already; send this again in "
                f"a moment",
                retry_after=1,
            )
        self._waiting_units += units
        future: asyncio.Future[A] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(request, units, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write())
        return await future

    def _next_group(self) -> list[_Waiting[R, A]]:
        units = 0
        taken = 0
        for waiting in self._waiting:
            units += waiting.units
            if taken and units > self.max_group:
                break
            taken += 1
        group, self._waiting = self._waiting[:taken], self._waiting[taken:]
        self._waiting_units -= sum(waiting.units for waiting in group)
        return group

    async def _write(self) -> None:
        while self._waiting:
            group: list[_Waiting[R, A]] = []
            try:
                # The group is formed once the turn is this process's: what arrived while
                # another process wrote to the log goes in it, not in the group after.
                async with self._turn():
                    group = self._next_group()
                    results = await self._decide([waiting.request for waiting in group])
            except Exception as exc:
                for waiting in group:
                    if not waiting.future.done():
                        waiting.future.set_exception(exc)
                continue
            for waiting, result in zip(group, results, strict=True):
                if waiting.future.done():  # its client went away; the decision stands
                    continue
                if isinstance(result, LedgerError):
                    waiting.future.set_exception(result)
                else:
                    waiting.future.set_result(result)

    async def close(self) -> None:
        """Let the writer finish the groups already waiting."""
        if self._task is not None:
            await self._task


@dataclass(frozen=True, slots=True)
class Locked:
    """What the log's lock gives a group: the ``seq`` its first event takes and the time of
    the transaction (the database's clock, the one clock), in UTC."""

    tx: StoreTransaction
    next_seq: int
    now: datetime


class Decision(Protocol):
    """What deciding a group made: the events to append (in order, from ``next_seq``) and
    what they change in the service's projection."""

    @property
    def events(self) -> Sequence[NewEvent]: ...

    @property
    def changes(self) -> Any: ...


D = TypeVar("D", bound=Decision)


async def run_group(
    store: EventStore,
    projection: Projection[Any],
    read: Callable[[Locked], Awaitable[S]],
    decide: Callable[[Locked, S], tuple[D, Sequence[A]]],
    record: Callable[[StoreTransaction, D], Awaitable[None]] | None = None,
    appended: Callable[[D, Sequence[Event]], None] | None = None,
) -> list[A]:
    """One group's transaction (the module's docstring): its answers, in order.

    ``read`` reads the state under the lock; ``decide`` (run in a worker thread: it signs)
    turns it into a decision and an answer (or a refusal) per request; the decision's events
    are appended, its changes projected and, with ``record``, what replays need kept, all in
    one transaction. ``appended`` is handed the events as appended (their seqs and leaf
    hashes), before the answers are.
    """
    async with store.transaction() as tx:
        next_seq = await tx.lock()
        locked = Locked(tx, next_seq, tx.now.astimezone(UTC))
        state = await read(locked)
        decision, answers = await asyncio.to_thread(decide, locked, state)
        events = await tx.append_batch(decision.events)
        if events and events[0].seq != next_seq:
            raise EventLogError(f"the log appended at seq {events[0].seq}, not {next_seq}")
        if appended is not None:
            appended(decision, events)
        await projection.write(tx, decision.changes)
        if record is not None:
            await record(tx, decision)
    return list(answers)
