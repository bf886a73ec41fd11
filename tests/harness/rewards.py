"""Witnessed tables that pay (``ledger.rewards``): a player's table opened with its venue's
proof of work and played to a verdict, and closes recorded in the tables log as the service
records them (to reach a Chair without playing the campaign's seventeen tables)."""

from __future__ import annotations

import secrets
import time
from typing import Any

from game.window.rewards import worked_open
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.tables import Deal, TableClosed, TableDealt, TableOpened, TableSeed
from ledger.wire import hash_text
from services.eventlog import EventStore
from services.tables.projection import PROJECTION, TablesChanges
from tests.harness.tables import Player, played_out

#: Most tables a test opens looking for a verdict (the first legal action each time).
MAX_TRIES = 40


async def open_worked(player: Player, venue: str) -> None:
    """``player`` opens a table at ``venue`` with its proof of work."""
    request = worked_open(
        player.key,
        player.manifest,
        venue=venue,
        request_id=secrets.token_hex(8),
        at=int(time.time()),
    )
    answer = await player.post("/tables/open", request.to_wire())
    assert answer.status == 200, answer
    player.table, player.commitment = answer.body["table"], answer.body["commitment"]


async def play_to(player: Player, venue: str, verdicts: tuple[str, ...]) -> dict[str, Any]:
    """Tables at ``venue`` played out (with their work) until one closes with one of
    ``verdicts``; its closed view."""
    for _ in range(MAX_TRIES):
        await open_worked(player, venue)
        view = await played_out(player)
        if view["closing"]["verdict"] in verdicts:
            return view
    raise AssertionError(f"no table at {venue} closed with {verdicts} in {MAX_TRIES} tries")


async def record_close(
    store: EventStore, manifest: LeagueManifest, key: SigningKey, venue: str, verdict: str
) -> str:
    """A table of ``key`` at ``venue`` (with its work) recorded opened, dealt and closed with
    ``verdict`` in the tables log, as the service records them, with its row; its id."""
    request = worked_open(
        key, manifest, venue=venue, request_id=secrets.token_hex(8), at=int(time.time())
    )
    table = request.table_id()
    opened = TableOpened(
        table=table, request=request, commitment=hash_text(secrets.token_bytes(32))
    )
    seed = TableSeed.sign(
        key,
        league=manifest.league,
        manifest=manifest.hash_text(),
        table=table,
        time=int(time.time()),
        player=key.public.to_text(),
        commitment=opened.commitment,
        seed=hash_text(secrets.token_bytes(32)),
    )
    deal = Deal(table="market", hands=((), ()), market=())
    dealt = TableDealt(table=table, request=seed, deal=deal)
    closed = TableClosed(
        table=table,
        secret=hash_text(secrets.token_bytes(32)),
        verdict=verdict,  # type: ignore[arg-type]
        columns=((1, 1, 1), (1, 1, 1)),
    )
    async with store.transaction() as tx:
        await tx.lock()
        changes = TablesChanges()
        for body in (opened, dealt, closed):
            PROJECTION.apply(changes.rows, body, tx.now)
        await tx.append_batch([opened.new_event(0), dealt.new_event(1), closed.new_event(2)])
        await PROJECTION.write(tx, changes)
    return table
