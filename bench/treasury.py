"""Claims/s and buys/s end to end against ``league serve`` (docs/api.md "The treasury").

A league is served from a child process (bench/league_setup.py: every service, on the
embedded PostgreSQL or a scratch database on DATABASE_URL, proof of work and per-source
limits published as nil so the services' own cost is measured). Then:

- claims: ``--keys`` keys each claim 50 marks (the daily cap) over HTTP, ``--concurrency`` at a
  time; every answer must be 50 marks of notes;
- buys: each key buys a common single (M30) with the notes it claimed, each endorsed to the
  treasury, and gets its change: the whole saga per purchase (the notary records the payment,
  the mint stamps the order, the notes return, the change is issued). Requests are signed
  before the clock starts; every answer must be delivered with change summing to paid - 30.

Beside each rate, the CPU a claim and a buy cost (the server's processes and the embedded
PostgreSQL's, from /proc) and its ratio to the floor measured in the same run (bench/floor.py:
``claim_recipe`` and ``buy_recipe``, counted with the notes the run's claims issued and its
purchases paid and got back as change); the floor's primitives and the load average at the
start and the end close the table.

At the end the supply invariant is checked over ``GET /treasury``: per denomination reserve +
circulation = supply, the marks sum to 1,500,000, and the circulation is exactly what the
claims issued less what the purchases took back.

    .venv/bin/python -m bench.treasury --keys 2000 --concurrency 64
    .venv/bin/python bench/treasury.py --keys 500 --workers 1

(``--workers`` is passed to ``league serve``, whose default is one worker per core; the table
says which served.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp

from apiclient.league import LeagueClient
from bench.floor import Floor, Spent, buy_recipe, claim_recipe, loadavg, measure
from bench.league_setup import Served, percentile, print_table, served_league, workers_text
from ledger.api.treasury import BuyAnswer, ClaimAnswer, TreasurySupply, buy_request, claim_request
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest

#: The common titles (M30 singles), round robin: 36,000 standard prints to draw from.
COMMON = ("Tally", "Pairing", "Separation", "Escrow", "Reflection", "Exchange")
PRICE = 30


async def timed(
    session: aiohttp.ClientSession,
    url: str,
    bodies: Sequence[str],
    concurrency: int,
    check: Callable[[str], Awaitable[None] | None],
) -> tuple[float, list[float]]:
    """POST every body to ``url``, ``concurrency`` at a time: (elapsed seconds, latencies)."""
    latencies: list[float] = []
    queue = iter(bodies)

    async def worker() -> None:
        for body in queue:
            started = time.perf_counter()
            async with session.post(
                url, data=body, headers={"Content-Type": "application/json"}
            ) as response:
                text = await response.text()
                if response.status != 200:
                    raise SystemExit(f"{url}: {response.status} {text}")
            latencies.append(time.perf_counter() - started)
            check(text)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies


def rate_rows(
    what: str, n: int, elapsed: float, latencies: Sequence[float]
) -> list[tuple[str, str]]:
    return [
        (f"{what}", f"{n:,}"),
        (f"{what}/s", f"{n / elapsed:,.0f}"),
        (f"{what} p50 latency", f"{percentile(latencies, 0.5) * 1000:.1f} ms"),
        (f"{what} p99 latency", f"{percentile(latencies, 0.99) * 1000:.1f} ms"),
    ]


async def run(
    url: str,
    manifest: LeagueManifest,
    keys: int,
    concurrency: int,
    tag: str,
    served: Served | None = None,
    floor: Floor | None = None,
) -> tuple[list[tuple[str, str]], int]:
    """One round of claims then buys; the rows and the marks it left in circulation (with the
    CPU an operation cost against ``floor`` when given)."""
    owners = [SigningKey.generate() for _ in range(keys)]
    now = int(time.time())
    claims = [
        json.dumps(claim_request(o, manifest, 50, request_id=f"{tag}-c-{i:08d}", at=now).to_wire())
        for i, o in enumerate(owners)
    ]
    answers: dict[int, ClaimAnswer] = {}

    def claimed(text: str) -> None:
        answer = ClaimAnswer.model_validate_json(text)
        if answer.marks != 50:
            raise SystemExit(f"a claim converted {answer.marks} marks, not 50")
        answers[int(answer.request_id.rsplit("-", 1)[1])] = answer

    treasury = PublicKey.from_text(manifest.treasury)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        spent = Spent(served).start()
        c_elapsed, c_latencies = await timed(
            session, f"{url}/treasury/claim", claims, concurrency, claimed
        )
        c_cost = spent.stop()
        buys = [
            json.dumps(
                buy_request(
                    owner,
                    manifest,
                    COMMON[i % len(COMMON)],
                    [
                        endorse(Chain(certificate=n, endorsements=()), owner, treasury, now)
                        for n in answers[i].notes
                    ],
                    purchase_id=f"{tag}-b-{i:08d}",
                    at=now,
                ).to_wire()
            )
            for i, owner in enumerate(owners)
        ]

        change_notes = 0

        def bought(text: str) -> None:
            nonlocal change_notes
            answer = BuyAnswer.model_validate_json(text)
            change_notes += len(answer.change)
            change = sum(n.denomination for n in answer.change)
            if answer.outcome != "delivered" or change != answer.paid - PRICE:
                raise SystemExit(f"a purchase ended {answer.outcome} with {change} change")

        spent = Spent(served).start()
        b_elapsed, b_latencies = await timed(
            session, f"{url}/treasury/buy", buys, concurrency, bought
        )
        b_cost = spent.stop()
    rows = [
        ("keys", f"{keys:,}"),
        ("concurrency", str(concurrency)),
        *rate_rows("claims", keys, c_elapsed, c_latencies),
        *rate_rows("buys", keys, b_elapsed, b_latencies),
    ]
    if floor is not None:
        notes = sum(len(a.notes) for a in answers.values()) / keys
        rows[6:6] = [floor.compare("claims: CPU a claim", c_cost, keys, claim_recipe(notes))]
        rows.append(
            floor.compare("buys: CPU a buy", b_cost, keys, buy_recipe(notes, change_notes / keys))
        )
    return rows, keys * (50 - PRICE)


async def supply(url: str) -> TreasurySupply:
    async with aiohttp.ClientSession() as session, session.get(f"{url}/treasury") as response:
        return TreasurySupply.model_validate_json(await response.text())


def check_invariant(found: TreasurySupply, manifest: LeagueManifest, circulating: int) -> str:
    """The supply invariant, or SystemExit."""
    note_set = manifest.note_set
    ok = (
        found.marks.supply == note_set.total_marks == 1_500_000
        and found.marks.reserve + found.marks.circulation == found.marks.supply
        and all(
            d.reserve + d.circulation == d.supply == note_set.count_of[d.denomination]
            for d in found.denominations
        )
        and found.marks.circulation == circulating
    )
    if not ok:
        raise SystemExit(f"the supply invariant fails: {found.model_dump_json()}")
    return f"holds (circulation {found.marks.circulation:,} marks, as issued less spent)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=2000, help="keys that claim, then buy")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="league serve --workers N (default: league serve's, one per core)",
    )
    args = parser.parse_args()
    start = loadavg()
    with served_league(workers=args.workers) as served:
        floor = measure(served)

        async def go() -> list[tuple[str, str]]:
            async with LeagueClient(served.url) as league:
                manifest = await league.manifest()
            _, warm = await run(served.url, manifest, 100, args.concurrency, "warm")
            cpu = served.cpu_seconds()
            rows, measured = await run(
                served.url, manifest, args.keys, args.concurrency, "run", served, floor
            )
            per = (served.cpu_seconds() - cpu) / args.keys * 1e3
            rows.append(("server CPU per claim + buy", f"{per:.2f} ms"))
            rows.append(
                (
                    "supply invariant",
                    check_invariant(await supply(served.url), manifest, warm + measured),
                )
            )
            return rows

        rows = asyncio.run(go())
    rows += [
        *floor.rows(),
        ("served by", workers_text(args.workers)),
        ("load average at start", start),
        ("load average at end", loadavg()),
    ]
    print_table("treasury claims and buys end to end", rows)


if __name__ == "__main__":
    main()
