"""The census (Book V.1: "the full census is public at /ledger ... anyone may count").

Per title of the manifest's runs, in book order: set, rarity and per finish the run size, how
many are stamped and how many remain; the totals; the mint log's latest checkpoint. The
Misprint is outside every run and so never appears (Book V.8).
"""

from __future__ import annotations

from datetime import UTC
from typing import Literal

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
from ledger.print_runs import RUN_FINISHES, RunFinish
from services.eventlog import EventStore
from services.mint import tables
from services.mint.mint import Mint
from services.mint.stamping import allowance_of

#: The census totals: per run finish, and over all of them.
_Bucket = RunFinish | Literal["all"]
_BUCKETS: tuple[_Bucket, ...] = (*RUN_FINISHES, "all")


def _count(size: int, stamped: int) -> FinishCount:
    return FinishCount(size=size, stamped=stamped, remaining=size - stamped)


def _run_finish(stored: str) -> RunFinish:
    """A finish read back from ``mint.owned`` as the run finish it names."""
    for finish in RUN_FINISHES:
        if stored == finish:
            return finish
    # What OwnedCount's validation raised before: ValidationError is a ValueError.
    raise ValueError(f"mint.owned holds a print of finish {stored!r}, which has no run")


async def census(mint: Mint, reads: EventStore) -> Census:
    """The census as ``reads`` (the mint's log or a read view of it, a replica's) holds it."""
    checkpoint = await reads.served_checkpoint()
    stamped = {(r.title, r.finish): r.stamped for r in await tables.runs(reads)}
    titles = []
    totals: dict[_Bucket, list[int]] = {bucket: [0, 0] for bucket in _BUCKETS}
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
                owned=[OwnedCount(title=t, finish=_run_finish(f), owned=n) for t, f, n in rows],
                total=sum(n for _, _, n in rows),
                allowance=allowance_of(mint.manifest, used.get(key, 0), today),
            )
        )
    return OwnerCensus(address=address, keys=keys)
