"""What a witnessed table's reward costs a script, and what a farm of bots can draw per day.

Run: ``python bench/rewards.py [--seconds S]``.

Measures the pure-Python solver (``ledger.work.solve``, the honest client's own) in hashes per
second on one core, then prints, at the default published policies (``ledger.manifest``), the
proof of work of a rewarded table at each venue (``game.window.rewards.table_work``), what a
mark earned at a table costs, a whole witnessed campaign's work for one key (the clerks, the
Assessor and the twelve Chairs, each settled once, with its bundles and the Zenoseal), and the
daily draw of a farm bounded by its cores and by its source networks' buckets. The figures go
in docs/economy.md; the bench never fails on them.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    import sys

    sys.path[0] = str(Path(__file__).resolve().parents[1])

from game.window.campaign import CHAIRS, CLERKS_TO_BREAK_SEAL
from game.window.rewards import VENUES, most_marks, table_work
from ledger.manifest import DEFAULT_POLICIES
from ledger.work import solve

DAY = 86_400
NOTE_SET = 1_500_000


def rate(seconds: float) -> float:
    """Hashes per second of the pure-Python solver on this core."""
    hashes = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        hashes += solve(os.urandom(32), 0, 1 << 20) + 1
    return hashes / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to measure")
    args = parser.parse_args()
    per_second = rate(args.seconds)
    policies = DEFAULT_POLICIES
    print(f"solver: {per_second / 1e6:.2f} M hashes/s (one core, pure Python)")
    for name in ("clerk-1", "assessor", "chair-I", "chair-VI", "chair-XII"):
        work = table_work(policies, name)
        print(
            f"{name}: {most_marks(VENUES[name])} marks at most, {work:,} hashes "
            f"= {work / per_second:.2f} s of one core"
        )
    per_mark = policies.table_work_per_mark
    print(f"a mark earned at a table: {per_mark:,} hashes (a faucet mark: the same)")
    campaign = [f"clerk-{n}" for n in range(1, CLERKS_TO_BREAK_SEAL + 1)]
    campaign += ["assessor", *(name for name in VENUES if name.startswith("chair-"))]
    work = sum(table_work(policies, name) for name in campaign)
    marks = sum(most_marks(VENUES[name]) for name in campaign)
    print(
        f"one key's witnessed campaign ({len(campaign)} tables, {CHAIRS // 2} bundles and the "
        f"Zenoseal: 19 prints, {marks} marks): {work:,} hashes = {work / per_second:.0f} s"
    )
    clerk = table_work(policies, "clerk-1")
    by_core = DAY * per_second / clerk * 10
    by_source = policies.source_prints_per_minute * 60 * 24 * 10
    print(
        f"a farm's clerk marks per day: {by_core:,.0f} per core, {by_source:,} per source "
        f"network ({policies.source_prints_per_minute} tables a minute)"
    )
    hours = NOTE_SET * per_mark / per_second / 3600
    print(f"the whole note set ({NOTE_SET:,} marks) through tables: {hours:.1f} core-hours")


if __name__ == "__main__":
    main()
