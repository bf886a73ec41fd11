"""A human's No-Go drill at the tables service (IV.4, docs/rulings.md L-32): the pattern is
shown only once the drill has started, and an instant answer is judged on its arrival, not on
when the log's lock was had (an outsider logged instant answers at 8–12 s when the service's
waits were counted); the log's replay judges it the same."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from game.window import drill
from game.window.witnessed import replay_table
from ledger.events import body_as
from ledger.tables import MovePlayed, TableDealt, TableOpened, table_stream
from services.eventlog import EventStore
from services.kernel.settings import LeagueSettings
from services.tables.app import TABLES, TABLES_LOG
from tests.harness.served import GUARD_SECONDS
from tests.harness.tables import Player, player_at

#: The shortened drill time (seconds) and how long the log's lock is held, past it.
LIMIT = 3.0
HELD = 4.0


async def at_the_drill(player: Player) -> dict[str, Any]:
    """Find a Chair I table whose player, taking the first legal action each time, reaches a
    No-Go drill of its own: the view at the drill (no view before it showed a pattern)."""
    for _ in range(40):
        await player.open("chair-I")
        view = (await player.seed()).body
        shown = await player.get(f"/tables/table/{player.table}")
        assert shown.status == 200, shown
        assert shown.body["drill"] is None
        while view["waiting"] == "move":
            assert view["drill"] is None
            answer = await player.move(view["ply"], view["legal"][0])
            assert answer.status == 200, answer
            view = answer.body
        if view["waiting"] == "drill":
            shown = await player.get(f"/tables/table/{player.table}")
            assert shown.body["drill"] == view["drill"]  # shown once the drill has started
            return view
    raise AssertionError("no table of 40 reached a drill of the player's")


async def lock_awaited(store: EventStore) -> None:
    """Return once some transaction waits for a lock (the stuck group, for the log's)."""
    waiting = 0
    while not waiting:
        await asyncio.sleep(0.01)
        waiting = await store.fetchval("SELECT count(*) FROM pg_locks WHERE NOT granted")


async def test_an_instant_drill_answer_is_judged_instant_however_long_the_lock_is_held(
    settings: LeagueSettings, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drill's time shortened to 3 s; when the answer arrives, another table's request
    waits for the log's lock, which another transaction holds 4 s, so the answer queues behind
    it: it is played and judged on its arrival before the lock (a success), recorded once the
    lock is free, and the table replays from the log to the same outcome."""
    monkeypatch.setattr(drill, "TIME_LIMIT_SECONDS", LIMIT)
    player, other = player_at(settings, server), player_at(settings, server)
    view = await at_the_drill(player)
    assert view["drill"] is not None
    assert view["turn"] == player.key.public.to_text()
    store = server.app[TABLES_LOG]
    locked = asyncio.Event()

    async def hold() -> None:
        async with store.transaction() as tx:
            await tx.lock()
            locked.set()
            await asyncio.sleep(HELD)

    holder = asyncio.create_task(hold())
    await asyncio.wait_for(locked.wait(), GUARD_SECONDS)
    stuck = asyncio.create_task(other.open("clerk-1"))  # its group waits for the lock
    await asyncio.wait_for(lock_awaited(store), GUARD_SECONDS)
    started = time.monotonic()
    answer = await player.move(view["ply"], view["drill"])
    waited = time.monotonic() - started
    await holder
    await stuck
    assert answer.status == 200, answer
    assert waited > LIMIT  # the answer's wait was past the drill's time ...
    assert answer.body["played"][0] == "drill success"  # ... and not charged to it

    events = await store.read_stream(table_stream(player.table))
    moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events if e.type == MovePlayed.TYPE]
    assert moves[-1][0].arrived is not None
    secret = server.app[TABLES].secret(player.table)
    dealt = events[[e.type for e in events].index("table-dealt")]
    replayed = replay_table(
        body_as(events[0], TableOpened),
        body_as(dealt, TableDealt),
        dealt.recorded_at,
        moves,
        secret,
    )
    assert replayed.actions == answer.body["actions"]
