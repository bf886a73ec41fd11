"""A witnessed table outlives its server: ``league serve tables`` SIGKILLed mid-table (no
shutdown, no last checkpoint) and started again over the same database, the service replays
the table from its own log and the player plays on to the close, which replays whole
(docs/formats.md, "Witnessed tables")."""

from __future__ import annotations

import asyncio

from ledger.keys import SigningKey
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from tests.harness.served import GUARD_SECONDS, serve_child
from tests.harness.tables import Player, played_out_from


async def test_a_table_continues_after_the_service_is_killed(settings: LeagueSettings) -> None:
    """The moves before the kill stand; the table waits for the same move; it closes."""
    process, url = await serve_child(settings, "tables")
    try:
        player = Player(SigningKey.generate(), load_manifest(settings), url)
        await player.open("chair-I")
        view = (await player.seed()).body
        first = await player.move(view["ply"], view["legal"][0])
        assert first.status == 200, first
        before = first.body
    finally:
        process.kill()  # SIGKILL
        await asyncio.wait_for(process.wait(), GUARD_SECONDS)

    process, player.url = await serve_child(settings, "tables")
    try:
        shown = await player.get(f"/tables/table/{player.table}")
        assert shown.status == 200, shown
        assert shown.body["actions"] == before["actions"]
        assert shown.body["legal"] == before["legal"]
        closed = await played_out_from(player, shown.body)
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), GUARD_SECONDS)
    assert closed["actions"][: len(before["actions"])] == before["actions"]
