"""Witnessed tables: moves per second against Chair I over HTTP, a move's latency, and the
audit's replay rate beside the engine's offline replay of the same tables.

Run: ``python -m bench.tables [--tables N] [--concurrency C] [--workers W] [--profile]`` (or
``python bench/tables.py ...``).

It serves a whole league (``league serve``, see ``bench/league_setup.py``) from a child
process, and from this process plays ``N`` tables at Chair I (``C`` players at once, each
playing its tables one after another, the first legal action at each decision and every No-Go
drill of its own answered with the pattern shown), each move a signed request answered with
the Chair's replies. Then it reads the tables' log as ``league audit`` does and times:

1. the audit (``auditor.tables.audit_tables``: every event's signature and the Merkle root,
   every request's signature, every closed table replayed by the engine's referee);
2. the engine's own replay of the same tables from the same events (``replay_table``: the
   deal, the player's actions and the Chair's searched replies), without signatures.

Targets: >= 300 witnessed moves/s against Chair I on this machine (client and server
together), a move's p99 below 100 ms excluding the Chair's thinking (its thinking runs in a
worker thread, off the event loop); the audit at >= 50% of the engine's offline replay rate.
The bench prints the figures; it never fails on them. A move here is one player's request
(with the replies it brings); the server's figure is its requests/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import pstats
import secrets
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp

from apiclient.league import LeagueClient
from auditor.tables import audit_tables
from bench.league_setup import percentile, print_table, served_league, workers_text
from game.window.witnessed import referee, replay_table
from ledger.api.logs import FeedEvent
from ledger.audit.tables import TablesChecker, TablesReport
from ledger.events import body_as
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import parse_time
from ledger.manifest import LeagueManifest
from ledger.tables import (
    MovePlayed,
    TableClosed,
    TableDealt,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
    reveals,
)
from ledger.wire import hash_text


def _signed(model: Any, key: SigningKey, manifest: LeagueManifest, **fields: Any) -> Any:
    return model.sign(
        key,
        league=manifest.league,
        manifest=manifest.hash_text(),
        time=int(time.time()),
        player=key.public.to_text(),
        **fields,
    ).to_wire()


async def _play(
    session: aiohttp.ClientSession, url: str, manifest: LeagueManifest, latencies: list[float]
) -> int:
    """One table at Chair I played to its close: the player's moves."""
    key = SigningKey.generate()

    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        async with session.post(url + path, json=body) as response:
            answer: dict[str, Any] = await response.json()
            if response.status != 200:
                raise RuntimeError(f"{path}: {answer}")
        latencies.append(time.perf_counter() - start)
        return answer

    view = await post(
        "/tables/open",
        _signed(TableOpen, key, manifest, request_id=secrets.token_hex(8), venue="chair-I"),
    )
    table = view["table"]
    seed = hash_text(secrets.token_bytes(32))
    view = await post(
        "/tables/seed",
        _signed(TableSeed, key, manifest, table=table, commitment=view["commitment"], seed=seed),
    )
    moves = 0
    while view["waiting"] in ("move", "drill"):
        action = view["drill"] if view["waiting"] == "drill" else view["legal"][0]
        body = _signed(TableMove, key, manifest, table=table, ply=view["ply"], action=action)
        view = await post("/tables/move", body)
        moves += 1
    return moves


def _drill_times(feed: list[FeedEvent]) -> tuple[list[float], list[float]]:
    """Every drill answer's seconds as judged (from the event that started the drill to the
    answer's recorded arrival, L-32) and as counted to its own event's time (what the service
    counted before it read the arrival first: the answer's waits included)."""
    judged: list[float] = []
    recorded: list[float] = []
    last: dict[str, str] = {}
    for item in feed:
        table = item.body.get("table")
        if not isinstance(table, str) or item.stream != f"table/{table}":
            continue
        before = last.get(table)
        last[table] = item.recorded_at
        if (
            item.type != "move-played"
            or before is None
            or "/" not in item.body["request"]["action"]
        ):
            continue
        started = parse_time(before)
        arrived = item.body.get("arrived")
        if arrived is not None:
            judged.append(arrived / 1000 - started.timestamp())
        recorded.append((parse_time(item.recorded_at) - started).total_seconds())
    return judged, recorded


def _offline(feed: list[FeedEvent]) -> int:
    """The engine's replay of every closed table of ``feed`` (no signature checked): tables."""
    streams: dict[str, list[FeedEvent]] = {}
    for item in feed:
        streams.setdefault(item.stream, []).append(item)
    replayed = 0
    for items in streams.values():
        events = [item.bound() for item in items]
        if events[-1].type != TableClosed.TYPE:
            continue
        opened = body_as(events[0], TableOpened)
        dealt = body_as(events[1], TableDealt)
        moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events[2:-1]]
        secret = reveals(opened, body_as(events[-1], TableClosed).secret)
        replay_table(opened, dealt, events[1].recorded_at, moves, secret)
        replayed += 1
    return replayed


@contextlib.contextmanager
def _profiled(profile: bool) -> Iterator[None]:
    """With ``profile``, the block's cProfile (the 25 costliest functions) on stderr."""
    if not profile:
        yield
        return
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)


async def _run(
    url: str, tables: int, concurrency: int, workers: int | None, profile: bool = False
) -> None:
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
    latencies: list[float] = []
    queue = iter(range(tables))
    moves = 0
    start = time.perf_counter()
    async with aiohttp.ClientSession() as session:

        async def player() -> None:
            nonlocal moves
            for _ in queue:
                played = await _play(session, url, manifest, latencies)
                moves += played

        await asyncio.gather(*(player() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    requests = len(latencies)

    start = time.perf_counter()
    report = await audit_tables(url, PublicKey.from_text(manifest.root), referee)
    audit_seconds = time.perf_counter() - start
    async with LeagueClient(url) as client:
        feed: list[FeedEvent] = []
        after = -1
        while page := (await client.events(after, 1000, service="tables")).events:
            feed += page
            after = page[-1].seq
    start = time.perf_counter()
    checker = TablesChecker(manifest, referee)
    with _profiled(profile):
        checker.add(feed)
    checked = checker.report().replayed
    checked_seconds = time.perf_counter() - start
    start = time.perf_counter()
    offline = _offline(feed)
    offline_seconds = time.perf_counter() - start
    assert isinstance(report, TablesReport), report
    judged, recorded = _drill_times(feed)
    drills = (
        f"{len(judged)} answered at once: judged p50 {statistics.median(judged):.3f} s, max "
        f"{max(judged):.3f} s; to their own events' times p50 {statistics.median(recorded):.3f} "
        f"s, max {max(recorded):.3f} s"
        if judged
        else "none reached"
    )
    print_table(
        f"witnessed tables at Chair I, {concurrency} players at once, {workers_text(workers)}",
        [
            ("tables played", f"{tables} ({moves} moves of the player, {requests} requests)"),
            ("moves/s", f"{moves / elapsed:,.0f} (requests/s {requests / elapsed:,.0f})"),
            (
                "request latency",
                f"p50 {statistics.median(latencies) * 1000:.1f} ms, "
                f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms",
            ),
            (
                "audit",
                f"{report.replayed} tables, {report.events} events in {audit_seconds:.2f} s "
                f"({report.replayed / audit_seconds:,.0f} tables/s, fetching included)",
            ),
            (
                "audit, checks only",
                f"{checked} tables in {checked_seconds:.2f} s "
                f"({checked / checked_seconds:,.0f} tables/s: the fetched feed, no HTTP)",
            ),
            (
                "offline replay",
                f"{offline} tables in {offline_seconds:.2f} s "
                f"({offline / offline_seconds:,.0f} tables/s)",
            ),
            ("player's drills", drills),
            (
                "audit / offline",
                f"{(report.replayed / audit_seconds) / (offline / offline_seconds):.0%} "
                f"(checks only {(checked / checked_seconds) / (offline / offline_seconds):.0%})",
            ),
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the audit's checks (on stderr)"
    )
    args = parser.parse_args()
    with served_league(workers=args.workers) as served:
        asyncio.run(_run(served.url, args.tables, args.concurrency, args.workers, args.profile))


if __name__ == "__main__":
    main()
