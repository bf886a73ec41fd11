"""The crash matrix: the mint, the treasury and the notary each crashed at every durable write
of a scenario (just before and just after its commit) and at every call the treasury makes to
another service (before it is sent, after it is answered); and PostgreSQL restarted under
load. After each, nothing promised is lost and nothing happened twice (docs/architecture.md §4;
Book V.5 to V.8; L-11, L-20).

Kill points are installed by the test (tests/reliability/crashing.py): no switch in production
code. A crashed service is abandoned and started again on the same database; the wallets
resend every request they got no answer to, each with its own request id (a claim, a stamp, a
trade, a purchase and an upgrade), until answered. Then:

- the supply is exactly 1,500,000 marks, reserve plus circulation, no note out twice, and every
  projection is what its log folds to;
- each request's effect is in the logs exactly once (a claim's notes, a stamp, each hop, each
  step of a purchase, the order the mint stamped, the print returned for the upgrade), and it is
  what the wallet was answered (every answered grant is still there);
- each item has one holder row at the notary, the upgrade's returned print is the mint's;
- the independent auditor (``league audit``'s :func:`auditor.audit_url`) passes.

The short form (CI) crosses a sample covering every service and every kind of point; the long
form (``RELIABILITY_LONG=1``) crosses every point.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from apiclient.league import LeagueClient, stamp_request
from auditor import audit_url
from ledger.api.mint import StampAnswer, Stamped
from ledger.api.notary import Holders, NotarizeAnswer
from ledger.api.treasury import (
    BuyAnswer,
    ClaimAnswer,
    ClaimRequest,
    Upgrade,
    buy_request,
    claim_request,
)
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.events import (
    MINT_EVENTS,
    NOTARY_EVENTS,
    TREASURY_EVENTS,
    HopRecorded,
    NoteIssued,
    PrintReturned,
    PrintStamped,
    parse_event,
)
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from ledger.savecode import MINIMUM_KDF
from services.eventlog import EventStore
from services.eventlog.migrate import upgrade as migrate
from services.kernel.database import database_in, stop_embedded
from services.kernel.founding import create_league, load_manifest
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.mint.app import MINT_LOG
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.app import NOTARY_LOG
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import TREASURY_LOG
from tests.harness.founding import SMALL_RUNS, TEST_POLICIES, make_settings
from tests.harness.mint import checkpoint_covering
from tests.harness.ports import free_port
from tests.harness.trading import T0
from tests.harness.treasury import Faucet, check_supply
from tests.reliability.crashing import CALLS, RESENT, WRITES, Killer, KillPoint, Trio, answered
from tests.reliability.figures import long_form, record

__all__ = ["make_settings"]  # the mint's fixture: a league over a migrated database

#: The note set's total (Book V.5): the supply never moves.
SUPPLY = 1_500_000
#: Enough of the faucet a day for the scenario's claims.
POLICIES = TEST_POLICIES.model_copy(update={"faucet_marks_per_day": 300})
DELIVERED = [
    "purchase-opened",
    "payment-notarized",
    "order-signed",
    "print-delivered",
    "payment-returned",
    "purchase-closed",
]

#: Durable writes of each service in the scenario without a crash (a claim is one; a stamp,
#: an order, a trade, a payment notarized one each; a purchase three: opened | notarized with
#: its order signed | delivered, returned and closed), and the treasury's calls to the notary
#: and the mint (test_the_scenario_makes_the_writes_counted).
WRITE_POINTS = {"mint": 4, "treasury": 8, "notary": 4}
CALL_POINTS = {"treasury": 4}


def every_point() -> list[KillPoint]:
    points = [
        KillPoint(service, where, k)
        for service, count in WRITE_POINTS.items()
        for where in WRITES
        for k in range(1, count + 1)
    ]
    points += [
        KillPoint(service, where, k)
        for service, count in CALL_POINTS.items()
        for where in CALLS
        for k in range(1, count + 1)
    ]
    return points


#: The short form: every service, every kind of point, the first write and a purchase's.
SAMPLE = [
    KillPoint("mint", "after-commit", 1),
    KillPoint("mint", "before-commit", 3),
    KillPoint("treasury", "after-commit", 1),
    KillPoint("treasury", "before-commit", 4),
    KillPoint("treasury", "call-answered", 2),
    KillPoint("notary", "after-commit", 3),
    KillPoint("notary", "before-commit", 4),
]
POINTS = every_point() if long_form() else SAMPLE


@dataclass
class Wallets:
    """Two players, A and B, and every answer their requests got (each asked until answered)."""

    manifest: LeagueManifest
    a: SigningKey = field(default_factory=SigningKey.generate)
    b: SigningKey = field(default_factory=SigningKey.generate)
    claims: dict[str, ClaimAnswer] = field(default_factory=dict)
    stamps: dict[str, StampAnswer] = field(default_factory=dict)
    trade: NotarizeAnswer | None = None
    traded: list[Chain] = field(default_factory=list)
    buys: dict[str, BuyAnswer] = field(default_factory=dict)
    returned: Chain | None = None

    def key(self, name: str) -> PublicKey:
        return PublicKey.from_text(getattr(self.manifest, name))


def chain(certificate: PrintCertificate | NoteCertificate) -> Chain:
    return Chain(certificate=certificate, endorsements=())


def stamped(answer: StampAnswer) -> PrintCertificate:
    (item,) = answer.items
    assert isinstance(item, Stamped), item
    return item.certificate


async def play(trio: Trio, wallets: Wallets) -> None:
    """Claims, stamps, a trade, a purchase and an upgrade, each request resent until answered."""
    manifest, a, b = wallets.manifest, wallets.a, wallets.b
    now = int(time.time())
    async with (
        LeagueClient(trio.url("mint"), timeout=60) as mint,
        LeagueClient(trio.url("treasury"), timeout=60) as treasury,
        LeagueClient(trio.url("notary"), timeout=60) as notary,
    ):
        for rid, owner, marks in (("claim-a-0001", a, 55), ("claim-b-0001", b, 100)):
            request = claim_request(owner, manifest, marks, request_id=rid, at=now)
            wallets.claims[rid] = await answered(partial(treasury.claim, request))
        for rid, owner, title in (("stamp-a-0001", a, "Tally"), ("stamp-b-0001", b, "Model-A")):
            stamp = stamp_request(owner, manifest, [(title, "standard")], request_id=rid, at=now)
            wallets.stamps[rid] = await answered(partial(mint.stamp, stamp))
        # A gives B the Tally and an M5 note (25 + 25 + 5 claimed) in one trade.
        tally = chain(stamped(wallets.stamps["stamp-a-0001"]))
        notes_a = sorted(wallets.claims["claim-a-0001"].notes, key=lambda n: n.denomination)
        five, *rest = notes_a
        assert five.denomination == 5
        wallets.traded = [endorse(tally, a, b.public, T0), endorse(chain(five), a, b.public, T0)]
        wallets.trade = await answered(lambda: notary.notarize(wallets.traded))
        # B gives A the Model-A in a second trade.
        model = endorse(chain(stamped(wallets.stamps["stamp-b-0001"])), b, a.public, T0)
        wallets.traded.append(model)
        await answered(lambda: notary.notarize([model]))
        # A buys a single of Tally with M50; B upgrades the traded Tally to gilt with M105.
        to_treasury = wallets.key("treasury")
        buy = buy_request(
            a,
            manifest,
            "Tally",
            [endorse(chain(n), a, to_treasury, T0) for n in rest],
            purchase_id="buy-a-0001",
            at=now,
        )
        wallets.buys["buy-a-0001"] = await answered(lambda: treasury.buy(buy))
        wallets.returned = endorse(wallets.traded[0], b, wallets.key("mint"), T0)
        notes_b = wallets.claims["claim-b-0001"].notes
        payment = [endorse(chain(n), b, to_treasury, T0) for n in notes_b]
        payment.append(endorse(wallets.traded[1], b, to_treasury, T0))
        up = buy_request(
            b,
            manifest,
            "Tally",
            payment,
            purchase_id="up-b-0001",
            at=now,
            upgrade=Upgrade(finish="gilt", returned=wallets.returned),
        )
        wallets.buys["up-b-0001"] = await answered(lambda: treasury.buy(up))


def issued(certificates: list[NoteCertificate]) -> Counter[tuple[str, int]]:
    return Counter((n.serial, n.issue) for n in certificates)


async def holder_rows(session: aiohttp.ClientSession, url: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    after = ""
    while True:
        params = {"after": after} if after else {}
        async with session.get(f"{url}/notary/holders", params=params) as response:
            assert response.status == 200, await response.text()
            page = Holders.model_validate_json(await response.text())
        rows += [(row.serial, row.holder) for row in page.holders]
        if page.next_after is None:
            return rows
        after = page.next_after


async def check_league(
    trio: Trio, wallets: Wallets, tmp: Path, others: Collection[str] = ()
) -> int:
    """Every invariant of the module's docstring (notes issued for requests of the wallets
    alone, or of ``others``); the number of checks made."""
    checks = 0
    apps = {service: trio.instances[service].server.app for service in trio.instances}
    mint_log: EventStore = apps["mint"][MINT_LOG]
    treasury_log: EventStore = apps["treasury"][TREASURY_LOG]
    notary_log: EventStore = apps["notary"][NOTARY_LOG]
    async with aiohttp.ClientSession() as session:
        # The supply, no note out twice, the treasury's tables its log's fold.
        faucet = Faucet(session, trio.url("treasury"), wallets.manifest)
        assert (await faucet.supply()).marks.supply == SUPPLY
        await check_supply(faucet, treasury_log)
        assert (await rebuild(mint_log, MINT_PROJECTION, commit=False)).agrees
        assert (await rebuild(notary_log, NOTARY_PROJECTION, commit=False)).agrees
        checks += 3
        # Each item has one holder; the print returned for the upgrade is the mint's.
        rows = await holder_rows(session, trio.url("notary"))
        assert len({serial for serial, _ in rows}) == len(rows)
        tally = stamped(wallets.stamps["stamp-a-0001"])
        model = stamped(wallets.stamps["stamp-b-0001"])
        assert dict(rows)[tally.serial] == wallets.manifest.mint
        assert dict(rows)[model.serial] == wallets.a.public.to_text()
        checks += 3

    # Each request's effect once, and what the wallet was answered.
    stamps: Counter[str] = Counter()
    certificates: dict[str, list[PrintCertificate]] = {}
    returned: Counter[str] = Counter()
    for event in await mint_log.read(-1, 10_000):
        body = parse_event(event, MINT_EVENTS)
        if isinstance(body, PrintStamped):
            stamps[body.request_id] += 1
            certificates.setdefault(body.request_id, []).append(body.certificate)
        elif isinstance(body, PrintReturned):
            returned[body.order_id] += 1
    assert stamps == {"stamp-a-0001": 1, "stamp-b-0001": 1, "buy-a-0001": 1, "up-b-0001": 1}, stamps
    for rid, stamp in wallets.stamps.items():
        assert certificates[rid] == [stamped(stamp)]
    for pid, bought in wallets.buys.items():
        assert bought.outcome == "delivered", bought
        assert certificates[pid] == [bought.stamped]
    assert returned == {"up-b-0001": 1}
    checks += 4
    notes: dict[str, list[NoteCertificate]] = {}
    for event in await treasury_log.read(-1, 10_000):
        body = parse_event(event, TREASURY_EVENTS)
        if isinstance(body, NoteIssued):
            notes.setdefault(body.request_id, []).append(body.certificate)
    for rid, claim in wallets.claims.items():
        assert issued(notes[rid]) == issued(claim.notes)
    for pid, bought in wallets.buys.items():
        assert issued(notes.get(pid, [])) == issued(bought.change)
        assert [e.type for e in await treasury_log.read_stream(f"purchase/{pid}")] == DELIVERED
    assert set(notes) <= {*wallets.claims, *wallets.buys, *others}
    checks += 4
    hops: Counter[tuple[str, int, str]] = Counter()
    for event in await notary_log.read(-1, 10_000):
        body = parse_event(event, NOTARY_EVENTS)
        if isinstance(body, HopRecorded):
            hops[(body.endorsement.serial, body.issue, body.endorsement.sig)] += 1
    assert set(hops.values()) == {1}, hops
    assert wallets.trade is not None
    for traded in wallets.traded:
        last = traded.endorsements[-1]
        assert hops[(last.serial, traded.certificate.issue, last.sig)] == 1
    checks += 2

    # The independent auditor, once each log's checkpoint covers all of it.
    for service, store in (("mint", mint_log), ("treasury", treasury_log), ("notary", notary_log)):
        async with LeagueClient(trio.url(service)) as client:
            await checkpoint_covering(client, (await store.head()).size, service)
    outcome = await audit_url(
        trio.url("mint"),
        tmp / "audit",
        workers=0,
        services={s: trio.url(s) for s in ("treasury", "notary")},
    )
    assert outcome.report.returned_prints == 1
    return checks + 2


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    return make_settings(policies=POLICIES)


async def crossed(
    settings: LeagueSettings,
    point: KillPoint | None,
    monkeypatch: pytest.MonkeyPatch,
    tmp: Path,
) -> tuple[Trio, int]:
    killer = Killer(point)
    killer.install(monkeypatch)
    ports = {service: free_port() for service in ("mint", "treasury", "notary")}
    wallets = Wallets(load_manifest(settings))
    async with Trio(settings, ports, killer) as trio:
        await play(trio, wallets)
        await trio.settled()
        checks = await check_league(trio, wallets, tmp)
    return trio, checks


async def test_the_scenario_makes_the_writes_counted(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The scenario without a crash passes every check, and makes the writes and calls the
    matrix names (so each kill point of the long form is crossed, and none is left out)."""
    trio, checks = await crossed(settings, None, monkeypatch, tmp_path)
    assert trio.killer.writes == WRITE_POINTS
    # A call the notary answers 503 (not yet following a note) is made again: at least these.
    assert all(trio.killer.calls[s] >= n for s, n in CALL_POINTS.items()), trio.killer.calls
    record(
        "crash_matrix_dry_run",
        {
            "mint_writes": trio.killer.writes["mint"],
            "treasury_writes": trio.killer.writes["treasury"],
            "notary_writes": trio.killer.writes["notary"],
            "treasury_calls": trio.killer.calls["treasury"],
            "invariants_checked": checks,
        },
    )


_CROSSED: list[str] = []
_CHECKS: dict[str, int] = {}


@pytest.mark.parametrize("point", POINTS, ids=str)
async def test_a_service_crashed_at_a_kill_point_loses_and_doubles_nothing(
    settings: LeagueSettings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    point: KillPoint,
) -> None:
    """Crashed at ``point`` and started again, the service ends every request of the scenario
    exactly once, as answered: supply, holders, each effect once, the auditor passes."""
    trio, checks = await crossed(settings, point, monkeypatch, tmp_path)
    assert trio.killer.victim is not None, f"{point} was never crossed"
    assert trio.restarts == 1
    _CROSSED.append(str(point))
    _CHECKS["per_point"] = checks


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    """The kill points crossed, recorded once the module's tests are done."""
    yield
    if _CROSSED:
        record(
            "crash_matrix",
            {
                "kill_points": len(every_point()),
                "points_this_form": len(POINTS),
                "points_crossed": len(_CROSSED),
                "services_crashed": len({p.split("-")[0] for p in _CROSSED}),
                "invariants_checked_per_point": _CHECKS["per_point"],
            },
        )


# -- PostgreSQL restarted under load --------------------------------------------------------------

#: Players claiming beside the scenario, each claim resent until answered.
CLAIMERS = 12


async def embedded(pgdata: Path) -> str:
    """Start the embedded server of ``pgdata`` from a child process (the library keeps one
    handle per data directory in a process, so this one could not start it a second time);
    it keeps running after the child exits. Its URL."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sys; from services.kernel.database import start_embedded; "
        "print(start_embedded(__import__('pathlib').Path(sys.argv[1])).url)",
        str(pgdata),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    out, _ = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 0
    return out.decode().strip().splitlines()[-1]


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A directory the server's user can reach, as tests/conftest.py makes the session's."""
    tmp = Path(tempfile.mkdtemp(prefix="cz-restart-pg-"))
    tmp.chmod(0o755)
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
async def own_server(server_dir: Path) -> AsyncIterator[tuple[Path, str]]:
    """A PostgreSQL server of this test's own (it is stopped under load), and its URL."""
    pgdata = server_dir / "pgdata"
    url = await embedded(pgdata)
    try:
        yield pgdata, url
    finally:
        await asyncio.to_thread(stop_embedded, pgdata)


async def test_postgresql_restarted_under_load_loses_and_doubles_nothing(
    own_server: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The database server is stopped (fast: every connection cut) while the scenario and
    twelve other players' claims are in flight, and started again: every request is
    answered once it is back (503 meanwhile: one more claim is sent while it is down, so at
    least one request is always resent, however fast the others were answered), each claim
    issued exactly once as answered, and every invariant of the matrix holds."""
    pgdata, server_url = own_server
    url = database_in(server_url, "league")
    await asyncio.to_thread(lambda: asyncio.run(_create(server_url)))
    migrate(url)
    settings = LeagueSettings(data_dir=tmp_path / "league", database_url=url)
    create_league(settings, print_runs=SMALL_RUNS, policies=POLICIES, kdf=MINIMUM_KDF)
    killer = Killer(None)
    killer.install(monkeypatch)  # counts writes; no kill point
    RESENT.clear()
    ports = {service: free_port() for service in ("mint", "treasury", "notary")}
    wallets = Wallets(load_manifest(settings))
    claimers = [SigningKey.generate() for _ in range(CLAIMERS + 1)]
    now = int(time.time())
    claims = [
        claim_request(k, wallets.manifest, 30, request_id=f"load-{i:04d}-claim", at=now)
        for i, k in enumerate(claimers)
    ]
    async with Trio(settings, ports, killer) as trio:
        async with LeagueClient(trio.url("treasury"), timeout=60) as treasury:

            async def claim(request: ClaimRequest) -> ClaimAnswer:
                return await answered(lambda: treasury.claim(request))

            async def restart() -> asyncio.Task[ClaimAnswer]:
                """Stop the server once requests flow, send the last claim while it is
                down, start it again; the last claim's task."""
                while killer.writes["treasury"] < 3:  # requests are flowing
                    killer.wrote.clear()
                    await killer.wrote.wait()
                await asyncio.to_thread(stop_embedded, pgdata)
                late = asyncio.create_task(claim(claims[-1]))  # answered 503 until it is back
                await asyncio.sleep(0.5)  # down for a while: requests meanwhile get 503s
                assert await embedded(pgdata) == server_url
                return late

            scenario = asyncio.create_task(play(trio, wallets))
            loaded = asyncio.gather(*(claim(r) for r in claims[:-1]))
            late = await restart()
            answers = [*await loaded, await late]
            await scenario
        assert RESENT["unanswered"] > 0  # requests were in flight while it was down
        checks = await check_league(trio, wallets, tmp_path, {r.request_id for r in claims})
        store: EventStore = trio.instances["treasury"].server.app[TREASURY_LOG]
        notes: Counter[str] = Counter()
        for event in await store.read(-1, 10_000):
            body = parse_event(event, TREASURY_EVENTS)
            if isinstance(body, NoteIssued):
                notes[body.request_id] += 1
        for request, answer in zip(claims, answers, strict=True):
            assert answer.marks == 30
            assert notes[request.request_id] == len(answer.notes)
    record(
        "postgresql_restart",
        {
            "requests_in_flight": CLAIMERS + 8,
            "writes": sum(killer.writes.values()),
            "requests_resent": RESENT["unanswered"],
            "invariants_checked": checks + len(claims),
        },
    )


async def _create(server_url: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute('CREATE DATABASE "league"')
    finally:
        await conn.close()
