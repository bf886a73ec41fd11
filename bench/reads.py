"""The mint's reads with one worker and with several: what ``league serve --workers N`` buys.

Run: ``python -m bench.reads [--prints N] [--seconds S] [--concurrency C] [--workers N]``
(or ``python bench/reads.py ...``).

For each worker count (1, then ``--workers``, default 2) a new league is served by ``league
serve mint --workers W`` from a child process (bench/league_setup.py), ``--prints`` prints
are stamped, then for ``--seconds`` a closed loop of ``--concurrency`` clients reads what an
auditor and a follower read, round robin: ``GET /ledger`` (the census), a page of
``/mint/events`` at a random place, ``/mint/checkpoint``, and an inclusion proof of a random
event in the latest checkpoint's tree. Every answer must be 200. The table gives reads/s and
p50/p99 latency per worker count, the CPU a read cost (the server's processes and
PostgreSQL's, from /proc) against the floor measured in the same run (bench/floor.py: one
request and one round trip), and the ratio of the two rates. The client runs on the same
machine and takes a core's share too: on a 2-core machine two workers can at most share what
the client leaves.

Target: two workers read at >= 1.7 times one worker's rate. The bench prints the figures; it
never fails on them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp

from apiclient.league import LeagueClient, stamp_request
from bench.floor import Cost, Floor, loadavg, machine_shares, machine_ticks, measure, read_recipe
from bench.league_setup import percentile, print_table, served_league, titles
from ledger.checkpoint import Checkpoint
from ledger.keys import SigningKey


async def stamp(url: str, prints: int) -> int:
    """Stamp ``prints`` prints in batches of 50; the log's size after."""
    order = titles()
    async with LeagueClient(url) as league:
        manifest = await league.manifest()
        for start in range(0, prints, 50):
            batch = [next(order) for _ in range(min(50, prints - start))]
            await league.stamp(stamp_request(SigningKey.generate(), manifest, batch))
        for _ in range(200):  # the checkpoint covering them (the leader's beat)
            size = Checkpoint.from_note(await league.checkpoint(service="mint")).size
            if size >= prints:
                return size
            await asyncio.sleep(0.05)
    raise SystemExit("the mint's checkpoint never covered the stamps")


async def read_loop(
    url: str, size: int, seconds: float, concurrency: int
) -> tuple[int, list[float]]:
    """Reads for ``seconds`` with ``concurrency`` in flight: (reads, latencies)."""
    chance = random.Random(3)
    paths: list[Callable[[], str]] = [
        lambda: "/ledger",
        lambda: f"/mint/events?after={chance.randrange(-1, size - 1)}&limit=20",
        lambda: "/mint/checkpoint",
        lambda: f"/mint/proof/inclusion?index={chance.randrange(size)}&size={size}",
    ]
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def reader(offset: int) -> None:
            turn = offset
            while time.perf_counter() < deadline:
                path = paths[turn % len(paths)]()
                turn += 1
                sent = time.perf_counter()
                async with session.get(url + path) as response:
                    body = await response.read()
                    if response.status != 200:
                        raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
                latencies.append(time.perf_counter() - sent)

        await asyncio.gather(*(reader(i) for i in range(concurrency)))
    return len(latencies), latencies


def one(
    workers: int, args: argparse.Namespace, floor: Floor | None
) -> tuple[float, list[tuple[str, str]], Floor]:
    """Serve with ``workers``, stamp, read: (reads/s, rows, the floor: measured on the first
    league's database when not given)."""
    with served_league(["mint"], workers=workers) as served:
        size = asyncio.run(stamp(served.url, args.prints))
        cpu = (served.cpu_seconds(), served.database_cpu_seconds())
        own, (busy, total) = time.process_time(), machine_ticks()
        started = time.perf_counter()
        reads, latencies = asyncio.run(read_loop(served.url, size, args.seconds, args.concurrency))
        elapsed = time.perf_counter() - started
        busy_after, total_after = machine_ticks()
        busy, total = busy_after - busy, total_after - total
        client = time.process_time() - own
        server = served.cpu_seconds() - cpu[0]
        database = served.database_cpu_seconds() - cpu[1]
        if floor is None:
            floor = measure(served)
    rate = reads / elapsed
    rows = [
        (
            f"{workers} worker{'s' if workers > 1 else ''}: reads/s",
            f"{rate:,.0f} ({reads:,} reads over {elapsed:.1f} s, log of {size} events)",
        ),
        (
            "  p50 / p99",
            f"{percentile(latencies, 0.5) * 1000:.1f} / "
            f"{percentile(latencies, 0.99) * 1000:.1f} ms",
        ),
        floor.compare("  CPU a read", Cost(server, database), reads, read_recipe()),
        (
            "  the machine meanwhile",
            machine_shares(busy / max(1, total), elapsed, server, database, client),
        ),
    ]
    return rate, rows, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prints", type=int, default=2000, help="prints stamped first")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of reading")
    parser.add_argument("--concurrency", type=int, default=32, help="reads in flight")
    parser.add_argument("--workers", type=int, default=2, help="the worker count compared")
    args = parser.parse_args()
    before = loadavg()
    floor: Floor | None = None
    rows: list[tuple[str, str]] = []
    rates = []
    for workers in (1, args.workers):
        rate, more, floor = one(workers, args, floor)
        rates.append(rate)
        rows += more
    assert floor is not None  # measured with the first league
    rows += floor.rows()
    rows.append((f"{args.workers} workers / 1", f"{rates[1] / rates[0]:.2f}× (target ≥ 1.7×)"))
    rows.append(("load average, start / end", f"{before} / {loadavg()}"))
    print_table("bench/reads.py: the mint's reads, 1 worker against several", rows)
    print(json.dumps({"reads_per_s": dict(zip((1, args.workers), rates, strict=True))}))


if __name__ == "__main__":
    main()
