"""The floor: what an operation cannot cost less than on this machine, measured in the run.

Each service bench prints the CPU an operation cost (the server's processes and PostgreSQL's,
from /proc) beside its *floor*: a sum of primitive costs measured here, in the same run, on
the same cores and under the same load, so the ratio between the two stays comparable from
one run (and one load) to the next where the raw rates do not. The primitives (:data:`UNITS`):

- ``verify``, ``sign``: one Ed25519 verification and signature (PyNaCl, this process's CPU),
  over 256 keys and messages of a typical signed object's size, cycled: one fixed message
  is not the average (libsodium's verification is variable-time);
- ``round_trip``: one PostgreSQL round trip, asyncpg's ``SELECT 1`` on the database the league
  uses: this process's CPU (the client's side: what a server process pays) and the database
  server's (its processes' CPU from /proc; not measured on ``DATABASE_URL``'s server);
- ``request``: one HTTP request (a typical body POSTed, a small JSON answer) to a trivial
  aiohttp handler served as the league is (``services.http.serving.serving``) from a child
  process: that process's CPU;
- ``parse``: one pydantic parse of a typical request body (a stamp request of one print,
  ``model_validate_json`` of its bytes);
- ``canonical``: the canonical bytes of the same body (orjson with sorted keys, as the
  protocol's fast path writes them).

An operation's floor is a :class:`Recipe` of these: e.g. a print stamped in a batch of 50 is
``Recipe(sign=2, verify=1/50, request=1/50, parse=1/50, round_trip=1/50, canonical=2)``
(the certificate and its event signed, the request verified, and its share of one request
and one commit). A recipe prints as its formula, so the table says what the floor counts.

Run alone (``python -m bench.floor``) it prints the primitives measured on a league's
database (an embedded PostgreSQL in a temporary directory, or a scratch database on
DATABASE_URL). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp
import asyncpg
import nacl.signing
import orjson
from aiohttp import web

from apiclient.league import stamp_request
from bench.league_setup import Served, print_table, process_tree_cpu_seconds, served_league
from ledger.canonical import domain_tag
from ledger.keys import SigningKey
from ledger.manifest import build_manifest
from ledger.requests import StampRequest

#: The primitives a floor is made of, in the order a formula names them.
UNITS = ("verify", "sign", "round_trip", "request", "parse", "canonical")
#: How each primitive reads in a formula and in the table.
LABELS = {
    "verify": "Ed25519 verify",
    "sign": "Ed25519 sign",
    "round_trip": "PostgreSQL round trip (SELECT 1)",
    "request": "HTTP request (trivial handler)",
    "parse": "pydantic parse of a body",
    "canonical": "canonical bytes of a body",
}


@dataclass(frozen=True, slots=True)
class Cost:
    """CPU seconds: the server's processes and PostgreSQL's."""

    server: float = 0.0
    database: float = 0.0

    @property
    def total(self) -> float:
        return self.server + self.database

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.server + other.server, self.database + other.database)

    def __mul__(self, factor: float) -> Cost:
        return Cost(self.server * factor, self.database * factor)

    def __truediv__(self, count: float) -> Cost:
        return Cost(self.server / count, self.database / count)


@dataclass(frozen=True)
class Recipe:
    """An operation's floor as counts of primitives (fractions for a share of one)."""

    counts: Mapping[str, float] = field(default_factory=dict)

    def __init__(self, counts: Mapping[str, float] | None = None, **more: float) -> None:
        merged = {**(counts or {}), **more}
        unknown = set(merged) - set(UNITS)
        if unknown:
            raise ValueError(f"not primitives of a floor: {sorted(unknown)}")
        object.__setattr__(self, "counts", {u: merged[u] for u in UNITS if merged.get(u)})

    def __add__(self, other: Recipe) -> Recipe:
        return Recipe({u: self.counts.get(u, 0) + other.counts.get(u, 0) for u in UNITS})

    def __mul__(self, factor: float) -> Recipe:
        return Recipe({u: n * factor for u, n in self.counts.items()})

    def formula(self) -> str:
        return (
            " + ".join(f"{_count(n)} {unit.replace('_', ' ')}" for unit, n in self.counts.items())
            or "nothing"
        )


def _count(n: float) -> str:
    return (
        f"{n:g}"
        if n >= 0.1 or n == 0
        else f"1/{1 / n:.0f}"
        if abs(1 / n - round(1 / n)) < 0.01
        else f"{n:.3f}"
    )


@dataclass(frozen=True)
class Floor:
    """The primitives as measured in this run (CPU a call) and the load meanwhile."""

    units: Mapping[str, Cost]
    #: Whether the database's CPU was measured (an embedded PostgreSQL this bench started).
    database_measured: bool

    def cost(self, recipe: Recipe) -> Cost:
        total = Cost()
        for unit, n in recipe.counts.items():
            total = total + self.units[unit] * n
        return total

    def rows(self) -> list[tuple[str, str]]:
        """The primitives, one row each (µs of CPU a call)."""
        return [
            (f"floor: {LABELS[unit]}", _split(cost, self.database_measured))
            for unit, cost in self.units.items()
        ]

    def compare(self, label: str, spent: Cost, operations: int, recipe: Recipe) -> tuple[str, str]:
        """One row: the CPU an operation cost (``spent`` over ``operations``), and its ratio
        to the floor of ``recipe``."""
        if operations <= 0:
            return (label, "no operation measured")
        each, floor = spent / operations, self.cost(recipe)
        measured = self.database_measured
        ratio = each.total / floor.total if floor.total else float("inf")
        return (
            label,
            f"CPU an operation {_split(each, measured)} = {ratio:.1f}x the floor "
            f"{_split(floor, measured)} = {recipe.formula()}",
        )


def _split(cost: Cost, database: bool) -> str:
    if not database:
        return f"{_us(cost.server)} (server; database n/a)"
    if not cost.database:
        return _us(cost.server)
    return f"{_us(cost.total)} (server {_us(cost.server)} + database {_us(cost.database)})"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 0.99995e-3 else f"{seconds * 1e3:,.2f} ms"


# -- the operations' floors ----------------------------------------------------------------------


def signed(verify: float = 0, sign: float = 0, **more: float) -> Recipe:
    """A recipe whose every signature verified or made needs its object's canonical bytes."""
    canonical = verify + sign + more.pop("canonical", 0)
    return Recipe({"verify": verify, "sign": sign, "canonical": canonical, **more})


def stamp_recipe(batch: int) -> Recipe:
    """A print stamped in a request of ``batch``: its certificate and its event signed, its
    share of the request (verified, parsed, answered) and of one commit."""
    return signed(
        sign=2, verify=1 / batch, request=1 / batch, parse=1 / batch, round_trip=1 / batch
    )


def hop_recipe(slip: int) -> Recipe:
    """A hop notarized in a slip of ``slip`` chains: its endorsement verified (the certificate
    before it was verified once, when the notary followed the mint), its event and its
    receipt signed, its share of the request and of one commit."""
    return signed(verify=1, sign=2, request=1 / slip, parse=1 / slip, round_trip=1 / slip)


def claim_recipe(notes: float) -> Recipe:
    """A claim answered with ``notes`` notes: the request verified, each note's certificate
    and event signed, one request, one commit."""
    return signed(verify=1, sign=2 * notes, request=1, parse=1, round_trip=1)


def buy_recipe(paid: float, change: float) -> Recipe:
    """A purchase paid with ``paid`` notes, with ``change`` notes of change, as three commits
    of the treasury, one of the notary and one of the mint: verified, the request and each
    payment's endorsement (by the treasury, then the notary), each receipt, the order (by the
    mint) and the print delivered; signed, the treasury's events (opened, notarized,
    order-signed, delivered, closed, a return a note), the order, each change note's
    certificate and event, the notary's hop events and receipts, the print's certificate and
    event; the buyer's request and the two internal calls (each a request and a parse, and
    the treasury's parse of their answers)."""
    return signed(
        verify=3 + 3 * paid, sign=8 + 3 * paid + 2 * change, request=3, parse=5, round_trip=5
    )


def read_recipe() -> Recipe:
    """A read (``GET /ledger``, ``/provenance``): one request, one round trip."""
    return Recipe(request=1, round_trip=1)


# -- what a run measures ------------------------------------------------------------------------


def loadavg() -> str:
    """The machine's load average (1, 5, 15 minutes), as a table cell."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far (Linux's /proc/stat; 0 elsewhere)."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0, 0
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def machine_shares(
    busy: float, seconds: float, server: float | None, database: float | None, client: float
) -> str:
    """How busy the whole machine was (``busy``, a fraction of its ticks, from
    :func:`machine_ticks`) over ``seconds``, and the CPU seconds of the server, the database
    (None: not measured) and the bench's client as shares of all the cores: when it is near
    100%, more workers have no core to run on."""
    cores = os.cpu_count() or 1

    def share(cpu: float | None) -> str:
        return "n/a" if cpu is None else f"{100 * cpu / seconds / cores:3.0f}%"

    return (
        f"{100 * busy:3.0f}% busy of {cores} cores (server {share(server)}, database "
        f"{share(database)}, client {share(client)}, the rest other work)"
    )


class Spent:
    """CPU spent by a served league between :meth:`start` and :meth:`stop` (server processes
    and children; the embedded PostgreSQL when the bench started it)."""

    def __init__(self, served: Served | None) -> None:
        self.served = served
        self.server = self.database = 0.0

    def start(self) -> Spent:
        if self.served is not None:
            self.server = self.served.cpu_seconds()
            self.database = self.served.database_cpu_seconds()
        return self

    def stop(self) -> Cost:
        if self.served is None:
            return Cost()
        return Cost(
            self.served.cpu_seconds() - self.server,
            self.served.database_cpu_seconds() - self.database,
        )


def typical_body() -> tuple[bytes, dict[str, object]]:
    """A stamp request of one print (signed, proof of work nil), as bytes and as its JSON."""
    root, mint, treasury, notary, owner = (SigningKey(bytes([n]) * 32) for n in range(1, 6))
    manifest = build_manifest(
        root,
        league="floor",
        name="Floor",
        mint=mint.public,
        treasury=treasury.public,
        notary=notary.public,
    )
    wire = stamp_request(owner, manifest, [("Tally", "standard")], works=[1]).to_wire()
    return json.dumps(wire).encode(), wire


def _cpu_per_call(operation: Callable[[], object], seconds: float) -> float:
    """CPU seconds (this process) a call of ``operation``, over about ``seconds``."""
    calls, start, wall = 0, time.process_time(), time.perf_counter()
    while time.perf_counter() - wall < seconds:
        for _ in range(100):
            operation()
        calls += 100
    return (time.process_time() - start) / calls


def crypto_costs(seconds: float, size: int = 400, *, signs: bool = True) -> tuple[float, float]:
    """CPU seconds of one Ed25519 verification and one signature (not measured, 0, unless
    ``signs``), over 256 keys and messages of ``size`` bytes, cycled."""
    keys = [nacl.signing.SigningKey(bytes([n, 7]) * 16) for n in range(256)]
    messages = [b"CZ1/event\n" + bytes([n]) * size for n in range(256)]
    signed = [(k.verify_key, m, k.sign(m).signature) for k, m in zip(keys, messages, strict=True)]
    verifying = itertools.cycle(signed)
    signing = itertools.cycle(list(zip(keys, messages, strict=True)))

    def verify() -> None:
        key, message, signature = next(verifying)
        key.verify(message, signature)

    def sign() -> None:
        key, message = next(signing)
        key.sign(message)

    return _cpu_per_call(verify, seconds), _cpu_per_call(sign, seconds) if signs else 0.0


def body_costs(seconds: float) -> tuple[float, float]:
    """CPU seconds of one pydantic parse and one canonical encoding of the typical body."""
    body, wire = typical_body()
    tag = domain_tag(StampRequest.KIND)
    unsigned = {k: v for k, v in wire.items() if k != "sig"}
    return (
        _cpu_per_call(lambda: StampRequest.model_validate_json(body), seconds),
        _cpu_per_call(lambda: tag + orjson.dumps(unsigned, option=orjson.OPT_SORT_KEYS), seconds),
    )


async def round_trip_cost(database_url: str, database_cpu: Callable[[], float], count: int) -> Cost:
    """CPU of one ``SELECT 1`` on the database at ``database_url``: asyncpg's side in this
    process, and the database server's (``database_cpu``: its CPU seconds so far)."""
    connection = await asyncpg.connect(database_url)
    try:
        for _ in range(50):  # warm: the statement prepared and cached
            await connection.fetchval("SELECT 1")
        own, database = time.process_time(), database_cpu()
        for _ in range(count):
            await connection.fetchval("SELECT 1")
        return Cost(time.process_time() - own, database_cpu() - database) / count
    finally:
        await connection.close()


@contextlib.contextmanager
def trivial_server() -> Iterator[tuple[str, int]]:
    """A trivial aiohttp handler served as the league is, from a child process: its URL and
    process id."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.floor", "--serve-trivial"],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith("serving on "):
            raise SystemExit(f"the floor's trivial server did not start: {line!r}")
        yield line.removeprefix("serving on ").split()[0], process.pid
    finally:
        process.terminate()
        process.wait()


async def request_cost(count: int, in_flight: int = 8) -> float:
    """The trivial server's CPU seconds per request: the typical body POSTed, ``in_flight``
    at a time over kept-alive connections, a small JSON answer read."""
    body, _ = typical_body()
    with trivial_server() as (url, pid):
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=in_flight)
        ) as session:

            async def send(n: int) -> None:
                for _ in range(n):
                    async with session.post(
                        url + "/trivial", data=body, headers={"Content-Type": "application/json"}
                    ) as response:
                        await response.read()

            await asyncio.gather(*(send(20) for _ in range(in_flight)))  # warm
            before = process_tree_cpu_seconds(pid)
            await asyncio.gather(*(send(count // in_flight) for _ in range(in_flight)))
            return (process_tree_cpu_seconds(pid) - before) / (count // in_flight * in_flight)


def measure(served: Served | None, *, quick: bool = False) -> Floor:
    """The primitives, measured now (about 4 s; ``quick`` about 1.5 s), the round trip on
    ``served``'s database (not measured without one)."""
    database = served.database if served is not None else None
    floor = measure_local(
        database,
        served.database_cpu_seconds if served else None,
        quick=quick,
        measured=served is not None and served.pgdata is not None,
    )
    request = asyncio.run(request_cost(1_000 if quick else 4_000))
    units = dict(floor.units)
    units["request"] = Cost(request)
    return Floor({u: units[u] for u in UNITS if u in units}, floor.database_measured)


def measure_local(
    database_url: str | None,
    database_cpu: Callable[[], float] | None,
    *,
    quick: bool = False,
    measured: bool = True,
) -> Floor:
    """The primitives but the HTTP request (a bench that serves nothing), the round trip on
    the database at ``database_url`` when given (``database_cpu``: its server's CPU seconds
    so far; ``measured``: whether that is known, not 0 for want of /proc)."""
    seconds = 0.2 if quick else 0.6
    verify, sign = crypto_costs(seconds)
    parse, canonical = body_costs(seconds / 2)
    units = {"verify": Cost(verify), "sign": Cost(sign)}
    if database_url is not None:
        units["round_trip"] = asyncio.run(
            round_trip_cost(database_url, database_cpu or (lambda: 0.0), 3_000 if quick else 15_000)
        )
    units |= {"parse": Cost(parse), "canonical": Cost(canonical)}
    return Floor(units, measured and database_url is not None and database_cpu is not None)


# -- the trivial server (a child process) -------------------------------------------------------


async def _serve_trivial() -> None:
    from services.http.serving import serving  # the league's own serving

    async def trivial(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/trivial", trivial)
    async with serving(app, "127.0.0.1", 0) as runner:
        host, port = runner.public_addresses[0][:2]
        print(f"serving on http://{host}:{port}", flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 1 s of measuring, not 3")
    parser.add_argument("--serve-trivial", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_trivial:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve_trivial())
        return
    start = loadavg()
    with served_league(["mint"]) as served:
        floor = measure(served, quick=args.quick)
    print_table(
        "the floor's primitives (CPU a call)",
        [
            *floor.rows(),
            ("load average at start", start),
            ("load average at end", loadavg()),
        ],
    )


if __name__ == "__main__":
    main()
