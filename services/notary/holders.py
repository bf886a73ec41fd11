"""``GET /notary/holders``: the notary's holders projection, page by page, for auditors.

Each page is read in one statement (one snapshot) together with the size of the notary's log,
which the projection is written with in one transaction: the page is exactly what the log's
first ``log_size`` events fold to, so ``league audit`` can compare every row with the holder
it derives from those events. Serials are ordered bytewise (``COLLATE "C"``), as an auditor
in any language orders them.
"""

from __future__ import annotations

import orjson
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ledger.api.notary import MAX_HOLDERS_PAGE, HolderRow, Holders
from services.eventlog import EventStore
from services.http.endpoints import Endpoint
from services.http.logs import read_view

READ = """
SELECT (SELECT size FROM notary.log_head),
       (SELECT coalesce(json_agg(json_build_array(serial, issue, hops, holder)
                                 ORDER BY serial COLLATE "C"), '[]')
        FROM (SELECT serial, issue, hops, holder FROM notary.holders
              WHERE serial COLLATE "C" > $1 ORDER BY serial COLLATE "C" LIMIT $2) AS page)
"""


class HoldersQuery(BaseModel):
    """Which page of holders."""

    model_config = ConfigDict(extra="forbid")

    after: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Z0-9-]+$",
        description="Return serials after this one (bytewise); omit to start",
    )
    limit: int = Field(default=100, ge=1, le=MAX_HOLDERS_PAGE, description="At most this many")


async def holders(store: EventStore, after: str, limit: int) -> Holders:
    """The holders after ``after`` (at most ``limit``) and the log size they reflect."""
    row = await store.fetchrow(READ, after, limit)
    assert row is not None  # a SELECT without FROM returns exactly one row
    size, text = row
    rows = [HolderRow(serial=s, issue=i, hops=h, holder=k) for s, i, h, k in orjson.loads(text)]
    return Holders(
        holders=rows,
        log_size=size,
        next_after=rows[-1].serial if len(rows) == limit else None,
    )


def holders_endpoint(log_key: web.AppKey[EventStore]) -> Endpoint:
    """The endpoint, over the notary's log at ``log_key``."""

    async def read(request: web.Request, query: HoldersQuery) -> Holders:
        return await holders(read_view(request.app, log_key), query.after or "", query.limit)

    return Endpoint(
        "GET",
        "/notary/holders",
        "Who holds each traded item, as the notary's projection says",
        read,
        Holders,
        query=HoldersQuery,
        description=(
            "A page of the notary's holders projection in bytewise serial order: for every "
            "item with a recorded hop, the issue, the hops recorded and the key the latest "
            "moved it to, with the size of the notary's log the page reflects (read in one "
            "snapshot). Read on with ?after=next_after until next_after is null. An auditor "
            "compares every row with the holder it derives from the log's first log_size "
            "events (league audit)."
        ),
    )
