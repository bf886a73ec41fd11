"""The census (Book V.1: "the full census is public at /ledger ... anyone may count").

Per title of the manifest's runs, in book order: set, rarity and per finish the run size, how
many are stamped and how many remain; the totals; the mint log's latest checkpoint. The
Misprint is outside every run and so never appears (Book V.8).
"""

from __future__ import annotations

from datetime import UTC

from ledger.address import parse_address
from ledger.api.mint import (
    Census,
    FinishCount,
    KeyHoldings,
    OwnedCount,
    OwnerCensus,
    TitleCensus,
)
from ledger.catalog import SET_RARITY, CardSet
from ledger.print_runs import RUN_FINISHES
from services.mint import tables
from services.mint.stamping import Mint, allowance_of


def _count(size: int, stamped: int) -> FinishCount:
    return FinishCount(size=size, stamped=stamped, remaining=size - stamped)


async def census(mint: Mint) -> Census:
    checkpoint = await mint.store.served_checkpoint()
    stamped = {(r.title, r.finish): r.stamped for r in await tables.runs(mint.store)}
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


async def owner_census(mint: Mint, address_text: str) -> OwnerCensus:
    address = parse_address(address_text)
    today = (await mint.store.now()).astimezone(UTC).date()
    keys = []
    holdings = await tables.owned_by_address(mint.store, address)
    used = await tables.used_allowances(mint.store, holdings, today)
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
