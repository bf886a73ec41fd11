"""Round-robin of the Standing Table's twelve Chairs (IV.6) on market tables.

Every pair of Chairs plays ``--deals`` market deals (IV.2) twice, seats swapped. Prints the
win/loss/Balance matrix (row Chair against column Chair, from the row's side), the adjacent
pairs' scores (win = 1, Balance = ½ — for this measure only; the book never adds verdicts), and
each Chair's median and maximum time per move (decisions with more than one legal action).

Targets (reported, never asserted): Chair n+1 scores above Chair n in every adjacent pair;
Chair XII's median move under 1 s and maximum under 5 s.

    python bench/ladder.py                      # long form: 200 deals per pair, all 66 pairs
    python bench/ladder.py --deals 4 --adjacent # short form: the 11 adjacent pairs only
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from itertools import combinations

from game.window.ai.player import AIPlayer
from game.window.ai.roster import CHAIR_STRENGTH, chair_player
from game.window.campaign import ROMAN
from game.window.drill import DrillOutcome
from game.window.state import State
from game.window.tables import convene_market, play_out


class _Timed:
    """A Chair whose decisions with a real choice are timed (wall clock, for the report only)."""

    def __init__(self, player: AIPlayer) -> None:
        self.player = player
        self.times: list[float] = []

    def decide(self, state: State) -> int:
        choice = len(state.legal_actions()) > 1
        start = time.perf_counter()
        action = self.player.decide(state)
        if choice:
            self.times.append(time.perf_counter() - start)
        return action

    def answer_drill(self) -> DrillOutcome:
        return self.player.answer_drill()


def play_game(first: int, second: int, deal: int) -> tuple[int, int, str, list[float], list[float]]:
    """One market table: Chair ``first`` in the first seat. Returns the first seat's verdict."""
    seed = f"ladder:{first}:{second}:{deal}"
    a = _Timed(chair_player(first, seed, CHAIR_STRENGTH[second].drill_competence))
    b = _Timed(chair_player(second, seed, CHAIR_STRENGTH[first].drill_competence))
    state = convene_market(deal).new_state()
    play_out(state, [a, b])
    return first, second, state.verdict(0).value, a.times, b.times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200, help="market deals per pair")
    parser.add_argument("--adjacent", action="store_true", help="only pairs n, n+1")
    parser.add_argument("--first", type=int, default=1, help="the lowest Chair to play")
    parser.add_argument("--chairs", type=int, default=12, help="the highest Chair to play")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    chairs = range(args.first, args.chairs + 1)
    pairs = (
        [(n, n + 1) for n in chairs if n + 1 in chairs]
        if args.adjacent
        else list(combinations(chairs, 2))
    )
    games = [(x, y, d) for x, y in pairs for d in range(args.deals) for x, y in ((x, y), (y, x))]
    results: dict[tuple[int, int], dict[str, int]] = defaultdict(
        lambda: {"win": 0, "loss": 0, "balance": 0}
    )
    times: dict[int, list[float]] = defaultdict(list)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = pool.map(play_game, *zip(*games, strict=True), chunksize=1)
        for first, second, verdict, t_first, t_second in done:
            results[first, second][verdict] += 1
            mirror = {"win": "loss", "loss": "win", "balance": "balance"}[verdict]
            results[second, first][mirror] += 1
            times[first] += t_first
            times[second] += t_second
    elapsed = time.perf_counter() - started
    _print_report(chairs, results, times, args.deals, elapsed)
    return 0


def _print_report(
    chairs: range,
    results: dict[tuple[int, int], dict[str, int]],
    times: dict[int, list[float]],
    deals: int,
    elapsed: float,
) -> None:
    print(
        f"THE WINDOW ladder: market tables, {deals} deals per pair, seats swapped "
        f"({2 * deals} games per pair), {elapsed:.0f} s\n"
    )
    print("Matrix (row vs column, row's wins-losses-Balances):")
    print("       " + "".join(f"{ROMAN[c]:>12}" for c in chairs))
    for r in chairs:
        cells = []
        for c in chairs:
            cell = results.get((r, c))
            cells.append(f"{cell['win']}-{cell['loss']}-{cell['balance']}" if cell else "·")
        print(f"{ROMAN[r]:>6} " + "".join(f"{x:>12}" for x in cells))
    print("\nAdjacent pairs (score of the stronger Chair: win 1, Balance ½, this measure only):")
    for n in chairs:
        if (n + 1, n) not in results:
            continue
        cell = results[n + 1, n]
        played = sum(cell.values())
        score = (cell["win"] + cell["balance"] / 2) / played
        verdict = "rising" if score > 0.5 else "NOT rising"
        print(f"  {ROMAN[n + 1]:>4} vs {ROMAN[n]:<4} {score:6.3f} over {played} games  {verdict}")
    print("\nTime per move with a choice (wall clock, this machine):")
    print(f"  {'Chair':>6} {'moves':>7} {'median s':>9} {'max s':>7}")
    for n in chairs:
        t = times.get(n)
        if t:
            print(f"  {ROMAN[n]:>6} {len(t):>7} {statistics.median(t):>9.3f} {max(t):>7.3f}")


if __name__ == "__main__":
    sys.exit(main())
