"""Reading witnessed tables without replaying what need not be replayed, and sharing the
service's thinking between sources (``services/tables/reading.py``): a closed table is read from
its events, and a table in play from its events without a search; a move's thinking waits
its turn round-robin between sources; reads are limited per source."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

import services.tables.playing as playing
from game.window.witnessed import WitnessedTable
from ledger.errors import RateLimited
from services.kernel.settings import LeagueSettings
from services.tables.app import READS, WRITER
from services.tables.reading import READS_BURST, FairSlots
from tests.harness.served import GUARD_SECONDS
from tests.harness.serving import closing
from tests.harness.tables import Player, played_out, player_at, serve


def _refuse_replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every replay of a table fail loudly; the tables whose replay was tried."""
    tried: list[str] = []

    def refuse(opened: Any, *_: Any) -> WitnessedTable:
        tried.append(opened.table)
        raise AssertionError("the table was replayed")

    monkeypatch.setattr(playing, "replay_table", refuse)
    return tried


async def test_a_closed_table_is_read_from_its_events(
    settings: LeagueSettings, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that never played the table (a restart, another worker) answers a closed table
    as its close answered, from the events alone: no replay runs, the revealed seed included."""
    player = player_at(settings, server)
    await player.open("clerk-2")
    closed = await played_out(player)
    tried = _refuse_replays(monkeypatch)
    async with closing(await serve(settings.model_copy(update={"port": 0}))) as cold:
        player.url = str(cold.make_url(""))
        shown = await player.get(f"/tables/table/{player.table}")
    assert shown.status == 200, shown
    assert tried == []
    assert shown.body == {**closed, "played": []}


async def test_a_table_in_play_is_read_without_a_search_or_a_slot(
    settings: LeagueSettings, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table in play that a fresh server does not hold is read as the server that played it
    shows it (its legal actions included), followed from its events with no replay of the
    opponent's search and no thinking slot: eight readers while every slot is held are all
    answered. (Before, each cold read replayed the whole table's search in a slot, so an
    outsider's reads of its own Chair XII tables kept another player's move waiting.) The
    next move is replayed once, in a slot, and played."""
    player = player_at(settings, server)
    await player.open("chair-I")
    view = (await player.seed()).body
    moved = await player.move(view["ply"], view["legal"][0])
    assert moved.status == 200, moved
    warm = (await player.get(f"/tables/table/{player.table}")).body
    replays: list[str] = []
    replay = playing.replay_table

    def counted(*args: Any) -> WitnessedTable:
        replays.append(args[0].table)
        return replay(*args)

    monkeypatch.setattr(playing, "replay_table", counted)
    async with closing(await serve(settings.model_copy(update={"port": 0}))) as cold:
        player.url = str(cold.make_url(""))
        slots = cold.app[WRITER].thinking
        async with contextlib.AsyncExitStack() as held:
            for n in range(slots.free):
                await held.enter_async_context(slots.hold(f"busy-{n}"))
            shown = await asyncio.wait_for(
                asyncio.gather(*(player.get(f"/tables/table/{player.table}") for _ in range(8))),
                GUARD_SECONDS,
            )
        assert {answer.status for answer in shown} == {200}
        assert [answer.body for answer in shown] == [warm] * 8
        assert replays == []
        again = await player.move(warm["ply"], warm["legal"][0])
        assert again.status == 200, again
    assert replays == [player.table]


async def test_a_source_thinking_for_many_tables_waits_its_turn(
    settings: LeagueSettings, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every thinking slot held by one source's moves and more of its moves waiting,
    another source's move is the next to think, not the last."""
    slots = FairSlots(slots=1)
    writer = server.app[WRITER]
    monkeypatch.setattr(writer, "thinking", slots)
    gate, order = threading.Event(), []
    play = WitnessedTable.play

    def held(table: WitnessedTable, text: str, elapsed: float | None = None) -> list[str]:
        gate.wait(GUARD_SECONDS)
        order.append(id(table))
        return play(table, text, elapsed)

    monkeypatch.setattr(WitnessedTable, "play", held)

    async def ready(player: Player) -> dict[str, Any]:
        await player.open("clerk-1")
        body: dict[str, Any] = (await player.seed()).body
        return body

    greedy = [player_at(settings, server) for _ in range(3)]
    views = [await ready(p) for p in greedy]
    other = player_at(settings, server)
    other_view = await ready(other)

    def move(player: Player, view: dict[str, Any], source: str) -> asyncio.Task[Any]:
        request = player.move_request(view["ply"], view["legal"][0])
        return asyncio.create_task(writer.submit(request, source))

    tasks = [move(greedy[0], views[0], "greedy")]
    await _until(lambda: not slots.free)
    tasks += [move(p, v, "greedy") for p, v in zip(greedy[1:], views[1:], strict=True)]
    await _until(lambda: slots.waiting == 2)
    tasks.append(move(other, other_view, "other"))
    await _until(lambda: slots.waiting == 3)
    gate.set()
    await asyncio.wait_for(asyncio.gather(*tasks), GUARD_SECONDS)
    tables = [writer.tables.live[p.table] for p in (*greedy, other)]
    thought = [tables.index(next(t for t in tables if id(t) == i)) for i in order]
    assert thought[:2] == [0, 3]  # the other source's move right after the one in progress


async def test_a_source_with_too_many_moves_waiting_is_refused() -> None:
    """Past its share of waiting thoughts a source is refused (429), spending nothing; another
    source still waits."""
    slots = FairSlots(slots=1, per_source=2)
    async with slots.hold("a"):
        waiting = [asyncio.create_task(_hold(slots, "a")) for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(RateLimited):
            await _hold(slots, "a")
        other = asyncio.create_task(_hold(slots, "b"))
        await asyncio.sleep(0)
        assert slots.waiting == 3
    await asyncio.wait_for(asyncio.gather(*waiting, other), GUARD_SECONDS)
    assert slots.free == 1
    assert slots.waiting == 0


async def test_a_waiter_cancelled_passes_no_slot_away() -> None:
    """A waiter that leaves (its client vanished) neither keeps nor loses a slot."""
    slots = FairSlots(slots=1)
    async with slots.hold("a"):
        leaving = asyncio.create_task(_hold(slots, "b"))
        await asyncio.sleep(0)
        leaving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leaving
    assert slots.free == 1
    assert slots.waiting == 0


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(int(GUARD_SECONDS * 100)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came")


async def _hold(slots: FairSlots, source: str) -> None:
    async with slots.hold(source):
        await asyncio.sleep(0)


async def test_reads_are_limited_per_source(settings: LeagueSettings, server: TestServer) -> None:
    """A source reading faster than the published rate is refused with 429 and Retry-After."""
    player = player_at(settings, server)
    await player.open("clerk-1")
    await server.app[READS].spend("127.0.0.0/24", READS_BURST)
    refused = await player.get(f"/tables/table/{player.table}")
    assert refused.status == 429, refused
    assert refused.problem == "rate-limited"
