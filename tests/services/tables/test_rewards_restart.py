"""A witnessed table's reward outlives a SIGKILL (``services.tables.rewards``): ``league serve
tables`` killed mid-table, after two tables closed and before their rewards were paid (the
treasury did not answer), one of them then paid by the treasury as if the service had died
after the treasury's answer and before its record; the service started again settles both, the
second by the treasury's replay of the same order, and the table cut off mid-table at its
close: each table paid exactly once."""

from __future__ import annotations

import asyncio

import aiohttp
import asyncpg

from ledger.api.rewards import RewardAnswer, RewardDue, reward_stream
from ledger.events import RewardPaid
from ledger.keys import SigningKey
from ledger.rewards import TableRewarded
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.rewards import Rewards
from services.treasury.app import SERVICE as TREASURY
from tests.harness.ports import free_port
from tests.harness.rewards import open_worked, play_to
from tests.harness.served import GUARD_SECONDS, serve_child
from tests.harness.serving import composed
from tests.harness.tables import Player, played_out_from


async def test_rewards_cut_off_by_a_kill_are_paid_once_after_the_restart(
    settings: LeagueSettings,
) -> None:
    """# IV.1, L-27: both tables' 10 marks are paid once each; the one the treasury paid
    before the restart is recorded with that payment, its order answered as a replay."""
    manifest = load_manifest(settings)
    silent = f"http://127.0.0.1:{free_port()}"  # nothing answers there
    process, url = await serve_child(settings, "tables", TREASURY_URL=silent)
    try:
        player = Player(SigningKey.generate(), manifest, url)
        await play_to(player, "clerk-1", ("win", "balance"))
        first = player.table
        await play_to(player, "clerk-2", ("win", "balance"))
        second = player.table
        # A third table, killed mid-table: one move played.
        await open_worked(player, "clerk-3")
        view = (await player.seed()).body
        moved = await player.move(view["ply"], view["legal"][0])
        assert moved.status == 200, moved
        third = player.table
    finally:
        process.kill()  # SIGKILL: the rewards were never paid
        await asyncio.wait_for(process.wait(), GUARD_SECONDS)

    async with (
        asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool,
        composed(settings, [MINT, TREASURY]) as server,
    ):
        key = load_service_key(settings, manifest, "tables", None)
        tables = PostgresEventStore(
            pool, schema="tables", origin=f"{manifest.league}/tables", key=key
        )
        treasury_key = load_service_key(settings, manifest, "treasury", None)
        treasury = PostgresEventStore(
            pool, schema="treasury", origin=f"{manifest.league}/treasury", key=treasury_key
        )
        for table in (first, second):
            assert await tables.read_stream(reward_stream(table)) == []
        # The treasury pays the second table's order, as if the service died on its answer.
        treasury_url = str(server.make_url(""))
        found = await Rewards(manifest, key, tables, None).order(second)
        assert found is not None
        _, due, order = found
        assert due == RewardDue(marks=10)
        assert order is not None
        async with (
            aiohttp.ClientSession() as session,
            session.post(treasury_url + "/treasury/rewards", json=order.to_wire()) as answer,
        ):
            assert answer.status == 200, await answer.text()
            paid_before = RewardAnswer.model_validate_json(await answer.text())

        process, player.url = await serve_child(settings, "tables", TREASURY_URL=treasury_url)
        try:
            shown = await player.get(f"/tables/table/{third}")
            assert shown.status == 200, shown
            closed = await played_out_from(player, shown.body)
            for _ in range(GUARD_SECONDS * 20):  # a bound, not a timing assertion
                streams = [await tables.read_stream(reward_stream(t)) for t in (first, second)]
                if all(streams):
                    break
                await asyncio.sleep(0.05)
            records = [TableRewarded.from_wire(s[0].body) for s in streams]
        finally:
            process.terminate()
            await asyncio.wait_for(process.wait(), GUARD_SECONDS)

        # The table killed mid-table closed after the restart and was settled at its close.
        last = await tables.read_stream(reward_stream(third))
        assert len(last) == 1
        settled = TableRewarded.from_wire(last[0].body)
        won = closed["closing"]["verdict"] != "loss"
        assert settled.due == (RewardDue(marks=10) if won else RewardDue())
        assert len(await treasury.read_stream(reward_stream(third))) == (1 if won else 0)
        assert [r.due for r in records] == [RewardDue(marks=10)] * 2
        assert records[1].paid == paid_before.paid
        for table, record in zip((first, second), records, strict=True):
            paid = await treasury.read_stream(reward_stream(table))
            assert len(paid) == 1
            assert paid[0].seq == record.paid
            body = RewardPaid.from_wire(paid[0].body)
            assert sum(n.denomination for n in body.notes) == 10
            issued = await treasury.fetch(
                "SELECT count(*) FROM treasury.events WHERE type = 'note-issued' "
                "AND body->>'request_id' = $1",
                table,
            )
            assert issued[0][0] == len(body.notes)
