"""The census (Book V.1: "the full census is public at /ledger ... anyone may count").

Per title of the manifest's runs, in book order: set, rarity and per finish the run size, how
many are stamped and how many remain; the totals; the mint log's latest checkpoint. The
Misprint is outside every run and so never appears (Book V.8).
"""

from __future__ import annotations

from datetime import date

from game.window.catalog import SET_RARITY, CardSet
from ledger.address import parse_address
from ledger.print_runs import RUN_FINISHES
from services.mint import projections
from services.mint.stamping import Mint, allowance_of
from services.mint.wire import (
    Census,
    FinishCount,
    KeyHoldings,
    OwnedCount,
    OwnerCensus,
    TitleCensus,
)


def _count(size: int, stamped: int) -> FinishCount:
    return FinishCount(size=size, stamped=stamped, remaining=size - stamped)


async def census(mint: Mint) -> Census:
    checkpoint = await mint.log.create_checkpoint()
    stamped = {(r.title, r.finish): r.stamped for r in await projections.runs(mint.log.pool)}
    titles = []
    totals = {finish: [0, 0] for finish in (*RUN_FINISHES, "all")}
    for run in mint.manifest.print_runs.runs:
        finishes = {}
        for finish in RUN_FINISHES:
            size, done = run.size(finish), stamped[(run.title, finish)]
            finishes[finish] = _count(size, done)
            for bucket in (finish, "all"):
                totals[bucket][0] += size
                totals[bucket][1] += done
        titles.append(
            TitleCensus(
                title=run.title,
                set=run.set,
                rarity=SET_RARITY[CardSet(run.set)].value,
                finishes=finishes,
            )
        )
    return Census(
        league=mint.manifest.league,
        manifest=mint.manifest_hash,
        titles=titles,
        totals={bucket: _count(size, done) for bucket, (size, done) in totals.items()},
        checkpoint=str(checkpoint),
    )


async def owner_census(mint: Mint, address_text: str, today: date) -> OwnerCensus:
    address = parse_address(address_text)
    pool = mint.log.pool
    keys = []
    holdings = await projections.owned_by_address(pool, address)
    used = await projections.used_allowances(pool, holdings, today)
    for key, rows in holdings.items():
        keys.append(
            KeyHoldings(
                key=key,
                owned=[OwnedCount(title=t, finish=f, owned=n) for t, f, n in rows],
                total=sum(n for _, _, n in rows),
                allowance=allowance_of(mint.manifest, used.get(key, 0), today),
            )
        )
    return OwnerCensus(address=address, keys=keys)
