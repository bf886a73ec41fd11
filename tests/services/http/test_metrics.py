"""/metrics over real HTTP (docs/operations.md "Health, metrics and logs"): requests counted and
timed by route template, the services' figures read at each scrape."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from apiclient.league import LeagueClient
from ledger.keys import SigningKey
from tests.harness.founding import make_settings
from tests.harness.mint import checkpoint_covering, league
from tests.harness.trading import Trade, server, settings, stamp_and_follow, trade

__all__ = ["league", "make_settings", "server", "settings", "trade"]  # fixtures


async def scrape(league: LeagueClient) -> list[Sample]:
    session = league._session
    assert session is not None
    async with session.get(league.base_url + "/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and s.labels == labels]
    assert len(found) == 1, (name, labels, [s for s in samples if s.name == name])
    return found[0]


async def test_requests_are_counted_by_route_template_never_by_path(league: LeagueClient) -> None:
    session = league._session
    assert session is not None
    serials = [f"CZ-STD-{n:06d}" for n in range(12)]
    for serial in serials:
        async with session.get(f"{league.base_url}/provenance/{serial}") as response:
            assert response.status in (400, 404)
    for n in range(5):  # HEAD: the services' own background calls are GETs and POSTs
        async with session.head(f"{league.base_url}/no/such/path/{n}") as response:
            assert response.status == 404
    async with session.request("PROPFIND", f"{league.base_url}/ledger") as response:
        assert response.status == 405
    samples = await scrape(league)
    routes = {s.labels.get("route") for s in samples if s.name.startswith("league_http_")}
    assert not [r for r in routes if r and ("CZ-" in r or "/no/" in r)]
    by_status = [
        s
        for s in samples
        if s.name == "league_http_requests_total" and s.labels["route"] == "/provenance/{serial}"
    ]
    assert sum(s.value for s in by_status) == len(serials)
    assert value(
        samples,
        "league_http_request_duration_seconds_count",
        method="GET",
        route="/provenance/{serial}",
    ) == len(serials)
    assert (
        value(samples, "league_http_requests_total", method="HEAD", route="unmatched", status="404")
        == 5
    )
    assert (
        value(
            samples, "league_http_requests_total", method="other", route="unmatched", status="405"
        )
        == 1
    )


async def test_events_appended_and_feed_lag_are_read_at_each_scrape(trade: Trade) -> None:
    await stamp_and_follow(trade)
    await trade.stamp(SigningKey.generate())
    await checkpoint_covering(trade.league, 2)
    samples = await scrape(trade.league)
    mint_events = len((await trade.league.events(after=-1, service="mint")).events)
    notary_events = len((await trade.league.events(after=-1, service="notary")).events)
    assert mint_events == 2
    assert value(samples, "league_events_appended_total", service="mint") == mint_events
    assert value(samples, "league_events_appended_total", service="notary") == notary_events
    lag = value(samples, "league_feed_lag_events", service="notary", source="mint")
    assert lag in (0, 1)  # the second stamp is followed, or not yet: never more


async def test_the_mint_publishes_what_its_runs_have_left(trade: Trade) -> None:
    """The mint's registered figure: by finish, what the census says is left."""
    await trade.stamp(SigningKey.generate())
    await trade.stamp(SigningKey.generate(), title="Model-B")
    samples = await scrape(trade.league)
    census = await trade.league.census()
    left: dict[str, int] = {}
    for (_, finish), (size, stamped) in census.runs().items():
        left[finish] = left.get(finish, 0) + size - stamped
    assert set(left) == {"standard", "gilt", "holofoil"}
    for finish, remaining in left.items():
        assert value(samples, "league_mint_run_remaining", finish=finish) == remaining
    assert sum(size for size, _ in census.runs().values()) - sum(left.values()) == 2
