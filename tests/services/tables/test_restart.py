"""A witnessed table outlives its server: stopped mid-table and served again by a new app over
the same database, the service replays the table from its own log and the player plays on to
the close, whose record replays whole (docs/formats.md, "Witnessed tables")."""

from __future__ import annotations

from aiohttp.test_utils import TestServer

from services.kernel.settings import LeagueSettings
from tests.harness.serving import closing
from tests.harness.tables import player_at, serve
from tests.services.tables.test_playing import played_out_from


async def test_a_table_continues_after_the_service_restarts(
    settings: LeagueSettings, server: TestServer
) -> None:
    player = player_at(settings, server)
    await player.open("chair-I")
    view = (await player.seed()).body
    first = await player.move(view["ply"], view["legal"][0])
    assert first.status == 200, first
    before = first.body
    await server.close()

    async with closing(await serve(settings)) as again:
        player.url = str(again.make_url(""))
        shown = await player.get(f"/tables/table/{player.table}")
        assert shown.status == 200, shown
        assert shown.body["actions"] == before["actions"]
        assert shown.body["legal"] == before["legal"]
        closed = await played_out_from(player, shown.body)
    assert closed["actions"][: len(before["actions"])] == before["actions"]
