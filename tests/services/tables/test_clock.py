"""The move clock (docs/formats.md "The move clock", docs/rulings.md L-19, L-31): a move that
arrives after its table's clock is refused ``timed-out``; the leader's sweep abandons every
table past its clock (a duel never joined among them) with a ``table-abandoned`` event that
settles nothing; the audit accepts the abandonments only after the clock, and replays an
abandoned table as far as it went. The clock is the manifest's published policy
(``table_move_seconds``, ``table_join_seconds``: minutes by default); these tests found
their league with a clock of a second."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from game.window.witnessed import referee
from ledger import tables as protocol
from ledger.api.tables import TableView
from ledger.audit import AuditFailure
from ledger.audit.tables import TablesChecker
from ledger.events import body_as
from ledger.leaf import format_time, parse_time
from ledger.tables import TableAbandoned, reveals, table_stream
from services.kernel.keyring import read_key
from services.kernel.settings import LeagueSettings
from services.tables import clock
from services.tables.app import SWEEPER, TABLES_LOG
from tests.harness.founding import TEST_POLICIES
from tests.harness.ports import free_port
from tests.harness.served import GUARD_SECONDS
from tests.harness.serving import closing
from tests.harness.tables import Player, player_at, serve
from tests.harness.tables_audit import edited

#: The shortened clock (seconds) and a wait past it and its sweep's grace (a fifth of it).
CLOCK = 1
PAST = 1.5


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    """A league whose manifest publishes a move clock (and a join clock) of a second."""
    clock = {"table_move_seconds": CLOCK, "table_join_seconds": CLOCK}
    founded = make_settings(policies=TEST_POLICIES.model_copy(update=clock))
    return founded.model_copy(update={"port": free_port()})


async def test_the_clock_refuses_a_late_move_and_the_sweep_abandons_settling_nothing(
    settings: LeagueSettings, server: TestServer
) -> None:
    """Past the clock a move is 409 timed-out (nothing recorded); one sweep abandons the dealt
    table and the duel nobody joined, not a table opened since; the abandoned tables show no
    verdict and pay no Misprint, the duel's code joins nothing, and a second sweep finds
    nothing (L-31)."""
    player, opener = player_at(settings, server), player_at(settings, server)
    fresh, joiner = player_at(settings, server), player_at(settings, server)
    await player.open("clerk-1")
    view = (await player.seed()).body
    assert view["deadline"] is not None
    moved = await player.move(view["ply"], view["legal"][0])
    assert moved.status == 200, moved
    view = moved.body
    await opener.open("duel-base")
    await asyncio.sleep(PAST)
    await fresh.open("clerk-2")  # within its clock: the sweep leaves it

    store = server.app[TABLES_LOG]
    version = await store.stream_version(table_stream(player.table))
    late = await player.move(view["ply"], view["legal"][0])
    assert (late.status, late.problem) == (409, "timed-out")  # L-31
    assert await store.stream_version(table_stream(player.table)) == version

    sweeper = server.app[SWEEPER]
    assert await sweeper.sweep() == 2
    assert await sweeper.sweep() == 0
    for who, waited in ((player, "move"), (opener, "join")):
        shown = (await who.get(f"/tables/table/{who.table}")).body
        assert shown["waiting"] == "abandoned"
        assert shown["closing"] is None
        assert shown["deadline"] is None
        events = await store.read_stream(table_stream(who.table))
        assert [e.type for e in events].count("table-closed") == 0
        abandoned = body_as(events[-1], TableAbandoned)
        assert abandoned.waiting == waited
        reveals(body_as(events[0], protocol.TableOpened), abandoned.secret)
    abandoned_move = body_as(
        (await store.read_stream(table_stream(player.table)))[-1], TableAbandoned
    )
    assert abandoned_move.seat == player.key.public.to_text()
    assert (await player.get(f"/tables/table/{fresh.table}")).status == 200
    assert (await fresh.get(f"/tables/table/{fresh.table}")).body["waiting"] == "seed"
    answer = await joiner.join(opener.code)
    assert (answer.status, answer.problem) == (404, "unknown-table")
    again = await player.move(view["ply"], view["legal"][0])
    assert (again.status, again.problem) == (409, "timed-out")
    events = await store.read_stream(table_stream(player.table))
    assert not any(e.type == "table-closed" for e in events)  # nothing to settle or pay

    async with LeagueClient(player.url) as league:
        feed = (await league.events(-1, 1000, service="tables")).events
    checker = TablesChecker(player.manifest, referee)
    checker.add(feed)
    assert checker.report().abandoned == 2
    # The abandoned table is replayed as far as it went, at its abandonment: an action edited
    # into its move (the event signed again by the operator's tables key) fails the audit.
    key = read_key(settings.keys_dir, "tables", None)
    at = next(
        i
        for i, e in enumerate(feed)
        if e.type == "move-played" and e.stream == table_stream(player.table)
    )
    body = dict(feed[at].body)
    played = list(body["actions"])
    body["actions"] = [*played[:-1], next(a for a in view["legal"] if a != played[-1])]
    forged = [*feed[:at], edited(feed[at], body, key), *feed[at + 1 :]]
    with pytest.raises(AuditFailure, match=r"the log records .* the table plays"):
        TablesChecker(player.manifest, referee).add(forged)
    # The audit judges the log on the manifest's clock: the abandonment recorded (and signed
    # again by the operator's key) half a clock after the table's last event fails it.
    ended = max(i for i, e in enumerate(feed) if e.stream == table_stream(player.table))
    assert feed[ended].type == "table-abandoned"
    early = parse_time(feed[at].recorded_at) + timedelta(seconds=CLOCK / 2)
    moved = feed[ended].model_copy(update={"recorded_at": format_time(early)})
    forged = [*feed[:ended], edited(moved, feed[ended].body, key), *feed[ended + 1 :]]
    with pytest.raises(AuditFailure, match=f"within its {CLOCK} s move clock"):
        TablesChecker(player.manifest, referee).add(forged)


async def test_the_leader_sweeps_by_itself(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service's leader runs the sweep on its own (a leader-only task beside the
    checkpointer's): a table left past its clock is abandoned without anyone asking, and the
    seed it waited for, sent then, is timed out (not "dealt already")."""
    monkeypatch.setattr(clock, "SWEEP_SECONDS", 0.1)
    async with closing(await serve(settings)) as server:
        player = player_at(settings, server)
        await player.open("clerk-3")
        await asyncio.sleep(PAST)
        view = await asyncio.wait_for(abandoned(player), GUARD_SECONDS)
        assert view["closing"] is None
        assert server.app[SWEEPER].abandoned >= 1
        late = await player.seed()  # the seed it waited for, too late: timed out, not dealt
        assert (late.status, late.problem) == (409, "timed-out")


async def abandoned(player: Player) -> dict[str, Any]:
    """The view of ``player``'s table once it is abandoned (read until it is)."""
    view = (await player.get(f"/tables/table/{player.table}")).body
    while view["waiting"] != "abandoned":
        assert view["waiting"] == "seed", view
        await asyncio.sleep(0.1)
        view = (await player.get(f"/tables/table/{player.table}")).body
    return view


async def test_a_move_that_arrived_in_time_is_played_after_the_clock_and_its_table_not_swept(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """# L-31. A move that arrived within its clock but waited past it (for a thinking slot, or
    its table's replay, as when an outsider's reads fill the slots) is played, not refused:
    the sweep leaves a table alone for a fifth of its clock after the clock ran out
    (``services.tables.playing.SWEEP_GRACE``), and a move is judged on its arrival. (Before,
    the sweep abandoned the table the instant its clock ran out and the waiting move was
    refused timed-out.) A four-second clock here, so the grace is wide enough for a busy
    machine."""
    seconds = 4
    policies = {"table_move_seconds": seconds, "table_join_seconds": seconds}
    settings = make_settings(policies=TEST_POLICIES.model_copy(update=policies))
    settings = settings.model_copy(update={"port": free_port()})
    async with closing(await serve(settings)) as server:
        player = player_at(settings, server)
        await player.open("clerk-1")
        view = (await player.seed()).body
        request = player.move_request(view["ply"], view["legal"][0])
        arrived = int(time.time() * 1000)  # at once: well within the clock
        await asyncio.sleep(seconds + 0.1)  # decided only now, past the clock
        sweeper = server.app[SWEEPER]
        assert await sweeper.sweep() == 0
        played = await sweeper.writer.submit(request, "a player", arrived)
        assert isinstance(played, TableView), played
        assert played.ply > view["ply"]
        assert played.waiting != "abandoned"
