"""GET /ledger and /ledger/owners/{address}: the census, exact after stamping and restarts."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, stamp_request
from ledger.address import address_of
from ledger.api.mint import Census, Stamped
from ledger.catalog import PLAYING
from ledger.keys import SigningKey
from services.kernel.settings import LeagueSettings
from tests.harness.mint import serve


def counts(census: Census) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {
        (t.title, finish): (c.size, c.stamped, c.remaining)
        for t in census.titles
        for finish, c in t.finishes.items()
    }


async def test_fresh_census_lists_every_title_and_nothing_else(league: LeagueClient) -> None:
    """All 41 titles in book order with set, rarity and full runs; no Misprint anywhere."""
    census = await league.census()
    assert [t.title for t in census.titles] == [c.name for c in PLAYING]
    assert len(census.titles) == 41
    model_a = next(t for t in census.titles if t.title == "Model-A")
    assert (model_a.set, model_a.rarity) == ("begotten", "rare")
    assert {(t.title, t.rarity) for t in census.titles if t.set == "base"} >= {("Tally", "common")}
    assert all(c == (s, 0, s) for (_, f), c in counts(census).items() for s in [c[0]])
    assert census.totals["all"].size == 41 * 6
    assert census.totals["holofoil"].size == 41
    assert "misprint" not in census.model_dump_json().lower()
    assert "TALLY-000" not in census.model_dump_json()


async def test_census_changes_exactly_by_what_was_stamped(league: LeagueClient) -> None:
    """After stamping, exactly the stamped title/finish counts move, and the totals agree."""
    manifest = await league.manifest()
    before = counts(await league.census())
    owner = SigningKey.generate()
    await league.stamp(
        stamp_request(
            owner,
            manifest,
            [("Torsor", "standard"), ("Torsor", "standard"), ("Shadow", "holofoil")],
        )
    )
    after_census = await league.census()
    after = counts(after_census)
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert changed == {
        ("Torsor", "standard"): ((3, 0, 3), (3, 2, 1)),
        ("Shadow", "holofoil"): ((1, 0, 1), (1, 1, 0)),
    }
    assert after_census.totals["all"].stamped == 3
    assert after_census.totals["standard"].stamped == 2
    assert after_census.totals["all"].remaining == 41 * 6 - 3


async def test_owner_census_counts_what_was_stamped_to_the_key(league: LeagueClient) -> None:
    """/ledger/owners/{address} shows each key's counts; lenient spellings of the address work;
    a key with nothing stamped shows no holdings."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    await league.stamp(
        stamp_request(
            owner, manifest, [("Balance", "gilt"), ("Balance", "gilt"), ("Descent", "standard")]
        )
    )
    address = address_of(owner.public)
    holdings = (await league.owner(address.lower().replace("-", ""))).keys
    assert len(holdings) == 1
    assert holdings[0].key == owner.public.to_text()
    assert {(o.title, o.finish, o.owned) for o in holdings[0].owned} == {
        ("Balance", "gilt", 2),
        ("Descent", "standard", 1),
    }
    assert holdings[0].total == 3
    nobody = await league.owner(address_of(SigningKey.generate().public))
    assert nobody.keys == []


async def test_bad_address_is_refused(league: LeagueClient) -> None:
    """A mistyped address fails its check symbols: bad-address (400)."""
    address = address_of(SigningKey.generate().public)
    typo = address[:-1] + ("0" if address[-1] != "0" else "1")
    with pytest.raises(LeagueProblem) as caught:
        await league.owner(typo)
    assert (caught.value.status, caught.value.slug) == (400, "bad-address")


async def test_restart_keeps_everything(settings: LeagueSettings) -> None:
    """A new app on the same database and data dir serves the same census, certificates and
    log, and stamping continues from the next serial and the next event index."""
    owner = SigningKey.generate()
    first_server = await serve(settings)
    try:
        async with LeagueClient(str(first_server.make_url(""))) as league:
            manifest = await league.manifest()
            request = stamp_request(owner, manifest, [("Genealogy", "standard")] * 2)
            first = await league.stamp(request)
            census = await league.census()
            feed = await league.events()
    finally:
        await first_server.close()
    second_server: TestServer = await serve(settings)
    try:
        async with LeagueClient(str(second_server.make_url(""))) as league:
            assert (await league.manifest()) == manifest
            assert (await league.census()).titles == census.titles
            assert (await league.events()).events == feed.events
            replay = await league.stamp(request)
            assert replay.replayed
            assert replay.items == first.items
            more = await league.stamp(stamp_request(owner, manifest, [("Genealogy", "standard")]))
            (item,) = more.items
            assert isinstance(item, Stamped)
            assert (item.certificate.serial, item.certificate.event) == ("CZ-GENEALOGY-0003", 2)
    finally:
        await second_server.close()
