"""The purchase saga survives a crash of any service (docs/api.md "The treasury"): the treasury
crashed at each step, and the mint down during a buy, each purchase completes or is refunded
exactly once.

The mint, the treasury and the notary run in this process as three apps over one database
(tests/harness/crashed_saga.py); the treasury is crashed at each named step of its saga by a
hook the test installs, with no switch in production code: after each of a purchase's three
commits (opened: ``purchase-opened``; notarized: ``payment-notarized`` with ``order-signed``;
closed, refunded, rejected: ``purchase-closed`` on the delivered, refunded, rejected path, with
the steps that share its commit), or once a peer answered its call (notary-answered: ``POST
/notary/endorsements``, receipts or a 409 conflict; mint-answered: ``POST
/mint/orders/batch``). A fresh treasury app is then started over the same database: its
resumer, and the same request sent again, take the purchase to its end. Every step is then in
the purchase's stream exactly once, the mint stamped its order at most once, and the supply
invariant holds. A real ``league serve treasury`` SIGKILLed mid-work is
tests/services/treasury/test_restart.py.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from functools import partial

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, stamp_request
from ledger.api.treasury import BuyRequest, buy_request
from ledger.endorsements import Chain, endorse
from ledger.events import PrintStamped
from ledger.keys import PublicKey, SigningKey
from services.eventlog import Row
from services.eventlog.store import PostgresTransaction
from services.kernel.compose import compose
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import NOTARY
from services.notary.app import SERVICE as NOTARY_SERVICE
from services.treasury.app import BUYER, TREASURY_LOG
from services.treasury.app import SERVICE as TREASURY
from services.treasury.buying import Buyer
from tests.harness.crashed_saga import (
    CASES,
    COMMITS,
    PATHS,
    STEPS,
    League,
    bought_across_a_crash,
    running,
)
from tests.harness.saga import (
    DELIVERED,
    checked,
    mint_stamps,
    ports,
    stamps_of,
    until_answered,
)
from tests.harness.trading import T0
from tests.harness.treasury import Faucet
from tests.reliability.crashing import APP, Killer, answered

__all__ = ["ports"]  # fixtures


def test_every_named_step_is_crossed() -> None:
    """Each named step of the saga is a hook point crossed by a case below, on a path that
    passes it (a step's write is in its path's stream)."""
    assert {step for step, _ in CASES} == set(STEPS)
    for path, steps in PATHS.items():
        assert [step for commit in COMMITS[path] for step in commit] == steps
    for step, path in CASES:
        kind, what = STEPS[step]
        assert kind == "answer" or what in PATHS[path], (step, path)


@pytest.mark.parametrize(("point", "path"), CASES, ids=[f"{p}-{q}" for p, q in CASES])
async def test_the_treasury_crashed_at_each_step_ends_the_purchase_once(
    settings: LeagueSettings,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
    path: str,
) -> None:
    """Crashed at ``point`` on the way to ``path``, the treasury started again ends the
    purchase exactly once: the same answer asked twice, each step once in its stream, at most
    one stamp for its order, the change or refund issued once, and the supply invariant
    holds."""
    manifest = load_manifest(settings)
    treasury_key = PublicKey.from_text(manifest.treasury)
    buyer, friend = SigningKey.generate(), SigningKey.generate()
    pid = f"buy-{point}-{path}"
    title = "Escrow" if path == "refunded" else "Tally"
    notes: list[Chain] = []

    async def prepare(league: League) -> BuyRequest:
        if path == "refunded":  # the run of 3 stamped out before the purchase
            await league.mint.stamp(stamp_request(friend, manifest, [(title, "standard")] * 3))
        notes.extend(
            Chain(certificate=n, endorsements=())
            for n in (await league.faucet.claim(buyer, 50)).notes
        )
        if path == "rejected":  # the buyer gave the first note to a friend first
            given = [endorse(notes[0], buyer, friend.public, T0)]
            await answered(lambda: league.notary.notarize(given))
        return buy_request(
            buyer,
            manifest,
            title,
            [endorse(n, buyer, treasury_key, T0) for n in notes],
            purchase_id=pid,
            at=int(time.time()),
        )

    crossed = await bought_across_a_crash(settings, monkeypatch, point, path, prepare)
    answer = crossed.answer
    assert answer.outcome == path
    assert crossed.steps == PATHS[path]
    stamped = sum(
        1 for e in crossed.mint_events if isinstance(e, PrintStamped) and e.request_id == pid
    )
    if path == "delivered":
        assert stamped == 1
        assert answer.stamped is not None
        assert answer.stamped.issued_to == buyer.public.to_text()
        assert sorted(n.denomination for n in answer.change) == [5, 5, 5, 5]
    else:
        assert stamped == 0
        assert answer.change == []
    if path == "refunded":
        assert [(n.serial, n.issue) for n in answer.refund] == [
            (n.serial, n.issue + 1) for n in notes
        ]
    if path == "rejected":
        (proof,) = answer.proofs
        assert proof.verify() == buyer.public


async def test_a_purchase_is_three_commits_and_purchases_together_share_them(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A purchase with change takes three commits of the treasury (opened | notarized with
    its order signed | delivered, returned and closed with its change), a rejected one two.
    Eight purchases opened together share one commit and one read of what they check, and
    driven on together share everything after it: one submission to the notary, one request
    to the mint, two commits; each ends delivered with its steps once in its stream (Book
    V.5)."""

    # No resumer: the purchases here are driven by the test alone.
    async def no_rounds(buyer: Buyer, interval: float = 0) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(Buyer, "run", no_rounds)
    killer = Killer(None)  # counts the treasury's commits and calls; crashes nothing
    killer.install(monkeypatch)
    reads: Counter[str] = Counter()  # the reads of paid notes, in the treasury's transactions
    fetchrow = PostgresTransaction.fetchrow

    async def counted(tx: PostgresTransaction, statement: str, *args: object) -> Row | None:
        if "treasury.paying" in statement:
            reads["treasury.paying"] += 1
        return await fetchrow(tx, statement, *args)

    monkeypatch.setattr(PostgresTransaction, "fetchrow", counted)
    manifest = load_manifest(settings)
    to_treasury = PublicKey.from_text(manifest.treasury)
    now = int(time.time())

    async def request(
        league: League, pid: str, title: str = "Tally", spent_first: bool = False
    ) -> BuyRequest:
        buyer = SigningKey.generate()
        notes = [
            Chain(certificate=n, endorsements=())
            for n in (await league.faucet.claim(buyer, 50)).notes
        ]
        if spent_first:  # the first note given to a friend first: the payment is rejected
            friend = SigningKey.generate().public
            await answered(lambda: league.notary.notarize([endorse(notes[0], buyer, friend, T0)]))
        return buy_request(
            buyer,
            manifest,
            title,
            [endorse(n, buyer, to_treasury, T0) for n in notes],
            purchase_id=pid,
            at=now,
        )

    async with running(settings, killer) as league:
        for pid, outcome, commits in (
            ("alone-0001", "delivered", 3),
            ("alone-0002", "rejected", 2),
        ):
            alone = await request(league, pid, spent_first=outcome == "rejected")
            before = killer.writes["treasury"]
            assert (await answered(partial(league.treasury.buy, alone))).outcome == outcome
            assert killer.writes["treasury"] - before == commits

        # Runs of three standard prints (tests/harness/founding.py): the six common titles.
        commons = ("Tally", "Pairing", "Separation", "Escrow", "Reflection", "Exchange")
        requests = [await request(league, f"together-{k:04d}", commons[k % 6]) for k in range(8)]
        app = league.trio.instances["treasury"].server.app
        notary = league.trio.instances["notary"].server.app[NOTARY]
        await notary.treasury.catch_up(through=(await app[TREASURY_LOG].head()).size - 1)
        buyer = app[BUYER]
        token = APP.set(league.trio.instances["treasury"])  # the treasury's own work
        try:
            writes, calls = killer.writes["treasury"], killer.calls["treasury"]
            reads.clear()
            opened = await asyncio.gather(*(buyer._open(r, buyer._check(r)) for r in requests))
            assert killer.writes["treasury"] - writes == 1  # the eight opened together
            assert reads["treasury.paying"] == 1  # what they check, read once for all
            writes = killer.writes["treasury"]
            answers = await asyncio.gather(
                *(
                    buyer.drive(r.purchase_id, steps)
                    for r, steps in zip(requests, opened, strict=True)
                )
            )
        finally:
            APP.reset(token)
        assert [a.outcome for a in answers] == ["delivered"] * 8
        assert killer.writes["treasury"] - writes == 2
        assert killer.calls["treasury"] - calls == 2  # one submission, one request of orders
        for r in requests:
            assert await league.steps(r.purchase_id) == DELIVERED


async def test_the_resumer_leaves_a_purchase_in_its_drivers_hands_until_it_idles(
    settings: LeagueSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resumer drives only purchases whose latest step is RESUME_IDLE seconds old: one
    younger is its driver's (in this worker or another), and a second driver would only
    repeat its calls and lose the race for its commit. Once idle it drives it to its end."""

    async def no_rounds(buyer: Buyer, interval: float = 0) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(Buyer, "run", no_rounds)
    manifest = load_manifest(settings)
    owner = SigningKey.generate()
    async with running(settings, Killer(None)) as league:
        notes = [
            Chain(certificate=n, endorsements=())
            for n in (await league.faucet.claim(owner, 50)).notes
        ]
        request = buy_request(
            owner,
            manifest,
            "Tally",
            [endorse(n, owner, PublicKey.from_text(manifest.treasury), T0) for n in notes],
            purchase_id="idle-0001",
            at=int(time.time()),
        )
        buyer = league.trio.instances["treasury"].server.app[BUYER]
        await buyer._open(request, buyer._check(request))  # opened; its driver gone
        assert await buyer.resume_all() == 0
        assert await league.steps("idle-0001") == ["purchase-opened"]
        assert await buyer.resume_all(idle=0) == 1
        assert await league.steps("idle-0001") == DELIVERED


async def test_the_mint_down_during_a_buy_completes_once_it_is_back(
    settings: LeagueSettings, ports: tuple[int, int]
) -> None:
    """The mint is down when a purchase is made: it waits open (503 retry-later) after its
    payment is notarized and its order signed; once the mint is up, the treasury's resumer
    completes it, the same request answers delivered, and the mint stamped the order once."""
    here, mint_port = ports
    own = settings.model_copy(update={"port": here, "mint_url": f"http://127.0.0.1:{mint_port}"})
    server = TestServer(compose(own, [TREASURY, NOTARY_SERVICE]), host="127.0.0.1", port=here)
    await server.start_server()
    mint: TestServer | None = None
    try:
        url = str(server.make_url("")).rstrip("/")
        manifest = load_manifest(settings)
        buyer = SigningKey.generate()
        async with aiohttp.ClientSession() as session:
            faucet = Faucet(session, url, manifest)
            notes = [
                Chain(certificate=n, endorsements=()) for n in (await faucet.claim(buyer, 50)).notes
            ]
            request = buy_request(
                buyer,
                manifest,
                "Pairing",
                [endorse(n, buyer, PublicKey.from_text(manifest.treasury), T0) for n in notes],
                purchase_id="buy-mint-down",
                at=int(time.time()),
            )
            async with session.post(f"{url}/treasury/buy", json=request.to_wire()) as response:
                assert response.status == 503
                assert "mint" in (await response.text())
            async with LeagueClient(url) as league:
                with pytest.raises(LeagueProblem) as waiting:
                    await league.buy(request)
                assert waiting.value.slug == "retry-later"

            mint = TestServer(
                compose(settings.model_copy(update={"port": mint_port}), [MINT]),
                host="127.0.0.1",
                port=mint_port,
            )
            await mint.start_server()
            answer = await until_answered(session, url, request)
            assert answer.outcome == "delivered"
            assert sorted(n.denomination for n in answer.change) == [5, 5, 5, 5]
            steps = await checked(settings, faucet, "buy-mint-down")
            assert steps == DELIVERED
            assert stamps_of(await mint_stamps(mint), "buy-mint-down") == 1
    finally:
        if mint is not None:
            await mint.close()
        await server.close()
