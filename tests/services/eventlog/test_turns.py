"""A log's turns among the processes appending to it (services/eventlog/turns.py): a writer
forms its group once it has the turn, so what arrives while another process writes goes in
one group; a turnstile without its database lets writers go on; a cancelled wait leaves no
turn held."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from ledger.errors import LedgerError
from ledger.keys import SigningKey
from services.eventlog import EventStore, PostgresEventStore, turns
from services.eventlog.turns import Turnstile
from services.kernel.settings import LeagueSettings
from services.kernel.writer import GroupWriter
from services.mint.app import MINT_LOG
from services.mint.app import SERVICE as MINT
from services.treasury.app import SERVICE as TREASURY
from services.treasury.app import TREASURY_LOG
from tests.harness.founding import make_settings
from tests.harness.ports import free_port
from tests.harness.serving import composed
from tests.harness.treasury import checked_faucet
from tests.harness.waiting import GUARD, until

__all__ = ["make_settings"]  # fixtures


@pytest.fixture
async def turnstiles(database_url: str) -> AsyncIterator[list[Turnstile]]:
    """Three processes' turnstiles of the treasury's log (one each: separate sessions)."""
    made = [Turnstile(database_url, "treasury") for _ in range(3)]
    try:
        yield made
    finally:
        for turnstile in made:
            turnstile.close()


class Groups:
    """A writer's decisions: each request answered with itself; the groups recorded."""

    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    async def __call__(self, group: Sequence[int]) -> list[int | LedgerError]:
        self.seen.append(list(group))
        return list(group)


async def test_a_group_is_formed_when_the_turn_is_taken(turnstiles: list[Turnstile]) -> None:
    """While another process holds the log's turn, every request arriving at this writer waits
    and all of them go in one group once the turn is its own; without turns the first
    request would have gone alone, to wait on the log's lock with a group of one."""
    other, ours, _ = turnstiles
    groups = Groups()
    writer: GroupWriter[int, int] = GroupWriter(
        groups, units=lambda n: 1, max_group=100, max_waiting=100, what="units", turn=ours.turn
    )
    async with asyncio.timeout(GUARD):
        async with other.turn():
            first = asyncio.create_task(writer.submit(1))
            await until(lambda: ours._conn is not None)  # waiting for the turn in the database
            more = [asyncio.create_task(writer.submit(n)) for n in (2, 3, 4, 5)]
            await asyncio.sleep(0.05)
            assert groups.seen == []
        assert await asyncio.gather(first, *more) == [1, 2, 3, 4, 5]
    assert groups.seen == [[1, 2, 3, 4, 5]]
    assert (other.turns, ours.turns) == (1, 1)
    await writer.close()


async def test_one_process_at_a_time(turnstiles: list[Turnstile]) -> None:
    """The turn is held by one process at a time, and passes on when it is given back."""
    first, second, _ = turnstiles
    order: list[str] = []

    async def hold(turnstile: Turnstile, name: str, gate: asyncio.Event | None) -> None:
        async with turnstile.turn():
            order.append(f"{name} in")
            if gate is not None:
                await gate.wait()
            order.append(f"{name} out")

    gate = asyncio.Event()
    async with asyncio.timeout(GUARD):
        holding = asyncio.create_task(hold(first, "first", gate))
        await until(lambda: order == ["first in"])
        waiting = asyncio.create_task(hold(second, "second", None))
        await asyncio.sleep(0.1)
        assert order == ["first in"]
        gate.set()
        await asyncio.gather(holding, waiting)
    assert order == ["first in", "first out", "second in", "second out"]


async def test_a_cancelled_wait_leaves_no_turn_held(turnstiles: list[Turnstile]) -> None:
    """A wait for the turn cancelled (a worker stopping) ends its connection: nothing it
    might have been granted as it was cancelled stays held, and the next process takes the
    turn as soon as the holder gives it back."""
    holder, cancelled, third = turnstiles
    async with asyncio.timeout(GUARD):
        async with holder.turn():
            entered = asyncio.Event()

            async def wait() -> None:
                async with cancelled.turn():
                    entered.set()

            task = asyncio.create_task(wait())
            await until(lambda: cancelled._conn is not None)
            await asyncio.sleep(0.05)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            assert not entered.is_set()
            assert cancelled._conn is None
        async with third.turn():
            assert third.turns == 1


async def test_without_its_database_a_writer_goes_on_without_turns() -> None:
    """A turnstile whose database does not answer lets the writer go on at once (the log's
    lock, not the turn, keeps the appends right) and does not ask again for a while."""
    turnstile = Turnstile("postgresql://nobody@127.0.0.1:1/none", "treasury")
    groups = Groups()
    writer: GroupWriter[int, int] = GroupWriter(
        groups, units=lambda n: 1, max_group=100, max_waiting=100, what="units", turn=turnstile.turn
    )
    async with asyncio.timeout(GUARD):
        assert await asyncio.gather(writer.submit(1), writer.submit(2)) == [1, 2]
        assert turnstile.turns == 0
        assert turnstile._retry_at > asyncio.get_running_loop().time()
        async with turnstile.turn():  # within RETRY_AFTER: not asked again, no wait
            pass
    assert turnstile.turns == 0
    await writer.close()


async def test_a_turn_held_too_long_is_not_waited_for(
    turnstiles: list[Turnstile], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process holding the turn past TURN_WAIT (stuck) does not stop the others' writers:
    they give up the wait, end its connection and go on without turns for a while."""
    monkeypatch.setattr(turns, "TURN_WAIT", 0.2)
    stuck, ours, _ = turnstiles
    groups = Groups()
    writer: GroupWriter[int, int] = GroupWriter(
        groups, units=lambda n: 1, max_group=100, max_waiting=100, what="units", turn=ours.turn
    )
    async with asyncio.timeout(GUARD), stuck.turn():
        assert await writer.submit(7) == 7
        assert ours.turns == 0
        assert ours._conn is None
        assert ours._retry_at > asyncio.get_running_loop().time()
    await writer.close()


async def test_after_close_writers_go_on_without_turns(turnstiles: list[Turnstile]) -> None:
    """A closed turnstile (the service stopping) opens no connection again: a writer still at
    work goes without turns."""
    first, _, _ = turnstiles
    async with first.turn():
        pass
    assert first.turns == 1
    first.close()
    async with asyncio.timeout(GUARD), first.turn():
        pass
    assert (first.turns, first._conn) == (1, None)


def turnstile_of(server: TestServer, log: web.AppKey[EventStore]) -> Turnstile | None:
    store = server.app[log]
    assert isinstance(store, PostgresEventStore)
    return store._turnstile


async def test_with_several_workers_the_treasurys_writers_take_turns(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """League serve --workers 2: the treasury's log has a turnstile (its spec asks for turns)
    and a claim takes a turn; the mint's log, whose groups cost less than a turn saves, has
    none. With one worker neither has: a turn would be two round trips for nothing."""
    several = make_settings().model_copy(update={"workers": 2, "port": free_port()})
    async with (
        composed(several, [MINT, TREASURY]) as server,
        checked_faucet(several, server) as faucet,
    ):
        await faucet.claim(SigningKey.generate(), 5)
        turnstile = turnstile_of(server, TREASURY_LOG)
        assert turnstile is not None
        assert turnstile.turns == 1
        assert turnstile_of(server, MINT_LOG) is None
    alone = several.model_copy(update={"workers": 1, "port": free_port()})
    async with composed(alone, [MINT, TREASURY]) as server:
        assert turnstile_of(server, TREASURY_LOG) is None
