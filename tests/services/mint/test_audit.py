"""Recounting the census from the log: agreement, and every kind of disagreement named."""

from __future__ import annotations

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.keys import SigningKey
from services.mint.app import MINT
from services.mint.audit import CensusMismatch, audit_census


async def stamp_some(league: LeagueClient) -> None:
    manifest = await league.manifest()
    owners = [SigningKey.generate() for _ in range(3)]
    for owner in owners:
        await league.stamp(
            stamp_request(
                owner,
                manifest,
                [("Alphabet", "standard"), ("Alphabet", "gilt"), ("Admission", "holofoil")],
            )
        )


async def test_census_agrees_with_the_log(server: TestServer, league: LeagueClient) -> None:
    """After real stamps (the third gilt and two holofoils refused: runs of 2 and 1) the
    recount agrees with the projections."""
    await stamp_some(league)
    audit = await audit_census(server.app[MINT])
    assert (audit.events, audit.prints, audit.owners) == (6, 6, 3)
    assert audit.runs == 41 * 3


@pytest.mark.parametrize(
    ("tamper", "names"),
    [
        (
            "UPDATE mint.runs SET stamped = stamped - 1 WHERE title = 'Alphabet' "
            "AND finish = 'standard'",
            "standard run of Alphabet",
        ),
        ("UPDATE mint.owned SET owned = owned + 1 WHERE title = 'Admission'", "mint.owned"),
        ("DELETE FROM mint.owned WHERE finish = 'gilt'", "mint.owned"),
        ("UPDATE mint.allowances SET stamped = stamped + 1", "mint.allowances"),
    ],
)
async def test_edited_projection_is_named(
    server: TestServer, league: LeagueClient, database_url: str, tamper: str, names: str
) -> None:
    """An edited run counter or owned count is a CensusMismatch naming what disagrees."""
    await stamp_some(league)
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(tamper)
    finally:
        await conn.close()
    with pytest.raises(CensusMismatch, match=names):
        await audit_census(server.app[MINT])
