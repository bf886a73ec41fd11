"""Witnessed tables over real HTTP and a real PostgreSQL: a table against a clerk played to its
close, each move signed by the player and answered with the clerk's replies; the deal's reveal
and the whole table checked offline from the service's own log (docs/formats.md, "Witnessed
tables")."""

from __future__ import annotations

import asyncio
import threading

import pytest
from aiohttp.test_utils import TestServer

from game.window.witnessed import WitnessedTable, replay_table
from ledger.encoding import decode_b64url
from ledger.events import body_as
from ledger.tables import MovePlayed, TableDealt, TableOpened, commitment, reveals, table_stream
from services.kernel.settings import LeagueSettings
from services.tables.app import TABLES_LOG
from tests.harness.served import GUARD_SECONDS
from tests.harness.tables import played_out, player_at


async def test_a_clerk_table_played_to_its_close(
    settings: LeagueSettings, server: TestServer
) -> None:
    """The open answer commits to a secret; the close reveals one that opens it; the log's
    events replay, from the secret and the player's seed, to the same table and verdict."""
    player = player_at(settings, server)
    opened = await player.open("clerk-1")
    assert opened.body["waiting"] == "seed"
    view = await played_out(player)
    closing = view["closing"]
    secret = decode_b64url(closing["secret"], length=32)
    assert commitment(player.table, secret) == decode_b64url(player.commitment, length=32)

    store = server.app[TABLES_LOG]
    events = await store.read_stream(table_stream(player.table))
    assert [e.type for e in events][:2] == ["table-opened", "table-dealt"]
    assert events[-1].type == "table-closed"
    first = body_as(events[0], TableOpened)
    assert reveals(first, closing["secret"]) == secret
    moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events if e.type == "move-played"]
    dealt = body_as(events[1], TableDealt)
    table = replay_table(first, dealt, events[1].recorded_at, moves, secret)
    assert table.closed
    assert table.actions == view["actions"]
    assert table.verdict() == closing["verdict"]
    assert [list(c) for c in table.columns()] == closing["columns"]


async def test_an_opponent_thinking_holds_up_no_other_table(
    settings: LeagueSettings, server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The opponent's search for one table runs before that move waits for the log's lock:
    while it is held (a hook around the table's play), another table opens and is dealt; once
    released, the held move is recorded as played."""
    thinking, other = player_at(settings, server), player_at(settings, server)
    await thinking.open("clerk-1")
    view = (await thinking.seed()).body
    entered, gate = threading.Event(), threading.Event()
    play = WitnessedTable.play

    def held(table: WitnessedTable, text: str, elapsed: float | None = None) -> list[str]:
        entered.set()
        gate.wait(GUARD_SECONDS)
        return play(table, text, elapsed)

    monkeypatch.setattr(WitnessedTable, "play", held)
    move = asyncio.create_task(thinking.move(view["ply"], view["legal"][0]))
    try:
        assert await asyncio.to_thread(entered.wait, GUARD_SECONDS)
        opened = await asyncio.wait_for(other.open("clerk-2"), GUARD_SECONDS)
        assert opened.status == 200
        dealt = await asyncio.wait_for(other.seed(), GUARD_SECONDS)
        assert dealt.status == 200
        assert not move.done()
    finally:
        gate.set()
    answer = await move
    assert answer.status == 200, answer
    assert answer.body["played"][0] == view["legal"][0]
