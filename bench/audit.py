"""``league audit`` benchmark: events and signature verifications per second, next to the raw
Ed25519 verify rate of the same number of processes measured in the same run.

    python -m bench.audit                      # 20,000 events (2,000 note issues), all cores
    python -m bench.audit --notes 0            # the mint's and the notary's events only
    python -m bench.audit --events 4000 --workers 1 2
    python -m bench.audit --profile            # cProfile of one serial audit (main process)
    python -m bench.audit --served             # the same over HTTP, against `league serve`

(``python bench/audit.py ...`` runs it too.)

A league is built in memory with real keys and signatures (``--notes`` of the events M1 notes
issued by the treasury's faucet, within its daily cap per key; half the rest prints stamped by
the mint, half hops recorded by the notary, each print traded once), saved as the directory
``league audit --save`` writes, and audited with ``league audit --offline`` (the CLI's own
code: the same pages, pool and auditor as over HTTP, without the network). With ``--served``
the league is built by stamping and notarizing over HTTP against a served league (bench/
notary.py's helpers) and audited by ``audit_url``, the server running on the same machine.
Reading of the target (docs/operations.md, "Auditing"): the audit's Ed25519 verifications per
second over the raw verify rate of as many processes as it uses, each verifying in a tight
loop, at once. The raw loops verify 256 keys' signatures of as many messages in turn (one
fixed message is not the average: libsodium's verification is variable-time).
In CPU time (the target's reading): the CPU the audit's processes used (this one, and its
pool's workers, from /proc) a verification, against one raw verification's CPU in this
process (bench/floor.py's ``crypto_costs``): the floor of an event is the signatures it
carries. The load average at the start and the end closes the table.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import itertools
import json
import multiprocessing
import os
import pstats
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's root on the path
    import sys

    sys.path[0] = str(Path(__file__).resolve().parents[1])

import aiohttp
import nacl.signing

from apiclient.league import LeagueClient
from auditor import (
    AuditOutcome,
    PageChecker,
    SavedLeague,
    audit_offline,
    audit_url,
)
from bench.floor import crypto_costs, loadavg
from bench.league_setup import (
    SERVICE_COST_POLICIES,
    closed_loop,
    process_tree_cpu_seconds,
    served_league,
)
from bench.notary import Notarizer, slips, stamp
from ledger.api.logs import Feed, FeedEvent
from ledger.api.notary import MAX_HOLDERS_PAGE, HolderRow, Holders
from ledger.api.witness import EvidenceList
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import sign_checkpoint
from ledger.endorsements import Endorsement
from ledger.events import EventBody, HopRecorded, NoteIssued, PrintStamped
from ledger.keys import SigningKey
from ledger.leaf import Event, canonical_leaf, parse_time
from ledger.limits import MAX_FEED_PAGE
from ledger.manifest import LeagueManifest, build_manifest
from ledger.merkle import CompactRange, leaf_hash
from ledger.print_runs import DEFAULT_PRINT_RUNS, serial_for
from ledger.wire import hash_text

AT = datetime(2026, 12, 3, 3, 0, 0, 123456, tzinfo=UTC)
HOLDERS = 64


def key(n: int) -> SigningKey:
    return SigningKey(bytes([n % 256, n // 256]) * 16)


@dataclass
class BenchLog:
    """One service's log: its signed events, served as feed pages."""

    service: str
    origin: str
    signer: SigningKey
    events: list[FeedEvent]
    versions: Counter[str]
    tree: CompactRange

    def append(self, body: EventBody, at: datetime = AT) -> None:
        stream = body.stream()
        self.versions[stream] += 1
        leaf = canonical_leaf(
            seq=len(self.events),
            stream=stream,
            stream_version=self.versions[stream],
            type=body.TYPE,
            body=body.to_wire(),
            recorded_at=at,
        )
        digest = leaf_hash(leaf)
        self.tree.append(digest)
        self.events.append(
            FeedEvent.of(
                Event(
                    seq=len(self.events),
                    stream=stream,
                    stream_version=self.versions[stream],
                    type=body.TYPE,
                    body=body.to_wire(),
                    recorded_at=at,
                    leaf_hash=digest,
                    signature=self.signer.sign_raw(leaf),
                )
            )
        )

    def pages(self) -> Iterator[str]:
        """The feed as ``GET /<service>/events`` serves it, page after page."""
        for start in range(0, len(self.events), MAX_FEED_PAGE):
            chunk = self.events[start : start + MAX_FEED_PAGE]
            yield Feed(events=chunk, next_after=chunk[-1].seq).model_dump_json()

    def checkpoint(self) -> str:
        return str(sign_checkpoint(self.origin, self.tree.size, self.tree.root(), self.signer))


@dataclass
class BenchLeague:
    manifest: LeagueManifest
    mint: BenchLog
    notary: BenchLog
    holders: dict[str, str]
    treasury: BenchLog

    @property
    def logs(self) -> tuple[BenchLog, ...]:
        return (
            (self.mint, self.treasury, self.notary)
            if self.treasury.events
            else (self.mint, self.notary)
        )


def build(events: int, notes: int = 0) -> BenchLeague:
    """``events`` events: ``notes`` M1 notes claimed by a few holders (the faucet's cap a key
    a day: a new day every ``HOLDERS * cap`` claims), prints stamped to the same holders,
    then each traded once."""
    root, mint_key, treasury, notary_key = key(1), key(2), key(3), key(4)
    manifest = build_manifest(
        root,
        league="bench-audit",
        name="Audit bench",
        mint=mint_key.public,
        treasury=treasury.public,
        notary=notary_key.public,
    )
    logs = [
        BenchLog(name, f"bench-audit/{name}", signer, [], Counter(), CompactRange())
        for name, signer in (("mint", mint_key), ("notary", notary_key))
    ]
    mint, notary = logs
    owners = [key(100 + n) for n in range(HOLDERS)]
    treasury_log = BenchLog(
        "treasury", "bench-audit/treasury", treasury, [], Counter(), CompactRange()
    )
    per_day = HOLDERS * manifest.policies.faucet_marks_per_day
    for n in range(notes):
        note = NoteCertificate.sign(
            treasury,
            serial=f"CZ-M1-{n + 1:06d}",
            denomination=1,
            issued_to=owners[n % HOLDERS].public.to_text(),
            issue=1,
            event=n,
            manifest=manifest.hash_text(),
        )
        treasury_log.append(
            NoteIssued(certificate=note, request_id=f"claim-{n:08d}", reason="claim"),
            AT + timedelta(days=n // per_day),
        )
    events -= notes
    by_text = {k.public.to_text(): k for k in owners}
    serials = (
        serial_for(run.title, "standard", k)
        for k in itertools.count(1)
        for run in DEFAULT_PRINT_RUNS.runs
        if k <= run.standard
    )
    stamped: list[PrintCertificate] = []
    for n in range((events + 1) // 2):
        serial = next(serials)
        certificate = PrintCertificate.sign(
            mint_key,
            serial=serial,
            title=DEFAULT_PRINT_RUNS.run(serial[3:-5]).title,
            set=DEFAULT_PRINT_RUNS.run(serial[3:-5]).set,
            finish="standard",
            issued_to=owners[n % HOLDERS].public.to_text(),
            issue=1,
            event=n,
            manifest=manifest.hash_text(),
        )
        mint.append(PrintStamped(certificate=certificate, request_id=f"request-{n:08d}"))
        stamped.append(certificate)
    holders: dict[str, str] = {}
    for n, certificate in enumerate(stamped[: events // 2]):
        holder = by_text[certificate.issued_to]
        to = owners[(n + 1) % HOLDERS].public.to_text()
        endorsement = Endorsement.sign(
            holder,
            serial=certificate.serial,
            hop=1,
            prev=hash_text(certificate.hash()),
            to=to,
            time=1_700_000_000 + n,
            **{"from": certificate.issued_to},
        )
        notary.append(HopRecorded(issue=1, endorsement=endorsement))
        holders[certificate.serial] = to
    return BenchLeague(manifest, mint, notary, holders, treasury_log)


def save(league: BenchLeague, directory: Path) -> None:
    """The league as ``league audit URL --save DIR`` writes it."""
    saved = SavedLeague.create(directory, "https://bench-audit.invalid")
    saved.write_manifest(json.dumps(league.manifest.to_wire()))
    for log in league.logs:
        saved.write_checkpoint(log.service, log.checkpoint())
        for index, page in enumerate(log.pages()):
            saved.write_numbered(f"{log.service}/events", index, page)
        # Each service serving a log witnesses the others: its (empty) evidence is served.
        saved.write_numbered(
            f"{log.service}/evidence",
            0,
            EvidenceList(witness=log.origin, evidence=[], next_after=0).model_dump_json(),
        )
    traded = sorted(league.holders.items())
    for index, start in enumerate(range(0, len(traded) + 1, MAX_HOLDERS_PAGE)):
        rows = traded[start : start + MAX_HOLDERS_PAGE]
        page = Holders(
            holders=[HolderRow(serial=s, issue=1, hops=1, holder=h) for s, h in rows],
            log_size=len(league.notary.events),
            next_after=rows[-1][0] if len(rows) == MAX_HOLDERS_PAGE else None,
        )
        saved.write_numbered("notary/holders", index, page.model_dump_json())


def signed_bytes(league: BenchLeague) -> int:
    """The mean length of the messages the audit verifies (event leaves, certificates and
    endorsements), for a raw loop over messages like them."""
    total = count = 0
    for log in league.logs:
        for event in log.events:
            total += len(
                canonical_leaf(
                    seq=event.seq,
                    stream=event.stream,
                    stream_version=event.stream_version,
                    type=event.type,
                    body=event.body,
                    recorded_at=parse_time(event.recorded_at),
                )
            )
            inner = event.body.get("certificate") or event.body.get("endorsement") or {}
            total += len(json.dumps(inner, separators=(",", ":"))) - 100  # less "sig"
            count += 2
    return total // max(count, 1)


def _raw_loop(seconds: float, size: int = 300) -> int:
    """Verifications done in about ``seconds``, of 256 keys' signatures of as many messages of
    ``size`` bytes, in turn."""
    keys = [nacl.signing.SigningKey(bytes([n, 7]) * 16) for n in range(256)]
    signed = [
        (k.verify_key.verify, m, k.sign(m).signature)
        for k, m in ((k, b"CZ1/event\n" + bytes([n]) * size) for n, k in enumerate(keys))
    ]
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for verify, message, signature in signed:
            verify(message, signature)
        count += len(signed)
    return count


def raw_verify_rate(processes: int, size: int, seconds: float = 3.0) -> float:
    """Ed25519 verifications per second of ``processes`` processes verifying messages of
    ``size`` bytes at once, each in a tight loop."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        list(pool.map(_raw_loop, [0.05] * processes, [size] * processes))  # started, warm
        start = time.perf_counter()
        counts = list(pool.map(_raw_loop, [seconds] * processes, [size] * processes))
        return sum(counts) / (time.perf_counter() - start)


async def fill(url: str, events: int) -> None:
    """Stamp ``events / 2`` prints at the served league and notarize one hop of each (slips
    of 20), then wait for both services' checkpoints to cover it all."""
    async with LeagueClient(url) as league:
        manifest = await league.manifest()
        held = await stamp(league, manifest, events // 2, 8)
        receiver = SigningKey.generate().public
        async with aiohttp.ClientSession() as session:
            await closed_loop(Notarizer(session, url).notarize, slips(held, receiver, 20), 8)
        for service in ("mint", "notary"):
            for _ in range(600):  # bounded: a checkpoint is signed every interval
                if (await league.signed_checkpoint(service=service)).size >= len(held):
                    break
                await asyncio.sleep(0.2)


def measure(
    audit: Callable[[PageChecker, Path], AuditOutcome],
    workers: int,
    size: int,
    repeat: int,
    directory: Path,
) -> tuple[AuditOutcome, float, float, float, float]:
    """Best of ``repeat``: the audit's wall and CPU seconds (of this process and its pool's
    workers), the raw rates (wall, of ``workers`` processes; CPU, of one)."""
    seconds, raw, cpu, raw_cpu = float("inf"), 0.0, float("inf"), 0.0
    for attempt in range(repeat):
        # Audit and raw loop interleaved: on a shared machine the least disturbed run of
        # each is the closest to what the cores can do. The pool's start-up is not timed.
        checker = PageChecker(workers).start()
        try:
            clock, used = time.perf_counter(), time.process_time()
            tree = process_tree_cpu_seconds(os.getpid())
            result = audit(checker, directory / f"state-{workers}-{attempt}")
            seconds = min(seconds, time.perf_counter() - clock)
            # One process: its own clock (exact); a pool: /proc's ticks of it and its workers.
            cpu = min(
                cpu,
                time.process_time() - used
                if workers <= 1
                else process_tree_cpu_seconds(os.getpid()) - tree,
            )
        finally:
            checker.close()
        raw = max(raw, raw_verify_rate(workers, size))
        raw_cpu = max(raw_cpu, 1 / crypto_costs(1.0, size, signs=False)[0])
    return result, seconds, raw, cpu, raw_cpu


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument(
        "--notes",
        type=int,
        default=None,
        help="of the events, M1 notes issued by the treasury's faucet "
        "(at most 100,000; offline only; default a tenth of --events, none "
        "with --served)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[1, os.cpu_count() or 1],
        help="pool sizes to measure (1: the audit in this process alone)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument(
        "--served",
        action="store_true",
        help="audit a league served over HTTP (built by stamping and "
        "notarizing) instead of a saved directory",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile one audit in this process instead of the table",
    )
    args = parser.parse_args(argv)
    built, start = time.perf_counter(), loadavg()
    if args.notes is None:
        args.notes = 0 if args.served else min(args.events // 10, 100_000)
    if not 0 <= args.notes <= min(args.events, 100_000) or (args.served and args.notes):
        parser.error("--notes: 0 to min(--events, 100,000), and only offline")
    league = build(args.events, args.notes)
    size = signed_bytes(league)
    directory = Path(tempfile.mkdtemp(prefix="cz-audit-bench-"))
    try:
        with contextlib.ExitStack() as stack:
            if args.served:
                url = stack.enter_context(served_league(policies=SERVICE_COST_POLICIES)).url
                asyncio.run(fill(url, args.events))

                def audit(checker: PageChecker, state: Path) -> AuditOutcome:
                    return asyncio.run(audit_url(url, state, checker=checker))

                print(
                    f"stamped and notarized {args.events} events at {url} in "
                    f"{time.perf_counter() - built:.1f} s"
                )
            else:
                save(league, directory / "saved")

                def audit(checker: PageChecker, state: Path) -> AuditOutcome:
                    return audit_offline(directory / "saved", state, checker=checker)

                print(
                    f"built and saved {args.events} events in {time.perf_counter() - built:.1f} s"
                )
            print(f"the audit verifies messages of {size} bytes on average")
            if args.profile:
                profiler = cProfile.Profile()
                profiler.enable()
                audit(PageChecker(0), directory / "state-profile")
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
                return
            print(
                f"{'processes':>9} {'events':>7} {'seconds':>8} {'events/s':>9} "
                f"{'verifies/s':>11} {'raw verifies/s':>15} {'ratio':>6}"
            )
            for workers in args.workers:
                result, seconds, raw, cpu, raw_cpu = measure(
                    audit, workers, size, args.repeat, directory
                )
                rate = result.report.verifications / seconds
                print(
                    f"{workers:>9} {result.events:>7} {seconds:>8.2f} "
                    f"{result.events / seconds:>9.0f} {rate:>11.0f} {raw:>15.0f} "
                    f"{rate / raw:>6.0%}"
                )
                per_cpu = result.report.verifications / cpu
                which = "this one process" if workers <= 1 else f"it and its {workers} workers"
                print(
                    f"{'':>9} in CPU time of {which}: {per_cpu:.0f} verifies/s against "
                    f"{raw_cpu:.0f} raw, {per_cpu / raw_cpu:.0%}; CPU an event "
                    f"{1e6 * cpu / result.events:.1f} µs = "
                    f"{cpu / result.report.verifications * raw_cpu:.2f}x the floor (its "
                    f"{result.report.verifications / result.events:.2f} verifications, "
                    f"{1e6 / raw_cpu:.1f} µs each)"
                )
            print(f"load average at start {start}, at end {loadavg()}")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
