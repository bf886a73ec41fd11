"""A service's database is bound to the league it first served (services/kernel/founding.py
``bind_league``): the mint's and the treasury's first start record the league and what the
manifest fixes for them; a start of the same league finds it bound; another league is refused
by name, and nothing of it is written."""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import pytest

from services.eventlog import PostgresEventStore
from services.kernel.errors import LeagueError
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from services.mint import tables as mint_tables
from services.treasury import tables as treasury_tables


@pytest.mark.parametrize("service", ["mint", "treasury"])
async def test_a_database_serves_the_league_it_was_bound_to(
    make_settings: Callable[..., LeagueSettings], service: str
) -> None:
    """Bound once by the first league (its runs or its note set recorded with it), bound again
    by the same league without a change, refused to a second league: the error names the
    service and both leagues, and the first league's rows stay as they were."""
    bind = {"mint": mint_tables.bind_league, "treasury": treasury_tables.bind_league}[service]
    fixed = {"mint": "mint.runs", "treasury": "treasury.supply"}[service]
    first, second = make_settings(), make_settings(name="Another league")
    async with asyncpg.create_pool(first.database, min_size=1, max_size=2) as pool:
        stores = []
        for settings in (first, second):
            manifest = load_manifest(settings)
            key = load_service_key(settings, manifest, service, None)
            store = PostgresEventStore(
                pool, schema=service, origin=f"{manifest.league}/{service}", key=key
            )
            stores.append((store, manifest))
        (store, manifest), (other_store, other) = stores
        await bind(store, manifest)
        rows = await pool.fetch(f"SELECT * FROM {fixed} ORDER BY 1, 2")  # noqa: S608
        assert rows
        await bind(store, manifest)
        with pytest.raises(LeagueError) as refused:
            await bind(other_store, other)
        assert str(refused.value) == (
            f"this database holds the {service} of league {manifest.league} (manifest "
            f"{manifest.hash_text()}), not {other.league} ({other.hash_text()})"
        )
        assert await pool.fetch(f"SELECT * FROM {fixed} ORDER BY 1, 2") == rows  # noqa: S608
        bound = await pool.fetch(f"SELECT league, manifest FROM {service}.league")  # noqa: S608
        assert [tuple(r) for r in bound] == [(manifest.league, manifest.hash_text())]
