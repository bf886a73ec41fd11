"""Charter engine throughput: random games to the end per second, and the AI's move time.

Run: ``python bench/charter.py [--seconds S | --games N] [--decisions N] [--processes P]``.
Prints a results table: each row on one core in one process, and one row of skirmish 2p games
on the whole machine (P processes, default its cores, playing independent games). Each row
gives games per second of the process's CPU time (what one core does, whatever else loads the
machine) and of the wall clock; ``--games N`` plays the same N seeded games a row (seeds 0…N-1)
instead of as many as fit in S seconds, so that two runs, or two versions of the engine, do the
same work. ``--cpu-only`` prints the skirmish 2p row alone. ``--profile N``
instead plays N random skirmish 2p games under cProfile and prints where their time goes (own
time per function; docs/charter.md, "Performance").
Random games are played to the end by ``random.Random`` choices among the legal actions, with
the packaged sample (charter skirmish, decks ember v tide; charter siege, bastion v tithe; and a
four-player skirmish). AI move time is measured over the decisions of
seeded AI-versus-random games. Targets: at least 500 random two-player games per
second on the machine, and per core 1.5 times the 234 of the engine before this target was
set; the AI answers in under 1 s median. ``--duel N`` instead plays N skirmish
games of the fair AI (it searches determinizations of what its seat cannot see) against the
old AI that searched the real hands, and N against random play, seats alternating, the same
budget in playouts on both sides, and prints the fair AI's wins, losses and games with no
winner.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from game.charter import library, new_game
from game.charter.search import CharterAI
from game.charter.state import State

TABLES = {
    "skirmish 2p (ember v tide)": ("skirmish", ("ember", "tide")),
    "siege 2p (bastion v tithe)": ("siege", ("bastion", "tithe")),
    "skirmish 4p": ("skirmish", ("ember", "tide", "ember", "tide")),
}


def opening(charter: str, decks: tuple[str, ...], seed: int) -> State:
    lists = [library.deck(d).card_list() for d in decks]
    return new_game(library.card_set(), library.charter(charter), lists, seed)


def random_games(
    charter: str, decks: tuple[str, ...], seconds: float, first: int = 0, count: int = 0
) -> tuple[float, float, float, float]:
    """Games per second of wall clock, games per second of this process's CPU time,
    decisions per game, turns per game: seeds from ``first`` on, ``count`` games if given,
    else as many as fit in ``seconds``."""
    rng = random.Random(first)
    games = decisions = turns = 0
    start, cpu = time.perf_counter(), time.process_time()
    while (games < count) if count else (time.perf_counter() - start < seconds):
        s = opening(charter, decks, first + games)
        while not s.is_over:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
            decisions += 1
        turns += s.turns
        games += 1
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    return games / elapsed, games / used, decisions / games, turns / games


def _skirmish_worker(args: tuple[float, int]) -> float:
    seconds, first = args
    charter, decks = TABLES["skirmish 2p (ember v tide)"]
    return random_games(charter, decks, seconds, first)[0]


def parallel_games(processes: int, seconds: float) -> float:
    """Random skirmish 2p games per second of the machine: ``processes`` processes playing
    independent games (distinct seeds) for ``seconds`` each, their rates summed."""
    with ProcessPoolExecutor(processes) as pool:
        jobs = [(seconds, 1_000_000 * (i + 1)) for i in range(processes)]
        return sum(pool.map(_skirmish_worker, jobs))


def profile(games: int, top: int = 25) -> None:
    """The random-game loop of the first table under cProfile: own time per function."""
    charter, decks = TABLES["skirmish 2p (ember v tide)"]
    profiler = cProfile.Profile()
    profiler.enable()
    rng = random.Random(0)
    for game in range(games):
        s = opening(charter, decks, game)
        while not s.is_over:
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def ai_times(decisions: int) -> list[float]:
    """Seconds per AI decision with more than one legal action, over seeded games."""
    times: list[float] = []
    game = 0
    while len(times) < decisions:
        s = opening("skirmish", ("ember", "tide"), game)
        ai, rng = CharterAI(game), random.Random(game)
        while not s.is_over and len(times) < decisions:
            if s.current_player == game % 2 and len(s.legal_actions()) > 1:
                t = time.perf_counter()
                action = ai.decide(s)
                times.append(time.perf_counter() - t)
            else:
                action = rng.choice(s.legal_actions())
            s.apply(action)
        game += 1
    return times


def duel(games: int, budget: int, opponent: str) -> tuple[int, int, int]:
    """The fair AI against ``opponent`` ("seeing": the old AI reading the real hands;
    "random"): (wins, losses, no winner) of the fair AI over ``games`` seeded skirmish games,
    the fair AI at seat ``game % 2``."""
    wins = losses = none = 0
    for game in range(games):
        s = opening("skirmish", ("ember", "tide"), game)
        fair_seat = game % 2
        fair = CharterAI(f"fair:{game}", budget)
        seeing = CharterAI(f"seeing:{game}", budget, fair=False)
        rng = random.Random(game)
        while not s.is_over:
            if s.current_player == fair_seat:
                action = fair.decide(s)
            elif opponent == "seeing":
                action = seeing.decide(s)
            else:
                action = rng.choice(s.legal_actions())
            s.apply(action)
        if s.winner == fair_seat:
            wins += 1
        elif s.winner >= 0:
            losses += 1
        else:
            none += 1
    return wins, losses, none


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per random-game row")
    parser.add_argument(
        "--games", type=int, default=0, metavar="N", help="N seeded games per row instead"
    )
    parser.add_argument(
        "--cpu-only", action="store_true", help="the skirmish 2p row alone, nothing else"
    )
    parser.add_argument("--decisions", type=int, default=200, help="AI decisions timed")
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="profile N random skirmish 2p games instead",
    )
    parser.add_argument(
        "--duel",
        type=int,
        default=0,
        metavar="N",
        help="N games of the fair AI against the seeing AI and against random",
    )
    parser.add_argument("--budget", type=int, default=32, help="playouts per decision (--duel)")
    parser.add_argument(
        "--processes",
        type=int,
        default=os.cpu_count() or 1,
        help="processes for the per-machine row (default: the machine's cores)",
    )
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    if args.duel:
        print(f"fair AI (skirmish, ember v tide, {args.budget} playouts, seats alternating)")
        for opponent in ("seeing", "random"):
            won, lost, none = duel(args.duel, args.budget, opponent)
            rate = won / args.duel
            print(
                f"  against {opponent:<7} won {won}, lost {lost}, no winner {none}: "
                f"win rate {rate:.2f} over {args.duel} games"
            )
        return
    print(f"charter engine · Python {platform.python_version()} · one core")
    print(f"{'measure':<44} {'CPU':>9} {'wall':>9}  detail")
    for label, (charter, decks) in TABLES.items():
        rate, cpu_rate, per_game, turns = random_games(
            charter, decks, args.seconds, count=args.games
        )
        detail = f"{per_game:.0f} decisions, {turns:.0f} turns per game"
        print(f"{'random games/s, ' + label:<44} {cpu_rate:>9.1f} {rate:>9.1f}  {detail}")
        if args.cpu_only:
            return
    if args.processes > 1:
        rate = parallel_games(args.processes, args.seconds)
        label = f"random games/s, skirmish 2p, {args.processes} processes"
        print(f"{label:<44} {'':>9} {rate:>9.1f}  the machine, games independent")
    times = sorted(ai_times(args.decisions))
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    budget = CharterAI(0).budget
    median = statistics.median(times)
    print(f"{'AI move time median (s)':<44} {'':>9} {median:>9.3f}  {budget} playouts")
    print(f"{'AI move time p99 (s)':<44} {'':>9} {p99:>9.3f}  over {len(times)} decisions")


if __name__ == "__main__":
    main()
