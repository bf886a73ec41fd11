"""How far each served service stands behind the feeds it follows (the notary the mint's and
the treasury's): ``/readyz``'s feeds check and the ``league_feed_lag_events`` figure at
``/metrics``.

A follower's position is its row in ``<service>.followed_feeds`` (the follower writes it with
every page it applies); the source's size is its latest signed checkpoint, read over HTTP as
any follower reads it. A feed the service has not begun to follow has no row yet and is not
counted, unless the service declares it follows that feed (``Service.follows``): then it is
not ready until it has read it. A follower that refused a feed (evidence kept in
``<service>.feed_evidence``) has stopped until an operator looks: that service is not ready.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiohttp import web

from apiclient.league import LeagueClient
from ledger.checkpoint import Checkpoint
from ledger.errors import LedgerError
from services.http.health import add_readiness
from services.http.metrics import Figure, Samples, add_figure
from services.http.pool import POOL
from services.kernel.follower import DEFAULT_PAGE
from services.kernel.settings import LeagueSettings

#: A follower more than this many events behind its source's checkpoint is not ready (one page:
#: a follower woken at each checkpoint, or every half second, is never that far behind while
#: it keeps up).
READY_LAG = DEFAULT_PAGE
#: Seconds to wait for a source's checkpoint.
SOURCE_TIMEOUT = 2.0
_SCHEMA = re.compile(r"[a-z_]+")


@dataclass(frozen=True, slots=True)
class FeedLag:
    """Where ``service`` stands in ``source``'s feed: ``lag`` events behind its checkpoint
    (None: the source does not answer now), ``refused`` pieces of evidence kept."""

    service: str
    source: str
    lag: int | None
    refused: int
    #: Whether the follower has read this feed at all (a declared feed it has not: False).
    begun: bool = True


async def feed_lags(
    app: web.Application, settings: LeagueSettings, services: Mapping[str, Sequence[str]]
) -> list[FeedLag]:
    """The lag of every feed ``services`` (name -> the feeds it declares it follows) follow."""
    pool = app[POOL]
    sizes: dict[str, int | None] = {}
    found = []
    for service, follows in services.items():
        if not _SCHEMA.fullmatch(service):
            raise ValueError(f"not a service schema: {service!r}")
        rows = await pool.fetch(
            f"SELECT f.source, f.position, (SELECT count(*) FROM {service}.feed_evidence e"  # noqa: S608 (a checked schema name)
            f" WHERE e.source = f.source) FROM {service}.followed_feeds f ORDER BY f.source"
        )
        for source, position, refused in rows:
            if source not in sizes:
                sizes[source] = await _source_size(settings, source)
            size = sizes[source]
            lag = None if size is None else max(0, size - position)
            found.append(FeedLag(service, source, lag, refused))
        read = {source for source, _, _ in rows}
        found += [FeedLag(service, s, None, 0, begun=False) for s in follows if s not in read]
    return found


async def _source_size(settings: LeagueSettings, source: str) -> int | None:
    url = settings.service_url(source)
    if url is None:
        return None
    try:
        async with LeagueClient(url, timeout=SOURCE_TIMEOUT) as client:
            return Checkpoint.from_note(await client.checkpoint(service=source)).size
    except (LedgerError, TimeoutError):  # unreachable, a problem, not a checkpoint
        return None


def not_caught_up(feeds: Sequence[FeedLag]) -> str | None:
    """What keeps ``feeds`` from being caught up, or None: a declared feed not yet read, a
    refused feed, a source that does not answer, a lag beyond :data:`READY_LAG`."""
    behind = []
    for feed in feeds:
        if not feed.begun:
            behind.append(f"the {feed.service} has not yet read the {feed.source}'s feed")
        elif feed.refused:
            behind.append(
                f"the {feed.service} refused the {feed.source}'s feed ({feed.refused} "
                f"evidence kept in {feed.service}.feed_evidence): an operator must look"
            )
        elif feed.lag is None:
            behind.append(f"the {feed.service} cannot read the {feed.source}'s checkpoint")
        elif feed.lag > READY_LAG:
            behind.append(
                f"the {feed.service} is {feed.lag} events behind the {feed.source}'s feed"
            )
    return "; ".join(behind) or None


def watch_feeds(
    app: web.Application, settings: LeagueSettings, services: Mapping[str, Sequence[str]]
) -> None:
    """Register the feeds' readiness check and lag figure on ``app`` for ``services`` (name
    -> the feeds it declares it follows)."""

    async def ready(app: web.Application) -> str | None:
        return not_caught_up(await feed_lags(app, settings, services))

    async def lag(app: web.Application) -> Samples:
        return [
            ((feed.service, feed.source), float(feed.lag))
            for feed in await feed_lags(app, settings, services)
            if feed.lag is not None
        ]

    add_readiness(app, "feeds", ready)
    add_figure(
        app,
        Figure(
            "league_feed_lag_events",
            "Events a service's follower stands behind the latest checkpoint of a feed it follows",
            ("service", "source"),
            lag,
        ),
    )
