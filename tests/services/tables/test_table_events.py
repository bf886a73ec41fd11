"""``GET /tables/table/{table}/events``: one table's stream of the tables log, each event as the
signed feed serves it, for the player to check the reveal and replay the table (docs/api.md,
"The tables"); a table never opened is 404 ``unknown-table``."""

from __future__ import annotations

from aiohttp.test_utils import TestServer

from ledger.api.tables import TableEvents
from ledger.keys import PublicKey
from services.kernel.settings import LeagueSettings
from tests.harness.tables import played_out, player_at


async def test_a_tables_events_are_served_signed_in_order(
    settings: LeagueSettings, server: TestServer
) -> None:
    """Opened, dealt, every move, closed: each verifies under the manifest's tables key, and
    the moves carry the actions the table's view lists."""
    player = player_at(settings, server)
    await player.open("clerk-2")
    view = await played_out(player)
    answer = await player.get(f"/tables/table/{player.table}/events")
    assert answer.status == 200, answer
    served = TableEvents.model_validate(answer.body)
    assert player.manifest.tables is not None
    key = PublicKey.from_text(player.manifest.tables)
    events = [e.verified(key) for e in served.events]
    types = [e.type for e in events]
    assert types[:2] == ["table-opened", "table-dealt"]
    assert types[-1] == "table-closed"
    assert set(types[2:-1]) == {"move-played"}
    assert all(e.stream == f"table/{player.table}" for e in events)
    assert [a for e in events[2:-1] for a in e.body["actions"]] == view["actions"]


async def test_a_table_never_opened_has_no_events(
    settings: LeagueSettings, server: TestServer
) -> None:
    """A table id nobody opened is answered 404 unknown-table, as its view is."""
    player = player_at(settings, server)
    answer = await player.get(f"/tables/table/{'0' * 32}/events")
    assert (answer.status, answer.problem) == (404, "unknown-table")
