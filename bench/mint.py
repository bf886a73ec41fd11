"""Mint throughput and latency, end to end over HTTP from a second process.

Run: ``python -m bench.mint [--prints N] [--concurrency C] [--paced-seconds S] [--workers
N]`` (or ``python bench/mint.py ...``); ``--workers`` is passed to ``league serve`` (its
default: one worker per core), and the table says which served.

It creates a league in a temporary LEAGUE_HOME, starts ``league serve mint`` as a child
process (on DATABASE_URL if set — a scratch database is created in that server and dropped
afterwards — else on an embedded PostgreSQL in the temporary directory), and from this
process:

1. stamps prints in batches of 50 (one fresh key per request: keys are free and each has an
   allowance of 50 a day) with C requests in flight: prints/s, p50/p99 request latency;
2. the same with batches of 1;
3. single-print stamps paced at 100 requests/s (open loop: each request leaves at its
   scheduled time, whatever the previous ones are doing): p50/p99 latency;
4. during phase 1, ``GET /health`` every 10 ms: its p50/p99 shows whether the server keeps
   answering while the writer signs and stamps at full rate.

Beside phases 1 and 2, the CPU a print cost (the server's processes and the embedded
PostgreSQL's, from /proc) and its ratio to the floor measured in the same run (bench/floor.py:
a print's certificate and event signed, its share of the request verified, parsed and
answered and of one commit); the floor's primitives and the load average at the start and
the end close the table.

Requests are signed and serialized before each phase starts, and answers are counted from
their JSON without validating every certificate, so the figures measure the server rather
than this client sharing its cores (the census at the end is read through the full client).

Targets (issues 3 and 8): >= 5,000 prints/s in batches of 50; p99 < 50 ms for single-print
stamps at 100 requests/s; ``GET /health`` p99 < 20 ms while stamping at full rate. The bench
prints the figures; it never fails on them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp

from apiclient.league import LeagueClient, stamp_request
from bench.floor import Floor, Spent, loadavg, measure, stamp_recipe
from bench.league_setup import (
    Served,
    closed_loop,
    percentile,
    print_table,
    served_league,
    titles,
    workers_text,
)
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest


def requests(manifest: LeagueManifest, count: int, batch: int) -> list[bytes]:
    """``count`` signed stamp requests of ``batch`` prints each, as request bodies."""
    order = titles()
    return [
        json.dumps(
            stamp_request(
                SigningKey.generate(), manifest, [next(order) for _ in range(batch)]
            ).to_wire()
        ).encode()
        for _ in range(count)
    ]


class Poster:
    """POSTs ready bodies to /mint/stamp and counts the prints stamped."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url + "/mint/stamp"

    async def stamp(self, body: bytes) -> int:
        async with self.session.post(
            self.url, data=body, headers={"Content-Type": "application/json"}
        ) as response:
            answer = json.loads(await response.read())
        if response.status != 200:
            raise SystemExit(f"the mint refused a bench request: {answer}")
        return sum(1 for item in answer["items"] if item["status"] == "stamped")


async def paced(poster: Poster, batch: list[bytes], rate: float) -> tuple[list[float], float]:
    """Open loop: request i leaves at start + i/rate; latencies, and the rate achieved."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.1
    latencies: list[float] = []

    async def one(i: int, request: bytes) -> None:
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        sent = time.perf_counter()
        await poster.stamp(request)
        latencies.append(time.perf_counter() - sent)

    await asyncio.gather(*(one(i, r) for i, r in enumerate(batch)))
    return latencies, len(batch) / (loop.time() - start)


async def probe_health(
    session: aiohttp.ClientSession, url: str, stop: asyncio.Event
) -> list[float]:
    """GET /health every 10 ms until ``stop``; the latencies."""
    latencies: list[float] = []
    while not stop.is_set():
        sent = time.perf_counter()
        async with session.get(url + "/health") as response:
            await response.read()
        latencies.append(time.perf_counter() - sent)
        await asyncio.sleep(0.01)
    return latencies


async def run(args: argparse.Namespace, served: Served, floor: Floor) -> list[tuple[str, str]]:
    url = served.url
    rows: list[tuple[str, str]] = []
    connector = aiohttp.TCPConnector(limit=max(args.concurrency, 200))
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        LeagueClient(url, session=session) as league,
    ):
        manifest = await league.manifest()
        poster = Poster(session, url)
        await poster.stamp(requests(manifest, 1, 1)[0])  # warm-up: pool, caches
        for size in (50, 1):
            count = max(1, args.prints // size) if size == 50 else args.prints // 10
            batch = requests(manifest, count, size)
            stop = asyncio.Event()
            health = asyncio.create_task(probe_health(session, url, stop))
            spent = Spent(served).start()
            rate, latencies, stamped = await closed_loop(poster.stamp, batch, args.concurrency)
            cost = spent.stop()
            stop.set()
            probes = await health
            rows.append(
                (
                    f"batches of {size}, {args.concurrency} in flight ({stamped} prints)",
                    f"{rate:8.0f} prints/s   p50 {1000 * statistics.median(latencies):6.1f} ms"
                    f"   p99 {1000 * percentile(latencies, 0.99):6.1f} ms",
                )
            )
            rows.append(
                floor.compare(
                    f"  CPU a print, batches of {size}", cost, stamped, stamp_recipe(size)
                )
            )
            rows.append(
                (
                    f"  GET /health meanwhile ({len(probes)} probes)",
                    f"p50 {1000 * statistics.median(probes):6.1f} ms   "
                    f"p99 {1000 * percentile(probes, 0.99):6.1f} ms",
                )
            )
        count = int(args.paced_seconds * 100)
        latencies, achieved = await paced(poster, requests(manifest, count, 1), 100.0)
        rows.append(
            (
                f"single prints paced at 100 req/s ({count} requests, "
                f"{achieved:.0f} req/s achieved)",
                f"p50 {1000 * statistics.median(latencies):6.1f} ms   "
                f"p99 {1000 * percentile(latencies, 0.99):6.1f} ms   "
                f"max {1000 * max(latencies):6.1f} ms",
            )
        )
        census = await league.census()
        rows.append(("census after the bench", f"{census.totals['all'].stamped} prints stamped"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--prints",
        type=int,
        default=20_000,
        help="prints stamped in batches of 50 (a tenth of it in batches of 1)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument(
        "--paced-seconds",
        type=float,
        default=10.0,
        help="how long to send single-print stamps at 100 requests/s",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="league serve --workers N (default: league serve's, one per core)",
    )
    args = parser.parse_args()
    start = loadavg()
    with served_league(["mint"], workers=args.workers) as served:
        floor = measure(served)
        rows = asyncio.run(run(args, served, floor))
    rows += [
        *floor.rows(),
        ("served by", workers_text(args.workers)),
        ("load average at start", start),
        ("load average at end", loadavg()),
    ]
    print_table("mint bench", rows)


if __name__ == "__main__":
    main()
