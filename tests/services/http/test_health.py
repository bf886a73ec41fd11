"""/healthz and /readyz over real HTTP (issue 13 item 4): liveness touches nothing, readiness
names what is not ready (database, schema, feeds) in a 503 problem."""

from __future__ import annotations

import dataclasses

import asyncpg
from aiohttp.test_utils import TestServer

from clients.league import LeagueClient
from ledger.api.problems import PROBLEM_JSON
from ledger.keys import SigningKey
from services.eventlog.migrate import head_revision
from services.http.apps import POOL
from services.kernel.compose import compose
from services.kernel.feeds import READY_LAG, FeedLag, not_caught_up
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.services.notary.conftest import (
    Trade,
    checkpoint_covering,
    league,
    make_settings,
    server,
    settings,
    trade,
)

__all__ = ["league", "make_settings", "server", "settings", "trade"]  # fixtures


async def get(league: LeagueClient, path: str) -> tuple[int, str, dict[str, object]]:
    """Status, content type and JSON body of ``GET path``."""
    session = league._session
    assert session is not None
    async with session.get(league.base_url + path) as response:
        return response.status, response.content_type, await response.json(content_type=None)


async def stamp_and_follow(trade: Trade) -> None:
    """One print stamped, and the notary's follower past it."""
    chain = await trade.stamp(SigningKey.generate())
    await checkpoint_covering(trade.league, 1)
    await trade.league.provenance(chain.certificate.serial)  # catches the notary up


async def test_a_league_serving_and_caught_up_is_alive_and_ready(trade: Trade) -> None:
    await stamp_and_follow(trade)
    assert await get(trade.league, "/healthz") == (200, "application/json", {"status": "alive"})
    status, _, body = await get(trade.league, "/readyz")
    assert (status, body) == (200, {"status": "ready", "checks": ["database", "feeds"]})


async def test_without_its_database_a_service_is_alive_but_not_ready(
    trade: Trade, server: TestServer
) -> None:
    server.app[POOL].terminate()
    assert (await get(trade.league, "/healthz"))[0] == 200
    session = trade.league._session
    assert session is not None
    async with session.get(trade.league.base_url + "/readyz") as response:
        assert response.status == 503
        assert response.content_type == PROBLEM_JSON
        assert int(response.headers["Retry-After"]) >= 1
        problem = await response.json(content_type=None)
    assert problem["type"] == "/problems/store-unavailable"
    assert problem["detail"].startswith("not ready: database: the database does not answer")


async def test_a_schema_behind_the_migrations_is_not_ready(
    trade: Trade, settings: LeagueSettings
) -> None:
    connection = await asyncpg.connect(settings.database)
    try:
        await connection.execute("UPDATE alembic_version SET version_num = '0001_event_logs'")
        status, _, problem = await get(trade.league, "/readyz")
        assert status == 503
        assert problem["detail"] == (
            f"not ready: database: the schema is at migration 0001_event_logs, not "
            f"{head_revision()}: run `league migrate`"
        )
        await connection.execute("UPDATE alembic_version SET version_num = $1", head_revision())
        assert (await get(trade.league, "/readyz"))[0] == 200
    finally:
        await connection.close()


async def test_a_follower_that_refused_a_feed_is_not_ready(
    trade: Trade, settings: LeagueSettings
) -> None:
    await stamp_and_follow(trade)
    connection = await asyncpg.connect(settings.database)
    try:
        await connection.execute(
            "INSERT INTO notary.feed_evidence (source, reason) VALUES ('mint', 'a test')"
        )
    finally:
        await connection.close()
    status, _, problem = await get(trade.league, "/readyz")
    assert status == 503
    assert problem["detail"] == (
        "not ready: feeds: the notary refused the mint's feed (1 evidence kept in "
        "notary.feed_evidence): an operator must look"
    )


async def test_a_feed_whose_source_does_not_answer_is_not_ready(
    trade: Trade, settings: LeagueSettings
) -> None:
    """A followed feed whose service is not there (no treasury in this league's server):
    its lag cannot be known, so the follower is not known to be caught up."""
    await stamp_and_follow(trade)
    connection = await asyncpg.connect(settings.database)
    try:
        await connection.execute(
            "INSERT INTO notary.followed_feeds (source, position, edge)"
            " VALUES ('treasury', 0, '{}')"
        )
    finally:
        await connection.close()
    status, _, problem = await get(trade.league, "/readyz")
    assert status == 503
    assert problem["detail"] == (
        "not ready: feeds: the notary cannot read the treasury's checkpoint"
    )


def test_a_follower_more_than_a_page_behind_is_not_caught_up() -> None:
    """The rule over the lags the feeds check reads: at most READY_LAG behind is caught up."""
    assert not_caught_up([FeedLag("notary", "mint", READY_LAG, 0)]) is None
    assert not_caught_up([FeedLag("notary", "mint", READY_LAG + 1, 0)]) == (
        f"the notary is {READY_LAG + 1} events behind the mint's feed"
    )
    assert not_caught_up([]) is None


async def test_a_declared_feed_not_yet_read_is_not_ready(settings: LeagueSettings) -> None:
    """A service declaring the feeds it follows is not ready before it has read each: here
    the notary declared to follow the treasury's, which this league's server does not serve."""
    notary = dataclasses.replace(NOTARY, follows=("mint", "treasury"))
    server = TestServer(compose(settings, [MINT, notary]), host="127.0.0.1", port=settings.port)
    await server.start_server()
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            await stamp_and_follow(Trade(league, await league.manifest()))
            status, _, problem = await get(league, "/readyz")
    finally:
        await server.close()
    assert status == 503
    assert problem["detail"] == (
        "not ready: feeds: the notary has not yet read the treasury's feed"
    )
    assert not_caught_up([FeedLag("notary", "mint", 0, 0)]) is None
