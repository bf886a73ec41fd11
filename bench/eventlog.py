"""Event-store benchmark: appends, verify_all against raw Ed25519, proof latency at scale.

    python -m bench.eventlog                      # full form: proofs at 10^5 and 10^6 events
    python -m bench.eventlog --max-events 100000  # short form
    DATABASE_URL=postgresql://... python -m bench.eventlog

(``python bench/eventlog.py ...`` runs it too.) Uses ``DATABASE_URL`` (a fresh database is
created on that server and dropped afterwards) or else an embedded PostgreSQL in a temporary
directory. Prints one results table: beside each append rate, the CPU an event cost (this
process, where the store runs, and the embedded PostgreSQL's, from /proc; the database's is
not measured on DATABASE_URL's server) and its ratio to the floor measured in the same run
(bench/floor.py: the event's canonical bytes and signature, its share of one round trip);
the floor's primitives and the load average at the start and the end close it. Not a test:
nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    import sys

    sys.path[0] = str(Path(__file__).resolve().parents[1])

import asyncpg
import nacl.signing

from bench.floor import Cost, Floor, Recipe, loadavg, measure_local
from bench.league_setup import postgres_cpu_seconds
from ledger.keys import SigningKey
from ledger.merkle import verify_consistency, verify_inclusion
from services.eventlog import NewEvent, PostgresEventStore
from services.eventlog.migrate import upgrade
from services.kernel.database import scratch_database, start_embedded, stop_embedded

SAMPLE_BODY = {
    "serial": "CZ-MODEL-A-0042",
    "title": "MODEL-A",
    "set": "base",
    "finish": "standard",
    "issued_to": "Jf3G2m0qz1XnWz8b9sVh4kQeR7tYpLcA6dNuE5iHoMw",
    "run_index": 42,
}


def _body(i: int) -> dict[str, object]:
    return SAMPLE_BODY | {"serial": f"CZ-MODEL-A-{i:07d}", "run_index": i}


def raw_verify_rate(seconds: float = 2.0) -> float:
    """Ed25519 verifications per second on one core (PyNaCl, a typical event leaf)."""
    key = nacl.signing.SigningKey(bytes(32))
    message = b"CZ1/event\n" + b"x" * 300
    signature = key.sign(message).signature
    verify = key.verify_key.verify
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(500):
            verify(message, signature)
        count += 500
    return count / (time.perf_counter() - start)


def raw_verify_cpu_rate(count: int = 20_000) -> float:
    """Ed25519 verifications per CPU-second of this process: steadier than the wall clock when
    other jobs run, though not immune (they share the cores' caches and execution units)."""
    key = nacl.signing.SigningKey(bytes(32))
    message = b"CZ1/event\n" + b"x" * 300
    signature = key.sign(message).signature
    verify = key.verify_key.verify
    start = time.process_time()
    for _ in range(count):
        verify(message, signature)
    return count / (time.process_time() - start)


def raw_verify_rate_parallel(workers: int) -> float:
    """Total verifications per second with ``workers`` processes verifying at once."""
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        list(pool.map(raw_verify_rate, [0.1] * workers))  # warm the workers up
        return sum(pool.map(raw_verify_rate, [2.0] * workers))


async def _timed(make: Callable[[], Awaitable[object]], samples: int) -> list[float]:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        await make()
        times.append((time.perf_counter() - start) * 1000)
    return times


async def fill(log: PostgresEventStore, upto: int, batch: int = 10_000) -> float:
    """Batched appends until the log holds ``upto`` events; returns events per second."""
    size = (await log.head()).size
    start, added = time.perf_counter(), 0
    while size < upto:
        n = min(batch, upto - size)
        await log.append_batch(
            [NewEvent(f"print/{size + i}", 0, "stamped", _body(size + i)) for i in range(n)]
        )
        size += n
        added += n
    return added / (time.perf_counter() - start) if added else 0.0


async def proof_times(
    log: PostgresEventStore, size: int, samples: int
) -> tuple[list[float], list[float]]:
    """Milliseconds per inclusion and per consistency proof (fetch + verify) at ``size``."""
    rng = random.Random(size)
    root = await log.root(size)

    async def inclusion() -> None:
        index = rng.randrange(size)
        event = await log.event(index)
        assert event is not None
        proof = await log.inclusion_proof(index, size)
        verify_inclusion(index, size, event.leaf_hash, proof, root)

    old_roots: dict[int, bytes] = {}
    olds = [rng.randrange(1, size) for _ in range(samples)]
    for old in olds:
        old_roots[old] = await log.root(old)
    pending = iter(olds)

    async def consistency() -> None:
        old = next(pending)
        proof = await log.consistency_proof(old, size)
        verify_consistency(old, size, old_roots[old], root, proof)

    return await _timed(inclusion, samples), await _timed(consistency, samples)


def raw_rate(workers: int) -> float:
    return raw_verify_rate() if workers == 1 else raw_verify_rate_parallel(workers)


async def verify_rows(log: PostgresEventStore, url: str, workers: int) -> list[tuple[str, str]]:
    """verify_all on ``workers`` processes, next to the raw verify rate of as many processes,
    measured just before and just after it (the machine is shared: load moves), by the wall
    clock and per CPU-second of the processes doing the work."""
    before, cpu_before = raw_rate(workers), raw_verify_cpu_rate()
    start = time.perf_counter()
    summary = await log.verify_all(database_url=url, workers=workers)
    rate = summary.events / (time.perf_counter() - start)
    raw = (before + raw_rate(workers)) / 2
    # CPU time of the audit's own processes only: the database server's share is not counted.
    raw_cpu = (cpu_before + raw_verify_cpu_rate()) / 2
    per_cpu = summary.events / summary.cpu_seconds
    n = f"{summary.events:,}"
    return [
        (
            f"raw Ed25519 verify, {workers} process(es), wall clock",
            f"{raw:,.0f} /s ({raw / workers:,.0f} per process; before/after {before:,.0f}/"
            f"{2 * raw - before:,.0f})",
        ),
        (
            f"verify_all at {n}, {workers} process(es), wall clock",
            f"{rate:,.0f} events/s = {100 * rate / raw:.0f}% of raw",
        ),
        (
            f"verify_all at {n}, {workers} process(es), per CPU-second",
            f"{per_cpu:,.0f} events/s = {100 * per_cpu / raw_cpu:.0f}% of raw per CPU-second "
            f"({raw_cpu:,.0f}; {summary.cpu_seconds:.1f} CPU-s in all)",
        ),
    ]


def _ms(times: list[float]) -> str:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"median {statistics.median(times):.2f} ms, p99 {p99:.2f} ms"


class Spent:
    """CPU of this process and of the database between :meth:`start` and :meth:`stop`."""

    def __init__(self, database_cpu: Callable[[], float]) -> None:
        self.database_cpu = database_cpu
        self.own = self.database = 0.0

    def start(self) -> Spent:
        self.own, self.database = time.process_time(), self.database_cpu()
        return self

    def stop(self) -> Cost:
        return Cost(time.process_time() - self.own, self.database_cpu() - self.database)


async def run(
    url: str,
    max_events: int,
    workers: int,
    verify_at_max: bool,
    floor: Floor | None = None,
    database_cpu: Callable[[], float] = lambda: 0.0,
) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []

    def against(label: str, spent: Cost, events: int, batch: int) -> None:
        if floor is not None:
            rows.append(
                floor.compare(
                    f"  {label}: CPU an event",
                    spent,
                    events,
                    Recipe(sign=1, canonical=1, round_trip=1 / batch),
                )
            )

    await asyncio.to_thread(upgrade, url)
    pool = await asyncpg.create_pool(url, min_size=2, max_size=4)
    log = PostgresEventStore(
        pool, schema="mint", origin="bench.local/mint", key=SigningKey.generate()
    )
    try:
        # A short form (small --max-events) still leaves the batched stage most of the log.
        single = min(2000, max(1, max_events // 10))
        start, spent = time.perf_counter(), Spent(database_cpu).start()
        for i in range(single):
            await log.append(f"one/{i}", 0, "stamped", _body(i))
        rows.append(
            ("append one by one", f"{single / (time.perf_counter() - start):,.0f} events/s")
        )
        against("append one by one", spent.stop(), single, 1)

        first = min(100_000, max_events)
        spent = Spent(database_cpu).start()
        rate = await fill(log, first)
        rows.append((f"append_batch (10,000 per batch) to {first:,}", f"{rate:,.0f} events/s"))
        against("append_batch", spent.stop(), first - single, 10_000)
        await log.sign_checkpoint()

        for w in sorted({1, workers}):
            rows.extend(await verify_rows(log, url, w))

        for size in sorted({first, max_events}):
            if size > first:
                rate = await fill(log, size, batch=20_000)
                rows.append(
                    (f"append_batch (20,000 per batch) to {size:,}", f"{rate:,.0f} events/s")
                )
                await log.sign_checkpoint()
                if verify_at_max:
                    rows.extend(await verify_rows(log, url, workers))
            inc, con = await proof_times(log, size, samples=300)
            rows.append((f"inclusion proof at {size:,} (read+verify)", _ms(inc)))
            rows.append((f"consistency proof at {size:,} (read+verify)", _ms(con)))
    finally:
        await pool.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-events", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--verify-at-max",
        action="store_true",
        help="also run verify_all over the full --max-events log",
    )
    args = parser.parse_args()

    start = loadavg()
    server_url = os.environ.get("DATABASE_URL")
    tmp = None
    if not server_url:
        tmp = Path(tempfile.mkdtemp(prefix="cz-bench-pg-"))
        tmp.chmod(0o755)
        server_url = start_embedded(tmp / "pgdata").url
    try:
        with scratch_database(server_url, "cz_bench") as url:
            pgdata = tmp / "pgdata" if tmp is not None else None

            def database_cpu() -> float:
                return postgres_cpu_seconds(pgdata) if pgdata is not None else 0.0

            floor = measure_local(url, database_cpu, measured=pgdata is not None)
            rows = asyncio.run(
                run(url, args.max_events, args.workers, args.verify_at_max, floor, database_cpu)
            )
            rows += [
                *floor.rows(),
                ("load average at start", start),
                ("load average at end", loadavg()),
            ]
    finally:
        if tmp is not None:
            stop_embedded(tmp / "pgdata")
            shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(label) for label, _ in rows)
    print(f"event store benchmark ({os.cpu_count()} cores)")
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


if __name__ == "__main__":
    main()
