"""What the service benches share: a league served from a child process, and the table.

:func:`served_league` creates a league in a temporary LEAGUE_HOME (on DATABASE_URL if set — a
scratch database is created in that server and dropped afterwards — else on an embedded
PostgreSQL in the temporary directory), starts ``league serve`` on a free port of 127.0.0.1
(the services that follow another, as the notary follows the mint, find it at the server's
own address) and yields its URL and process; everything is stopped and removed on exit.

With ``apart=True`` it runs the league as a separate-process deployment does
(docs/operations.md, "Separate processes"): ``league serve mint``, ``league serve treasury`` and
``league serve notary`` as three child
processes, each on its own database of the same server (three scratch databases), finding each
other through the URLs the manifest names (``league init --url``), no ``*_URL`` setting.

What a bench charges an operation (bench/floor.py compares it with the floor): the CPU of the
server's processes and of every child they start (a server's workers), and of the embedded
PostgreSQL's postmaster and backends, read from /proc (:func:`process_tree_cpu_seconds`,
:func:`postgres_cpu_seconds`; the database's is not measured on DATABASE_URL's server).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ledger.catalog import PLAYING, Rarity
from services.kernel.database import scratch_database, start_embedded, stop_embedded

LEAGUE = [str(Path(sys.executable).parent / "league")]
#: The services a league runs, each a process of its own when served apart.
SERVICES = ("mint", "treasury", "notary")

#: Policies of a bench league that measures the services' own cost: proof of work (the
#: client's cost, measured by bench/drain.py) and the per-source bucket (every bench client
#: is 127.0.0.1) are published as nil.
SERVICE_COST_POLICIES = (
    "stamp_work=1",
    "stamp_work_rise=1",
    "source_prints_per_minute=1000000",
    "source_prints_burst=1000000",
)


def titles() -> Iterator[tuple[str, str]]:
    """The standard runs of the common and uncommon titles, round robin: 57,000 prints to
    draw from, so no run is exhausted and every presented print is stamped."""
    deep = [c for c in PLAYING if c.rarity in (Rarity.COMMON, Rarity.UNCOMMON)]
    return itertools.cycle([(card.name, "standard") for card in deep])


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Served:
    """A league served from a child process: where it answers, and the process."""

    url: str
    pid: int
    #: The embedded PostgreSQL's data directory (None on DATABASE_URL's server).
    pgdata: Path | None = None
    #: The database the league uses (served apart: the mint's).
    database: str | None = None
    #: Workers each ``league serve`` was started with (None: its default, one per core).
    workers: int | None = None
    #: Served apart: where each service answers (``url`` is the mint's), and the other
    #: services' processes.
    urls: Mapping[str, str] = field(default_factory=dict)
    others: tuple[int, ...] = ()

    def url_of(self, service: str) -> str:
        """Where ``service`` answers (``url`` when every service is served there)."""
        return self.urls.get(service, self.url)

    def database_cpu_seconds(self) -> float:
        """CPU time the embedded PostgreSQL has used so far (:func:`postgres_cpu_seconds`;
        0 on DATABASE_URL's server)."""
        return postgres_cpu_seconds(self.pgdata) if self.pgdata is not None else 0.0

    def cpu_seconds(self) -> float:
        """CPU time the server processes have used so far, every thread of each and of their
        children (a server's workers; :func:`process_tree_cpu_seconds`). The database's
        processes are not counted."""
        return sum(process_tree_cpu_seconds(pid) for pid in (self.pid, *self.others))


def _proc_table() -> dict[int, tuple[int, int]]:
    """Every live process: pid -> (parent pid, CPU ticks of it and its reaped children)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            table[int(entry.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))
    return table


def process_tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system, every thread) process ``root`` and its descendants have used
    so far, the children they reaped included (Linux's /proc; 0 elsewhere)."""
    table = _proc_table()
    if root not in table:
        return 0.0
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    ticks, pending = 0, [root]
    while pending:
        pid = pending.pop()
        ticks += table[pid][1]
        pending += children.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds(pgdata: Path) -> float:
    """CPU time the PostgreSQL of ``pgdata`` has used so far: the postmaster, its live
    children and those it has reaped (0 when it is not running here)."""
    try:
        postmaster = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return 0.0
    return process_tree_cpu_seconds(postmaster)


@contextlib.contextmanager
def served_league(
    services: Sequence[str] = (),
    *,
    name: str = "Bench",
    policies: Sequence[str] = SERVICE_COST_POLICIES,
    apart: bool = False,
    workers: int | None = None,
) -> Iterator[Served]:
    """A new league served by ``league serve SERVICES`` (every service when empty) from a
    child process; with ``apart``, every service from a process of its own on a database of
    its own; ``--workers N`` when ``workers`` is given (else ``league serve``'s default)."""
    home = Path(tempfile.mkdtemp(prefix="cz-bench-"))
    home.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LEAGUE_") and k not in ("MINT_URL", "TREASURY_URL", "NOTARY_URL")
    }
    env["LEAGUE_HOME"] = str(home)
    # The bench's client is one loopback source opening more connections than one source may
    # hold (docs/operations.md, "Limits"): it stands where a trusted reverse proxy would.
    env["LEAGUE_TRUSTED_PROXIES"] = "127.0.0.1/32"
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, home, ignore_errors=True)
        server_url = os.environ.get("DATABASE_URL")
        pgdata = None
        if not server_url:
            pgdata = home / "pgdata"
            server_url = start_embedded(pgdata).url
            cleanup.callback(stop_embedded, home / "pgdata")
        databases = {
            service: cleanup.enter_context(scratch_database(server_url, f"cz_bench_{service}"))
            for service in (SERVICES if apart else ("league",))
        }
        env["DATABASE_URL"] = next(iter(databases.values()))
        ports = {service: _free_port() for service in SERVICES}
        options = [arg for policy in policies for arg in ("--policy", policy)]
        if apart:  # the services find each other where the manifest says
            options += [
                arg
                for service, port in ports.items()
                for arg in ("--url", f"{service}=http://127.0.0.1:{port}")
            ]
        subprocess.run(
            [*LEAGUE, "init", "--name", name, *options],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        if not apart:
            yield _serve(cleanup, env, services, _free_port(), workers)
            return
        served = {
            service: _serve(
                cleanup,
                {**env, "DATABASE_URL": databases[service]},
                [service],
                ports[service],
                workers,
            )
            for service in SERVICES
        }
        mint = served["mint"]
        yield Served(
            mint.url,
            mint.pid,
            pgdata,
            databases["mint"],
            workers,
            {s: p.url for s, p in served.items()},
            tuple(p.pid for s, p in served.items() if s != "mint"),
        )


def _serve(
    cleanup: contextlib.ExitStack,
    env: dict[str, str],
    services: Sequence[str],
    port: int,
    workers: int | None = None,
) -> Served:
    """``league serve SERVICES`` on ``port`` (with ``workers``) in a child process, stopped by
    ``cleanup``."""
    more = ["--workers", str(workers)] if workers is not None else []
    process = subprocess.Popen(
        [*LEAGUE, "serve", *services, "--port", str(port), *more],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    cleanup.callback(process.wait)
    cleanup.callback(process.send_signal, signal.SIGTERM)
    line = process.stdout.readline() if process.stdout else ""
    if not line.startswith("serving on "):
        raise SystemExit(f"league serve {' '.join(services)} did not start: {line!r}")
    pgdata = Path(env["LEAGUE_HOME"]) / "pgdata"
    # "serving on URL", perhaps with more said after it.
    return Served(
        line.removeprefix("serving on ").split()[0],
        process.pid,
        pgdata if pgdata.exists() else None,
        env["DATABASE_URL"],
        workers,
    )


def workers_text(workers: int | None) -> str:
    """How many workers served, as a table says it."""
    return (
        f"league serve --workers {workers}"
        if workers is not None
        else f"league serve's default workers (one per core: {os.cpu_count()})"
    )


def print_table(title: str, rows: Sequence[tuple[str, str]]) -> None:
    """The bench's results: a title line naming the machine, then one row per figure."""
    print(
        f"{title} — {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores, server and client on this machine"
    )
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


async def closed_loop(
    send: Callable[[bytes], Awaitable[int]], bodies: Sequence[bytes], concurrency: int
) -> tuple[float, list[float], int]:
    """Send every body with ``concurrency`` in flight, each next one as soon as a sender is
    free: (items/s, latencies, items), ``send`` answering how many items a body carried
    through (prints stamped, hops recorded)."""
    pending = iter(bodies)
    latencies: list[float] = []
    done = 0

    async def worker() -> None:
        nonlocal done
        for body in pending:
            start = time.perf_counter()
            count = await send(body)
            latencies.append(time.perf_counter() - start)
            done += count

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / (time.perf_counter() - start), latencies, done
