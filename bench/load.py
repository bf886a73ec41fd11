"""A mixed load on a whole league, from a second process on loopback, ramping concurrency.

Run: ``python -m bench.load [--quick | --long] [--separate | --url URL] [--workers N]`` (or
``python bench/load.py ...``); ``--workers`` is passed to each ``league serve`` started here
(its default: one worker per core), and the table says which served.

It serves a league (``league serve``: every service in one server, proof of work and
per-source limits published as nil; see ``bench/league_setup.py``) from a child process, or
with ``--separate`` as three processes (``league serve mint``, ``treasury``, ``notary``) each
on its own database, finding each other through the manifest's URLs and talking over HTTP
(target: within 30% of the all-in-one figure), or uses the league already answering
at ``--url``, and from this process sends (to the service each request is for) a mix of

- ``stamp``: ``POST /mint/stamp``, one print, a fresh key (bench/mint.py's builder);
- ``claim``: ``POST /treasury/claim``, 50 marks, a fresh key;
- ``buy``: ``POST /treasury/buy``, a common single (M30) paid with the 50 marks a key claimed
  before the step, the whole saga (notary, mint, change);
- ``notarize``: ``POST /notary/endorsements``, a slip of one chain: a print stamped before the
  step, endorsed once (bench/notary.py's builders);
- ``ledger``: ``GET /ledger``, the census;
- ``provenance``: ``GET /provenance/SERIAL`` of a print stamped before the step;

in the proportions of :data:`MIX`, shuffled, with 4, 8, 16, 32 then 64 requests in flight
(closed loop: each worker sends its next request when its last is answered). Each step's
prints are stamped, its keys' claims made and every request signed and serialized before the
step's clock starts, so the step measures the server, not this client. A step ends when its
requests are sent or its time is up, whichever is first (``--quick`` 300 requests or 10 s a
step, default 3,000 or 30 s, ``--long`` 10,000 or 90 s).

Per step: requests/s overall and per endpoint, p50/p95/p99 latency per endpoint, answers by
status, the CPU time the server process (every thread), the embedded database (when this
bench started it) and this client used, and how busy the whole machine was. Then each
endpoint alone (8 in flight, a tenth of a step's requests, at least 50): its rate, latency
and CPU a request, which says where the mixed load's time goes. After the ramp: the first
step where errors, or a p99 over 100 ms, begin; whether any answer was a 5xx. Target (issue
13): >= 1,000 mixed requests/s at p99 <= 100 ms on this 2-core machine, zero 5xx. The bench
prints the figures; it never fails on them.

With a league served here, every step and every endpoint alone also says the ratio of its
CPU a request (server and database) to the floor measured in the same run (bench/floor.py:
each endpoint's recipe — a print stamped alone, a claim, a buy with change, a hop in a slip
of one, a read — weighted by the requests the step answered; the notes a claim issues and a
buy gets as change counted in the run); the floor's primitives and the load average at the
start and the end close the table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    import sys

    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp

from apiclient.league import LeagueClient
from bench.floor import (
    Cost,
    Floor,
    Recipe,
    buy_recipe,
    claim_recipe,
    hop_recipe,
    loadavg,
    machine_shares,
    machine_ticks,
    measure,
    read_recipe,
    stamp_recipe,
)
from bench.league_setup import Served, percentile, print_table, served_league, workers_text
from bench.mint import requests as stamp_bodies
from bench.notary import slips, stamp
from ledger.api.treasury import BuyAnswer, ClaimAnswer, buy_request, claim_request
from ledger.catalog import PLAYING, Rarity
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest

#: Requests of each endpoint in every 20 of the mix.
MIX = {"stamp": 3, "claim": 3, "buy": 2, "notarize": 4, "ledger": 4, "provenance": 4}
#: The service each endpoint is sent to (where it answers when the services run apart).
SERVICE_OF = {
    "stamp": "mint",
    "ledger": "mint",
    "claim": "treasury",
    "buy": "treasury",
    "notarize": "notary",
    "provenance": "notary",
}
#: Requests in flight, step by step.
STEPS = (4, 8, 16, 32, 64)
#: (requests, seconds) at most per step, by size.
SIZES = {"quick": (300, 10.0), "default": (3_000, 30.0), "long": (10_000, 90.0)}
#: The common titles (M30 singles) a buy asks for, round robin.
COMMON = [card.name for card in PLAYING if card.rarity is Rarity.COMMON]
#: Requests in flight when each endpoint is measured alone.
ALONE = 8
#: The latency bound of the target (seconds).
BOUND = 0.100
JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class Call:
    """One prepared request: which endpoint it measures, and what is sent."""

    endpoint: str
    method: str
    path: str
    body: bytes | None = None

    @property
    def service(self) -> str:
        return SERVICE_OF[self.endpoint]


@dataclass(slots=True)
class Step:
    """What one step measured."""

    in_flight: int
    #: Whether the server's and the database's CPU are measured (a league served here).
    local: bool = True
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[tuple[str, int], str] = field(default_factory=dict)
    server_cpu: float = 0.0
    database_cpu: float = 0.0
    client_cpu: float = 0.0
    machine_busy: float = 0.0
    #: The answers of the buys that went through (their change counted after the clock).
    bought: list[bytes] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def errors(self) -> int:
        return sum(n for c in self.statuses.values() for s, n in c.items() if s >= 300)

    def server_errors(self) -> int:
        return sum(n for c in self.statuses.values() for s, n in c.items() if s >= 500)

    def worst_p99(self) -> float:
        return max(percentile(v, 0.99) for v in self.latencies.values())


@dataclass(slots=True)
class Claimed:
    """The notes the run's claims were answered with: what a claim issues, a buy pays."""

    claims: int = 0
    notes: int = 0

    @property
    def per_claim(self) -> float:
        return self.notes / self.claims if self.claims else 1.0


CLAIMED = Claimed()


def recipe_of(step: Step) -> Recipe:
    """The floor of the step's average request: each endpoint's recipe, weighted by the
    requests it answered."""
    notes = CLAIMED.per_claim
    change = (
        (sum(len(BuyAnswer.model_validate_json(t).change) for t in step.bought) / len(step.bought))
        if step.bought
        else 0.0
    )
    recipes = {
        "stamp": stamp_recipe(1),
        "claim": claim_recipe(notes),
        "buy": buy_recipe(notes, change),
        "notarize": hop_recipe(1),
        "ledger": read_recipe(),
        "provenance": read_recipe(),
    }
    total = Recipe()
    for endpoint, values in step.latencies.items():
        total = total + recipes[endpoint] * len(values)
    return total * (1 / max(1, step.count))


def floor_row(floor: Floor | None, step: Step, label: str) -> list[tuple[str, str]]:
    """The step's CPU a request against its floor (none for a league not served here)."""
    if floor is None or not step.local:
        return []
    return [
        floor.compare(label, Cost(step.server_cpu, step.database_cpu), step.count, recipe_of(step))
    ]


async def claim_notes(
    session: aiohttp.ClientSession,
    url: str,
    manifest: LeagueManifest,
    owners: list[SigningKey],
    tag: str,
) -> list[ClaimAnswer]:
    """Each owner claims 50 marks (before the clock: what the step's buys pay with)."""
    now = int(time.time())
    bodies = iter(enumerate(owners))
    answers: dict[int, ClaimAnswer] = {}

    async def worker() -> None:
        for i, owner in bodies:
            body = claim_request(owner, manifest, 50, request_id=f"{tag}-p-{i:08d}", at=now)
            async with session.post(
                f"{url}/treasury/claim", data=json.dumps(body.to_wire()), headers=JSON
            ) as response:
                text = await response.text()
                if response.status != 200:
                    raise SystemExit(f"a setup claim was refused: {response.status} {text}")
            answers[i] = ClaimAnswer.model_validate_json(text)
            CLAIMED.claims += 1
            CLAIMED.notes += len(answers[i].notes)

    await asyncio.gather(*(worker() for _ in range(16)))
    return [answers[i] for i in range(len(owners))]


async def prepare(
    session: aiohttp.ClientSession,
    league: LeagueClient,
    url: str,
    manifest: LeagueManifest,
    n: dict[str, int],
    tag: str,
) -> list[Call]:
    """``n[endpoint]`` requests of each endpoint, shuffled, every one signed and serialized;
    the prints and notes they need are stamped (at ``league``, the mint) and claimed here (at
    ``url``, the treasury)."""
    n = {endpoint: n.get(endpoint, 0) for endpoint in MIX}
    now = int(time.time())
    wanted = max(n["notarize"], n["provenance"])
    held = await stamp(league, manifest, wanted, 8) if wanted else []
    buyers = [SigningKey.generate() for _ in range(n["buy"])]
    claimed = await claim_notes(session, url, manifest, buyers, tag)
    treasury = PublicKey.from_text(manifest.treasury)
    calls = [
        Call("stamp", "POST", "/mint/stamp", body) for body in stamp_bodies(manifest, n["stamp"], 1)
    ]
    calls += [
        Call(
            "claim",
            "POST",
            "/treasury/claim",
            json.dumps(
                claim_request(
                    SigningKey.generate(),
                    manifest,
                    50,
                    request_id=f"{tag}-c-{i:08d}",
                    at=now,
                ).to_wire()
            ).encode(),
        )
        for i in range(n["claim"])
    ]
    calls += [
        Call(
            "buy",
            "POST",
            "/treasury/buy",
            json.dumps(
                buy_request(
                    owner,
                    manifest,
                    COMMON[i % len(COMMON)],
                    [
                        endorse(Chain(certificate=note, endorsements=()), owner, treasury, now)
                        for note in answer.notes
                    ],
                    purchase_id=f"{tag}-b-{i:08d}",
                    at=now,
                ).to_wire()
            ).encode(),
        )
        for i, (owner, answer) in enumerate(zip(buyers, claimed, strict=True))
    ]
    receiver = SigningKey.generate().public
    calls += [
        Call("notarize", "POST", "/notary/endorsements", body)
        for body in slips(held[: n["notarize"]], receiver, 1)
    ]
    calls += [Call("ledger", "GET", "/ledger") for _ in range(n["ledger"])]
    calls += [
        Call("provenance", "GET", f"/provenance/{h.chain.certificate.serial}")
        for h in held[: n["provenance"]]
    ]
    random.Random(tag).shuffle(calls)
    return calls


async def drive(
    session: aiohttp.ClientSession,
    urls: dict[str, str],
    calls: list[Call],
    step: Step,
    seconds: float,
    served: Served | None,
) -> None:
    """Send ``calls`` with ``step.in_flight`` workers until they are sent or time is up, each
    to its service's URL in ``urls``."""
    pending: Iterator[Call] = iter(calls)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds

    async def worker() -> None:
        for call in pending:
            if loop.time() >= deadline:
                return
            started = time.perf_counter()
            async with session.request(
                call.method,
                urls[call.service] + call.path,
                data=call.body,
                headers=JSON if call.body else None,
            ) as response:
                text = await response.read()
            step.latencies[call.endpoint].append(time.perf_counter() - started)
            step.statuses[call.endpoint][response.status] += 1
            if call.endpoint == "buy" and response.status == 200:
                step.bought.append(text)
            if response.status >= 300:
                step.examples.setdefault(
                    (call.endpoint, response.status), text[:300].decode(errors="replace")
                )

    server = served.cpu_seconds() if served else 0.0
    database = served.database_cpu_seconds() if served else 0.0
    own, (busy, total) = time.process_time(), machine_ticks()
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(step.in_flight)))
    step.seconds = time.perf_counter() - start
    step.client_cpu = time.process_time() - own
    step.local = served is not None
    step.server_cpu = (served.cpu_seconds() - server) if served else 0.0
    step.database_cpu = (served.database_cpu_seconds() - database) if served else 0.0
    busy2, total2 = machine_ticks()
    step.machine_busy = (busy2 - busy) / max(1, total2 - total)


def mixed(requests: int) -> dict[str, int]:
    """``requests`` in the proportions of :data:`MIX`."""
    share = sum(MIX.values())
    return {endpoint: max(1, requests * weight // share) for endpoint, weight in MIX.items()}


def alone_row(endpoint: str, step: Step) -> tuple[str, str]:
    values = step.latencies[endpoint]
    cpu = (
        f"server {1e3 * step.server_cpu / len(values):5.2f} ms, database "
        f"{1e3 * step.database_cpu / len(values):5.2f} ms"
        if step.local
        else "n/a (--url)"
    )
    return (
        f"  {endpoint} alone, {step.in_flight} in flight ({len(values)})",
        f"{len(values) / step.seconds:7.0f} req/s   p50 {1000 * percentile(values, 0.5):6.1f}"
        f"   p99 {1000 * percentile(values, 0.99):6.1f} ms   CPU a request: {cpu}; machine "
        f"{100 * step.machine_busy:3.0f}% busy   non-2xx {step.errors()}",
    )


def step_rows(step: Step) -> list[tuple[str, str]]:
    count = step.count

    def per(cpu: float) -> str:
        return f"{1e3 * cpu / count:4.2f} ms" if step.local else "n/a"

    rows = [
        (
            f"{step.in_flight:>2} in flight: {count:,} requests in {step.seconds:.1f} s",
            f"{count / step.seconds:7.0f} req/s   p99 (all) "
            f"{1000 * percentile([x for v in step.latencies.values() for x in v], 0.99):6.1f} ms   "
            f"non-2xx {step.errors()}   5xx {step.server_errors()}   CPU a request: server "
            f"{per(step.server_cpu)}, database {per(step.database_cpu)}, client "
            f"{1e3 * step.client_cpu / count:4.2f} ms; machine "
            + machine_shares(
                step.machine_busy,
                step.seconds,
                step.server_cpu if step.local else None,
                step.database_cpu if step.local else None,
                step.client_cpu,
            ),
        )
    ]
    for endpoint in MIX:
        values = step.latencies.get(endpoint)
        if not values:
            continue
        statuses = " ".join(f"{s}x{n}" for s, n in sorted(step.statuses[endpoint].items()))
        rows.append(
            (
                f"    {endpoint}",
                f"{len(values) / step.seconds:7.0f} req/s   "
                f"p50 {1000 * percentile(values, 0.5):6.1f}"
                f"   p95 {1000 * percentile(values, 0.95):6.1f}   p99 "
                f"{1000 * percentile(values, 0.99):6.1f} ms   {statuses}",
            )
        )
    return rows


def verdict(steps: list[Step]) -> list[tuple[str, str]]:
    errors = next((s for s in steps if s.errors()), None)
    slow = next((s for s in steps if s.worst_p99() > BOUND), None)
    good = [s for s in steps if not s.errors() and s.worst_p99() <= BOUND]
    best = max(good, key=lambda s: s.count / s.seconds, default=None)
    fives = sum(s.server_errors() for s in steps)
    rows = [
        ("errors (non-2xx) begin", f"at {errors.in_flight} in flight" if errors else "nowhere"),
        (
            "an endpoint's p99 > 100 ms begins",
            f"at {slow.in_flight} in flight" if slow else "nowhere",
        ),
        (
            "best step with zero errors and every p99 <= 100 ms",
            f"{best.count / best.seconds:,.0f} req/s at {best.in_flight} in flight"
            if best
            else "none",
        ),
        ("5xx answers (target: zero)", f"{fives}: {'PASS' if not fives else 'FAIL'}"),
    ]
    examples = {k: v for s in steps for k, v in s.examples.items()}
    rows += [
        (f"  e.g. {endpoint} {status}", text)
        for (endpoint, status), text in sorted(examples.items())[:6]
    ]
    return rows


async def run(
    urls: dict[str, str], served: Served | None, size: str, floor: Floor | None = None
) -> list[tuple[str, str]]:
    """The ramp and each endpoint alone against the services at ``urls`` (by service)."""
    requests, seconds = SIZES[size]
    connector = aiohttp.TCPConnector(limit=max(STEPS) + 16)
    timeout = aiohttp.ClientTimeout(total=60)
    steps: list[Step] = []
    rows: list[tuple[str, str]] = []
    treasury = urls["treasury"]
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
        LeagueClient(urls["mint"], session=session) as league,
    ):
        manifest = await league.manifest()
        tag = f"load-{int(time.time())}"
        await drive(
            session,
            urls,
            await prepare(session, league, treasury, manifest, mixed(40), f"{tag}-warm"),
            Step(4),
            seconds,
            served,
        )
        for in_flight in STEPS:
            calls = await prepare(
                session, league, treasury, manifest, mixed(requests), f"{tag}-{in_flight}"
            )
            step = Step(in_flight)
            await drive(session, urls, calls, step, seconds, served)
            steps.append(step)
            rows += step_rows(step)
            rows += floor_row(floor, step, "    CPU a request against the floor")
        rows += verdict(steps)
        rows.append(("where the time goes: each endpoint alone", ""))
        for endpoint in MIX:
            calls = await prepare(
                session,
                league,
                treasury,
                manifest,
                {endpoint: max(50, requests // 10)},
                f"{tag}-{endpoint}",
            )
            step = Step(ALONE)
            await drive(session, urls, calls, step, seconds, served)
            rows.append(alone_row(endpoint, step))
            rows += floor_row(floor, step, f"    {endpoint}: CPU against the floor")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_const",
        const="quick",
        dest="size",
        help="{} requests or {:.0f} s a step (a smoke run)".format(*SIZES["quick"]),
    )
    size.add_argument(
        "--long",
        action="store_const",
        const="long",
        dest="size",
        help="{} requests or {:.0f} s a step".format(*SIZES["long"]),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--url",
        help="a league already running (its gateway or all-in-one "
        "server) instead of one started here; its policies must let fresh keys "
        "stamp and claim (proof of work is solved here, before the clock)",
    )
    where.add_argument(
        "--separate",
        action="store_true",
        help="serve the league here as three processes (mint, treasury, "
        "notary), each on its own database, instead of one `league serve`",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="league serve --workers N (default: league serve's, one per core)",
    )
    args = parser.parse_args()
    size_name = args.size or "default"
    start = loadavg()
    with contextlib.ExitStack() as stack:
        served = (
            None
            if args.url
            else stack.enter_context(served_league(apart=args.separate, workers=args.workers))
        )
        urls = {
            service: args.url.rstrip("/") if args.url else served.url_of(service)  # type: ignore[union-attr]
            for service in set(SERVICE_OF.values())
        }
        floor = measure(served, quick=size_name == "quick") if served is not None else None
        rows = asyncio.run(run(urls, served, size_name, floor))
    if floor is not None:
        rows += floor.rows()
    if served is not None:
        rows.append(("served by", workers_text(args.workers)))
    rows += [("load average at start", start), ("load average at end", loadavg())]
    how = (
        "three processes, three databases" if args.separate else (args.url or "one `league serve`")
    )
    print_table(
        f"mixed load ({size_name}; {how}: "
        f"{', '.join(f'{w} {e}' for e, w in MIX.items())} in every {sum(MIX.values())})",
        rows,
    )


if __name__ == "__main__":
    main()
