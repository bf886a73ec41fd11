"""/healthz and /readyz over real HTTP (docs/operations.md "Health, metrics and logs"): liveness
touches nothing, readiness names what is not ready (database, schema, feeds) in a 503 problem:
``store-unavailable`` for the database, ``retry-later`` for a followed feed not caught up (the
notary declares it follows the mint's and the treasury's)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient
from ledger.api.problems import PROBLEM_JSON
from services.eventlog.migrate import head_revision
from services.http.apps import POOL
from services.kernel.compose import compose
from services.kernel.feeds import READY_LAG, FeedLag, not_caught_up
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY
from tests.harness.founding import make_settings
from tests.harness.mint import league
from tests.harness.trading import Trade, server, settings, stamp_and_follow, trade

__all__ = ["league", "make_settings", "server", "settings", "trade"]  # fixtures


async def get(league: LeagueClient, path: str) -> tuple[int, str, dict[str, object]]:
    """Status, content type and JSON body of ``GET path``."""
    session = league._session
    assert session is not None
    async with session.get(league.base_url + path) as response:
        return response.status, response.content_type, await response.json(content_type=None)


@pytest.fixture
async def whole(settings: LeagueSettings) -> AsyncIterator[Trade]:
    """The three services in one app on the settings' port: the notary follows both feeds
    at the server's own address."""
    server = TestServer(
        compose(settings, [MINT, TREASURY, NOTARY]), host="127.0.0.1", port=settings.port
    )
    await server.start_server()
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            yield Trade(league, await league.manifest())
    finally:
        await server.close()


async def problem_type(league: LeagueClient, path: str) -> tuple[int, str, str]:
    """Status, problem type and detail of ``GET path`` answering a problem."""
    status, content_type, problem = await get(league, path)
    assert content_type == PROBLEM_JSON
    return status, str(problem["type"]), str(problem["detail"])


async def until_ready(league: LeagueClient) -> dict[str, object]:
    """Bounded: ``/readyz`` asked until it answers 200 (the follower reads in the
    background); a guard, not a timing assertion."""
    for _ in range(400):
        status, _, body = await get(league, "/readyz")
        if status == 200:
            return body
        assert body["type"] == "/problems/retry-later", body
        await asyncio.sleep(0.05)
    raise AssertionError(f"never ready: {body}")


async def test_a_league_serving_and_caught_up_is_alive_and_ready(whole: Trade) -> None:
    await stamp_and_follow(whole)
    assert await get(whole.league, "/healthz") == (200, "application/json", {"status": "alive"})
    assert await until_ready(whole.league) == {"status": "ready", "checks": ["database", "feeds"]}


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
    whole: Trade, settings: LeagueSettings
) -> None:
    await until_ready(whole.league)
    connection = await asyncpg.connect(settings.database)
    try:
        await connection.execute("UPDATE alembic_version SET version_num = '0001_event_logs'")
        assert await problem_type(whole.league, "/readyz") == (
            503,
            "/problems/store-unavailable",
            f"not ready: database: the schema is at migration 0001_event_logs, not "
            f"{head_revision()}: run `league migrate`",
        )
        await connection.execute("UPDATE alembic_version SET version_num = $1", head_revision())
        await until_ready(whole.league)
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
    assert problem["type"] == "/problems/retry-later"
    assert problem["detail"].startswith(
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
    assert await problem_type(trade.league, "/readyz") == (
        503,
        "/problems/retry-later",
        "not ready: feeds: the notary cannot read the treasury's checkpoint",
    )


def test_a_follower_more_than_a_page_behind_is_not_caught_up() -> None:
    """The rule over the lags the feeds check reads: at most READY_LAG behind is caught up."""
    assert not_caught_up([FeedLag("notary", "mint", READY_LAG, 0)]) is None
    assert not_caught_up([FeedLag("notary", "mint", READY_LAG + 1, 0)]) == (
        f"the notary is {READY_LAG + 1} events behind the mint's feed"
    )
    assert not_caught_up([]) is None


def test_the_notary_declares_both_issuers_feeds() -> None:
    assert NOTARY.follows == ("mint", "treasury")
    assert MINT.follows == TREASURY.follows == ()


async def test_a_declared_feed_not_yet_read_is_not_ready(trade: Trade) -> None:
    """The notary is not ready before it has read each feed it declares: here the
    treasury's, which this league's server (the mint and the notary) does not serve. It
    waits on something that comes by itself: retry-later, not store-unavailable."""
    await stamp_and_follow(trade)
    status, kind, detail = await problem_type(trade.league, "/readyz")
    assert (status, kind) == (503, "/problems/retry-later")
    assert detail == "not ready: feeds: the notary has not yet read the treasury's feed"
    assert not_caught_up([FeedLag("notary", "mint", 0, 0)]) is None
