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
from tests.harness.tables import Player, duel_dealt, duel_played_out, played_out_from


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


async def test_a_duel_continues_after_the_service_is_killed(settings: LeagueSettings) -> None:
    """A duel cut off mid-table by a SIGKILL: after the restart it waits for the same seat's
    move at the same ply with the same deadline (its clock runs from its last event, not from
    the restart: L-31), a move replayed from before the kill is still refused, and the two
    players play it to its close, recorded once (one table-closed, one settlement)."""
    process, url = await serve_child(settings, "tables")
    manifest = load_manifest(settings)
    opener = Player(SigningKey.generate(), manifest, url)
    joiner = Player(SigningKey.generate(), manifest, url)
    try:
        view = await duel_dealt(opener, joiner, "duel-market")
        first = opener.move_request(view["ply"], view["legal"][0])
        answer = await opener.post("/tables/move", first.to_wire())
        assert answer.status == 200, answer
        before = answer.body
    finally:
        process.kill()  # SIGKILL
        await asyncio.wait_for(process.wait(), GUARD_SECONDS)

    process, url = await serve_child(settings, "tables")
    opener.url = joiner.url = url
    try:
        shown = (await opener.get(f"/tables/table/{opener.table}")).body
        for field in ("actions", "legal", "turn", "deadline", "ply"):
            assert shown[field] == before[field], field
        replayed = await opener.post("/tables/move", first.to_wire())
        assert (replayed.status, replayed.problem) == (409, "move-replayed")
        players = {p.key.public.to_text(): p for p in (opener, joiner)}
        closed = await duel_played_out(players, shown)
        events = (await opener.get(f"/tables/table/{opener.table}/events")).body["events"]
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), GUARD_SECONDS)
    assert closed["actions"][: len(before["actions"])] == before["actions"]
    assert [e["type"] for e in events].count("table-closed") == 1
    assert closed["closing"]["reward"]["status"] == "nothing"  # L-33
