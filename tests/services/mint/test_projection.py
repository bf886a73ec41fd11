"""The mint's projection is a pure function of its log (docs/architecture.md §4): what each event
adds, the same live as rebuilt, and a rebuild that names and repairs what an edit broke."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.address import address_of
from ledger.errors import SchemaError
from ledger.keys import SigningKey
from ledger.leaf import Event
from services.kernel.projections import rebuild
from services.mint.app import MINT
from services.mint.projection import PROJECTION


async def stamp_three(league: LeagueClient) -> SigningKey:
    owner = SigningKey.generate()
    manifest = await league.manifest()
    await league.stamp(
        stamp_request(
            owner, manifest, [("Alphabet", "standard"), ("Alphabet", "gilt"), ("Gram", "standard")]
        )
    )
    return owner


async def test_project_is_what_each_event_adds(server: TestServer, league: LeagueClient) -> None:
    """Folding the log gives one print per run stamped, per owner and per UTC day of the
    event's database time, and nothing else."""
    owner = await stamp_three(league)
    events = await server.app[MINT].store.read()
    changes = PROJECTION.empty()
    for event in events:
        PROJECTION.project(event, changes)
    key = owner.public.to_text()
    address = address_of(owner.public)
    assert dict(changes.runs) == {
        ("Alphabet", "standard"): 1,
        ("Alphabet", "gilt"): 1,
        ("Gram", "standard"): 1,
    }
    assert dict(changes.owned) == {
        (key, address, "Alphabet", "standard"): 1,
        (key, address, "Alphabet", "gilt"): 1,
        (key, address, "Gram", "standard"): 1,
    }
    (day,) = {e.recorded_at.astimezone(UTC).date() for e in events}
    assert dict(changes.allowances) == {(key, day): 3}


def test_an_event_of_unknown_type_is_refused() -> None:
    """The projection reads only the typed events of the mint's log."""
    stranger = Event(0, "print/X", 1, "print-melted", {}, datetime.now(UTC), b"\0" * 32, b"")
    with pytest.raises(SchemaError, match="print-melted"):
        PROJECTION.project(stranger, PROJECTION.empty())


async def test_rebuild_names_and_repairs_edited_rows(
    server: TestServer, league: LeagueClient, database_url: str
) -> None:
    """An audit (commit=False) names every table an edit touched and changes nothing; a
    rebuild puts back what the log says; a second rebuild finds nothing to change."""
    await stamp_three(league)
    store = server.app[MINT].store
    clean = await rebuild(store, PROJECTION, commit=False)
    assert clean.agrees
    assert clean.events == 3
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "UPDATE mint.runs SET stamped = 3 WHERE title = 'Gram' AND finish = 'standard'"
        )
        await conn.execute("DELETE FROM mint.allowances")
        audit = await rebuild(store, PROJECTION, commit=False)
        assert [d.table for d in audit.differences] == ["mint.allowances", "mint.runs"]
        assert await conn.fetchval("SELECT count(*) FROM mint.allowances") == 0
        repaired = await rebuild(store, PROJECTION)
        assert not repaired.agrees
        assert (
            await conn.fetchval(
                "SELECT stamped FROM mint.runs WHERE title = 'Gram' AND finish = 'standard'"
            )
            == 1
        )
        assert await conn.fetchval("SELECT sum(stamped) FROM mint.allowances") == 3
    finally:
        await conn.close()
    assert (await rebuild(store, PROJECTION)).agrees
