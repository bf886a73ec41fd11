"""The tables service asks the mint for the Misprint for the first settling Balance at Chair VI
or above (Book IV.6, docs/rulings.md L-24, L-41), over real HTTP with the mint composed beside
it: whichever such table is read first, the award goes to the first settling close of the log;
every later settling Balance is told it is gone; a Balance below Chair VI, or one that settles
nothing (a venue its player's witnessed campaign has not opened, or no proof of work), asks
nothing and is told nothing of it."""

from __future__ import annotations

from ledger.api.tables import Closing, TableView
from ledger.keys import PublicKey, SigningKey
from ledger.print_runs import MISPRINT_SERIAL
from services.eventlog import EventStore
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import MISPRINTS, TABLES_LOG
from services.tables.app import SERVICE as TABLES
from tests.harness.rewards import campaign_to_chair_six, record_close
from tests.harness.serving import composed


async def view_of(store: EventStore, table: str) -> TableView:
    """The closed view of ``table``, a Balance recorded by ``record_close``."""
    row = await store.fetchrow("SELECT venue, player FROM tables.tables WHERE table_id = $1", table)
    assert row is not None
    closing = Closing(secret="s", seed=1, verdict="balance", columns=[[1, 1, 1]] * 2)
    return TableView(
        table=table,
        venue=row[0],
        player=row[1],
        commitment="c",
        waiting="closed",
        ply=0,
        closing=closing,
    )


async def test_the_first_settling_balance_at_chair_six_wins_the_misprint(
    settings: LeagueSettings,
) -> None:
    """# IV.6, L-24, L-41. Chair V's Balance asks nothing; of two settling Balances at Chairs
    VII then VI, the later read first is told it is gone, to the earlier, which gets the
    mint-signed CZ-TALLY-000."""
    manifest = load_manifest(settings)
    async with composed(settings, [MINT, TABLES]) as server:
        store, misprints = server.app[TABLES_LOG], server.app[MISPRINTS]
        early, late = SigningKey.generate(), SigningKey.generate()
        await campaign_to_chair_six(store, manifest, early)
        await record_close(store, manifest, early, "chair-VI", "win")
        await campaign_to_chair_six(store, manifest, late)
        low = await view_of(store, await record_close(store, manifest, late, "chair-V", "balance"))
        assert await misprints.outcome(low) is None
        first = await view_of(
            store, await record_close(store, manifest, early, "chair-VII", "balance")
        )
        later = await view_of(
            store, await record_close(store, manifest, late, "chair-VI", "balance")
        )
        gone = await misprints.outcome(later)
        assert gone is not None
        assert gone.status == "gone", gone
        assert first.table in gone.detail
        won = await misprints.outcome(first)
        assert won is not None
        assert won.status == "awarded", won
        assert won.certificate is not None
        won.certificate.verify(PublicKey.from_text(manifest.mint))
        assert won.certificate.serial == MISPRINT_SERIAL
        assert won.certificate.issued_to == first.player


async def test_a_balance_that_settles_nothing_does_not_win_the_misprint(
    settings: LeagueSettings,
) -> None:
    """# IV.6, L-25, L-28, L-41. A throwaway key's Balance at chair-VI (its witnessed campaign
    never opened Chair VI), read first, wins nothing and asks the mint nothing; neither does a
    Balance at chair-VI opened without its proof of work by a key whose campaign opened it;
    the next Balance, settling, gets the Misprint, and the mint awarded it to that table."""
    manifest = load_manifest(settings)
    async with composed(settings, [MINT, TABLES]) as server:
        store, misprints = server.app[TABLES_LOG], server.app[MISPRINTS]
        throwaway, player = SigningKey.generate(), SigningKey.generate()
        locked = await view_of(
            store, await record_close(store, manifest, throwaway, "chair-VI", "balance")
        )
        assert await misprints.outcome(locked) is None
        await campaign_to_chair_six(store, manifest, player)
        unworked = await view_of(
            store,
            await record_close(store, manifest, player, "chair-VI", "balance", work=False),
        )
        assert await misprints.outcome(unworked) is None
        settling = await view_of(
            store, await record_close(store, manifest, player, "chair-VI", "balance")
        )
        won = await misprints.outcome(settling)
        assert won is not None
        assert won.status == "awarded", won
        assert won.certificate is not None
        assert won.certificate.issued_to == player.public.to_text()
        assert await misprints.outcome(locked) is None
        assert await misprints.outcome(unworked) is None
        awarded = await store.fetch(
            "SELECT body->>'request_id' FROM mint.events WHERE stream = $1",
            f"print/{MISPRINT_SERIAL}",
        )
        assert [row[0] for row in awarded] == [settling.table]
