"""Witnessed tables that pay (``ledger.rewards``): a player's table opened with its venue's
proof of work and played to a verdict, and closes recorded in the tables log as the service
records them (to reach a Chair without playing the campaign's seventeen tables)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import asyncpg

from game.window.rewards import table_open
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest
from ledger.tables import (
    MISPRINT_CHAIRS,
    Deal,
    TableClosed,
    TableDealt,
    TableOpened,
    TableSeed,
)
from ledger.wire import hash_text
from services.eventlog import EventStore
from services.eventlog.store import PostgresEventStore
from services.kernel.keyring import read_key
from services.tables.projection import PROJECTION, TablesChanges
from tests.harness.tables import Player, balance_recorded, played_out

#: Most tables a test opens looking for a verdict (the first legal action each time).
MAX_TRIES = 40


async def open_worked(player: Player, venue: str) -> None:
    """``player`` opens a table at ``venue`` with its proof of work."""
    request = table_open(
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
    store: EventStore,
    manifest: LeagueManifest,
    key: SigningKey,
    venue: str,
    verdict: str,
    *,
    work: bool = True,
) -> str:
    """A table of ``key`` at ``venue`` (with its work, unless ``work`` is false) recorded
    opened, dealt and closed with ``verdict`` in the tables log, as the service records them,
    with its row; its id."""
    request_id, at = secrets.token_hex(8), int(time.time())
    request = table_open(key, manifest, venue=venue, request_id=request_id, at=at, worked=work)
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


#: The venues a witnessed campaign beats, in order, to open Chair VI (the clerks' seal, the
#: Assessor, Chairs I to V: Book IV.1, IV.6).
TO_CHAIR_SIX = (
    "clerk-1",
    "clerk-2",
    "clerk-4",
    "assessor",
    *(f"chair-{n}" for n in ["I", "II", "III", "IV", "V"]),
)


async def campaign_to_chair_six(
    store: EventStore, manifest: LeagueManifest, key: SigningKey
) -> None:
    """``key``'s witnessed campaign played (recorded) to Chair VI open: a win, with its work,
    at each of :data:`TO_CHAIR_SIX`."""
    for venue in TO_CHAIR_SIX:
        await record_close(store, manifest, key, venue, "win")


async def settling_balance_recorded(
    database_url: str, league_home: Path, key: SigningKey, venue: str
) -> str:
    """``key``'s witnessed campaign recorded to ``venue`` (a Chair from VI) open, with its
    work, in the tables log of the league in ``league_home``, then a Balance of its at
    ``venue`` that settles (L-41), its secret revealed as a closed table's is (it is read):
    the table's id."""
    manifest = LeagueManifest.from_wire((league_home / "manifest.json").read_text("utf-8"))
    tables_key = read_key(league_home / "keys", "tables")
    async with asyncpg.create_pool(database_url, min_size=1, max_size=1) as pool:
        store = PostgresEventStore(
            pool, schema="tables", origin=f"{manifest.league}/tables", key=tables_key
        )
        await campaign_to_chair_six(store, manifest, key)
        for chair in MISPRINT_CHAIRS[: MISPRINT_CHAIRS.index(venue)]:
            await record_close(store, manifest, key, chair, "win")
    return await balance_recorded(database_url, league_home, key, venue)
