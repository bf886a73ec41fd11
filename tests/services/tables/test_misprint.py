"""The tables service asks the mint for the Misprint for the first witnessed Balance at Chair VI
or above (Book IV.6, docs/rulings.md L-24), over real HTTP with the mint composed beside it:
whichever such table is read first, the award goes to the first close of the log; every later
Balance is told it is gone; a Balance below Chair VI asks nothing."""

from __future__ import annotations

import secrets
import time

from ledger.api.tables import Closing, TableView
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.tables import TableClosed, TableOpen, TableOpened
from ledger.wire import hash_text
from services.eventlog import EventStore
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.tables.app import MISPRINTS, TABLES_LOG
from services.tables.app import SERVICE as TABLES
from services.tables.projection import PROJECTION, TablesChanges
from tests.harness.serving import composed


async def balance_closed(store: EventStore, manifest: LeagueManifest, venue: str) -> TableView:
    """A table at ``venue`` recorded in the tables log as the service records one closing with
    the player's Balance (its open and close events, its row), and its closed view."""
    player = SigningKey.generate()
    request = TableOpen.sign(
        player,
        league=manifest.league,
        manifest=manifest.hash_text(),
        request_id=secrets.token_hex(8),
        time=int(time.time()),
        player=player.public.to_text(),
        venue=venue,
    )
    table = request.table_id()
    commitment = hash_text(secrets.token_bytes(32))
    opened = TableOpened(table=table, request=request, commitment=commitment)
    closed = TableClosed(
        table=table,
        secret=hash_text(secrets.token_bytes(32)),
        verdict="balance",
        columns=((1, 1, 1), (1, 1, 1)),
    )
    async with store.transaction() as tx:
        await tx.lock()
        changes = TablesChanges()
        PROJECTION.apply(changes.rows, opened, tx.now)
        PROJECTION.apply(changes.rows, closed, tx.now)
        await tx.append_batch([opened.new_event(0), closed.new_event(1)])
        await PROJECTION.write(tx, changes)
    closing = Closing(secret=closed.secret, seed=1, verdict="balance", columns=[[1, 1, 1]] * 2)
    return TableView(
        table=table,
        venue=venue,
        player=player.public.to_text(),
        commitment=opened.commitment,
        waiting="closed",
        ply=0,
        closing=closing,
    )


async def test_the_first_witnessed_balance_at_chair_six_wins_the_misprint(
    settings: LeagueSettings,
) -> None:
    """Chair V's Balance asks nothing; of two Balances at Chairs VII then VI, the later read
    first is told it is gone, to the earlier, which gets the mint-signed CZ-TALLY-000."""
    manifest = load_manifest(settings)
    async with composed(settings, [MINT, TABLES]) as server:
        store, misprints = server.app[TABLES_LOG], server.app[MISPRINTS]
        low = await balance_closed(store, manifest, "chair-V")
        assert await misprints.outcome(low) is None
        first = await balance_closed(store, manifest, "chair-VII")
        later = await balance_closed(store, manifest, "chair-VI")
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
