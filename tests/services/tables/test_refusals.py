"""What a witnessed table refuses, each as problem+json naming its type, and records nothing
for: a forged move, a move on another player's table, a move out of turn, a move replayed, a
move the rules forbid (docs/formats.md, "Witnessed tables")."""

from __future__ import annotations

from collections.abc import Callable

import aiohttp
from aiohttp.test_utils import TestServer

from ledger.keys import SigningKey
from ledger.tables import TableMove, TableOpen, table_stream
from services.kernel.settings import LeagueSettings
from services.tables.app import TABLES_LOG
from tests.harness.founding import TEST_POLICIES
from tests.harness.ports import free_port
from tests.harness.serving import closing
from tests.harness.tables import player_at, serve


async def test_forged_out_of_turn_replayed_and_illegal_moves_are_refused(
    settings: LeagueSettings, server: TestServer
) -> None:
    player = player_at(settings, server)
    await player.open("clerk-2")
    early = await player.move(0, "collect")
    assert (early.status, early.problem) == (409, "out-of-turn")  # not dealt yet
    view = (await player.seed()).body
    legal = view["legal"][0]
    store = server.app[TABLES_LOG]
    events = await store.stream_version(table_stream(player.table))

    forged = player.move_request(0, legal, key=SigningKey.generate())  # the player's name
    answer = await player.post("/tables/move", forged.to_wire())
    assert (answer.status, answer.problem) == (422, "bad-signature")

    other = SigningKey.generate()  # signs as itself, at the player's table
    theirs = TableMove.sign(
        other, **{**player.move_request(0, legal).body(), "player": other.public.to_text()}
    )
    answer = await player.post("/tables/move", theirs.to_wire())
    assert (answer.status, answer.problem) == (422, "bad-signature")

    ahead = await player.move(1, legal)
    assert (ahead.status, ahead.problem) == (409, "out-of-turn")
    illegal = await player.move(0, "build Zenoseal")
    assert (illegal.status, illegal.problem) == (422, "illegal-move")
    assert await store.stream_version(table_stream(player.table)) == events

    move = player.move_request(0, legal)
    played = await player.post("/tables/move", move.to_wire())
    assert played.status == 200, played
    after = await store.stream_version(table_stream(player.table))
    assert after == events + 1
    replayed = await player.post("/tables/move", move.to_wire())
    assert (replayed.status, replayed.problem) == (409, "move-replayed")
    assert await store.stream_version(table_stream(player.table)) == after

    unknown = player.move_request(0, legal).body() | {"table": "0" * 32}
    answer = await player.post("/tables/move", TableMove.sign(player.key, **unknown).to_wire())
    assert (answer.status, answer.problem) == (404, "unknown-table")


async def test_tables_opened_per_source_are_limited(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """At a burst of one table a source, its second table is 429 rate-limited, Retry-After
    named."""
    policies = TEST_POLICIES.model_copy(
        update={"source_prints_per_minute": 1, "source_prints_burst": 1}
    )
    settings = make_settings(policies=policies).model_copy(update={"port": free_port()})
    async with closing(await serve(settings)) as server:
        player = player_at(settings, server)
        await player.open("clerk-1")
        request = player.signed(TableOpen, request_id="second-table", venue="clerk-1")
        async with (
            aiohttp.ClientSession() as session,
            session.post(player.url + "/tables/open", json=request.to_wire()) as response,
        ):
            assert response.status == 429
            assert int(response.headers["Retry-After"]) >= 1
            assert (await response.json())["type"] == "/problems/rate-limited"
