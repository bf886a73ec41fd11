"""Rules engine throughput: random full tables, legal_actions and clone, per second.

Run: ``python bench/engine.py [--seconds S]``. Prints a results table; one core, one process.
Random tables are played to the close by ``random.Random`` choices among the legal actions
(the No-Go drill's outcome drawn the same way), exactly as a Monte Carlo playout would.
The target is at least 1,000 random market tables per second.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable

from game.window import State, new_base_table, new_market_table


def random_tables(convene: Callable[[int], State], seconds: float) -> tuple[float, float]:
    """Tables per second and actions per table, playing fresh seeded deals to the close."""
    rng = random.Random(0)
    tables = actions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = convene(tables)
        while not state.is_over:
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
            actions += 1
        tables += 1
    elapsed = time.perf_counter() - start
    return tables / elapsed, actions / tables


def midgame_positions(count: int) -> list[State]:
    """Market positions part-way through, to time per-position operations on."""
    rng = random.Random(1)
    positions = []
    for seed in range(count):
        state = new_market_table(seed)
        for _ in range(rng.randrange(4, 16)):
            if state.is_over:
                break
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        positions.append(state)
    return positions


def per_second(
    operation: Callable[[State], object], positions: list[State], seconds: float
) -> float:
    calls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for state in positions:
            operation(state)
        calls += len(positions)
    return calls / (time.perf_counter() - start)


def fresh_legal_actions(state: State) -> object:
    state._legal = None  # time the generation, not the cache
    return state.legal_actions()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    positions = midgame_positions(200)
    rows = []
    base, base_len = random_tables(new_base_table, args.seconds)
    rows.append(("random base tables to the close", base, f"{base_len:.1f} actions/table"))
    market, market_len = random_tables(new_market_table, args.seconds)
    rows.append(("random market tables to the close", market, f"{market_len:.1f} actions/table"))
    rows.append(
        (
            "legal_actions (market, uncached)",
            per_second(fresh_legal_actions, positions, args.seconds),
            "",
        )
    )
    rows.append(("clone (market midgame)", per_second(State.clone, positions, args.seconds), ""))
    print(
        f"THE WINDOW rules engine — {platform.python_implementation()} {platform.python_version()}"
    )
    print(f"{'measure':<36} {'per second':>12}  note")
    print(f"{'-' * 36} {'-' * 12}  {'-' * 20}")
    for name, rate, note in rows:
        print(f"{name:<36} {rate:>12,.0f}  {note}")
    verdict = "meets" if market >= 1000 else "MISSES"
    print(f"\ntarget ≥ 1,000 random market tables/s on one core: {verdict} ({market:,.0f}/s)")


if __name__ == "__main__":
    main()
