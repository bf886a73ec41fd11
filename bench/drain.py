"""What draining every print run costs a script, and what 20 prints cost an honest player.

Run: ``python bench/drain.py [--seconds S] [--live N]``.

1. Measures the pure-Python solver (``ledger.work.solve``: hashlib in a Python loop, the
   honest client's own code) in hashes per second on 1 process and on one process per core.
2. With ``--live N``: creates a league with the default published policies in a temporary
   LEAGUE_HOME (on DATABASE_URL if set, else an embedded PostgreSQL), starts ``league serve
   mint`` and has a script stamp N prints of one run with one solver process per core, as a
   drain would; reports the prints per second it achieved.
3. Extrapolates from the measured rates: an honest player's 20 prints at a full run's price
   on one core; the whole drain (every print of every run of the default manifest, each at
   its rising price) in core-hours and in hours on this machine; and, as estimates, a native
   solver and a GPU (factors stated in the table, not measured here).

Targets: 20 prints in under 30 s of one core; a drain of at least 40 core-hours
for a 2-core script. The bench prints the figures; it never fails on them.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    import sys

    sys.path[0] = str(Path(__file__).resolve().parents[1])

from apiclient.league import LeagueClient, new_request_id
from bench.league_setup import served_league
from ledger.keys import SigningKey
from ledger.manifest import DEFAULT_POLICIES, LeagueManifest
from ledger.print_runs import DEFAULT_PRINT_RUNS, RUN_FINISHES
from ledger.requests import StampRequest
from ledger.work import challenge, request_work, run_work, solve

#: Assumed speed-ups over the pure-Python solver (estimates, not measured here): a native
#: SHA-256 loop with the CPU's SHA extensions, and a current consumer GPU (hashcat-class
#: SHA-256 throughput is in the tens of billions of hashes a second).
NATIVE_FACTOR = 15
GPU_HASHES_PER_SECOND = 2e10


def hashes_for(seconds: float) -> int:
    """Hash for about ``seconds`` with the solver's own loop; how many hashes it did.

    Each round solves a fresh challenge at a price of 4,096 and counts the nonces tried
    (the nonce found, plus one): the same loop as a real solve, at any price.
    """
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += solve(os.urandom(32), 0, 4096) + 1
    return done


def rate(processes: int, seconds: float) -> float:
    """Hashes per second of ``processes`` solvers running at once."""
    if processes == 1:
        start = time.perf_counter()
        done = hashes_for(seconds)
        return done / (time.perf_counter() - start)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        start = time.perf_counter()
        done = sum(pool.map(hashes_for, [seconds] * processes))
        return done / (time.perf_counter() - start)


def _solve_one(job: tuple[bytes, int]) -> int:
    bound, work = job
    return solve(bound, 0, work)


def _unsigned(manifest: LeagueManifest, owner: SigningKey, title: str) -> dict[str, Any]:
    return {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": new_request_id(),
        "time": int(time.time()),
        "owner": owner.public.to_text(),
        "prints": [{"title": title, "finish": "standard"}],
    }


async def _drain(url: str, count: int, workers: int) -> tuple[float, int]:
    """A script's loop: read the prices, solve ``workers`` one-print requests at once (one per
    solver process, a fresh key each: keys are free), post them, again."""
    context = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    stamped = 0
    async with LeagueClient(url) as league:
        manifest = await league.manifest()
        policies = manifest.policies
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            start = time.perf_counter()
            while stamped < count:
                runs = (await league.census()).runs()
                batch = min(workers, count - stamped)
                owners = [SigningKey.generate() for _ in range(batch)]
                unsigned = [_unsigned(manifest, owner, "Tally") for owner in owners]
                works = request_work(
                    policies.stamp_work,
                    policies.stamp_work_rise,
                    runs,
                    [("Tally", "standard")] * batch,
                )
                bounds = [challenge({"kind": StampRequest.KIND, **u}) for u in unsigned]
                nonces = await asyncio.gather(
                    *(
                        loop.run_in_executor(pool, _solve_one, (bound, work))
                        for bound, work in zip(bounds, works, strict=True)
                    )
                )
                for owner, fields, nonce in zip(owners, unsigned, nonces, strict=True):
                    answer = await league.stamp(StampRequest.sign(owner, **fields, work=[nonce]))
                    stamped += sum(1 for item in answer.items if item.status == "stamped")
            return stamped / (time.perf_counter() - start), stamped


def live(count: int, workers: int) -> tuple[float, int]:
    """Stamp ``count`` prints against a real mint at the default prices; prints/s and how
    many were stamped."""
    with served_league(("mint",), name="Drain", policies=()) as served:  # published prices
        return asyncio.run(_drain(served.url, count, workers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="how long each solver-rate measurement runs"
    )
    parser.add_argument(
        "--live",
        type=int,
        default=0,
        metavar="N",
        help="also stamp N prints against a real mint at the default prices",
    )
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    one = rate(1, args.seconds)
    many = rate(cores, args.seconds)
    policies = DEFAULT_POLICIES
    base, rise = policies.stamp_work, policies.stamp_work_rise
    total_prints = sum(run.size(f) for run in DEFAULT_PRINT_RUNS.runs for f in RUN_FINISHES)
    total_work = sum(
        run_work(base, rise, run.size(f)) for run in DEFAULT_PRINT_RUNS.runs for f in RUN_FINISHES
    )
    honest = 20 * base / one
    rows = [
        ("solver, 1 process (pure Python, hashlib)", f"{one / 1e6:8.2f} M hashes/s"),
        (f"solver, {cores} processes", f"{many / 1e6:8.2f} M hashes/s"),
        ("published price", f"{base:,} hashes a print at a full run, ×{rise} at the last tenth"),
        (
            "honest player: 20 prints at a full run, 1 core",
            f"{honest:8.1f} s expected (target < 30 s)",
        ),
        (
            f"drain: all {total_prints:,} prints at their rising prices",
            f"{total_work:.3e} hashes expected",
        ),
        (
            f"  a {cores}-core Python script",
            f"{total_work / one / 3600:8.1f} core-hours, {total_work / many / 3600:6.1f} h on "
            f"this machine (target >= 40 core-hours)",
        ),
        (
            f"  a native solver (estimate: ×{NATIVE_FACTOR} per core)",
            f"{total_work / (one * NATIVE_FACTOR) / 3600:8.1f} core-hours",
        ),
        (
            f"  one GPU (estimate: {GPU_HASHES_PER_SECOND:.0e} hashes/s)",
            f"{total_work / GPU_HASHES_PER_SECOND / 60:8.1f} minutes",
        ),
        (
            "  one source network at the published bucket",
            f"{total_prints / policies.source_prints_per_minute / 60:8.1f} h "
            f"({policies.source_prints_per_minute} prints a minute)",
        ),
    ]
    if args.live:
        achieved, stamped = live(args.live, cores)
        rows.append(
            (
                f"live: a script stamping {stamped} prints, {cores} solvers",
                f"{achieved:8.3f} prints/s",
            )
        )
    print(
        f"drain bench — {platform.python_implementation()} {platform.python_version()}, "
        f"{cores} cores"
    )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


if __name__ == "__main__":
    main()
