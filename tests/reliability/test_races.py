"""The races: twenty requests at once over real HTTP, each from its own connection, against
the mint, the treasury and the notary served in one app. Exactly one of competing requests
takes effect; a request replayed concurrently takes effect once and every copy is answered as
the first was (Book V.6 "the first endorsement recorded at each hop wins", V.7; V.5's faucet
cap, L-12; docs/architecture.md §4 "one arbiter of transfers").

After each test the supply invariant and every projection rebuild are checked (test_buying's
``faucet`` fixture).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TypeVar

import pytest
from aiohttp.test_utils import TestServer
from pydantic import BaseModel

from apiclient.league import LeagueClient, LeagueProblem, NotaryConflict, stamp_request
from ledger.api.mint import StampAnswer, Stamped
from ledger.api.notary import NotarizeAnswer
from ledger.api.treasury import BuyAnswer, BuyRequest, ClaimAnswer, ClaimRequest, buy_request
from ledger.endorsements import Chain, endorse
from ledger.events import (
    MINT_EVENTS,
    NOTARY_EVENTS,
    TREASURY_EVENTS,
    HopRecorded,
    NoteIssued,
    PrintStamped,
    parse_event,
)
from ledger.keys import PublicKey, SigningKey
from services.mint.app import MINT_LOG
from services.notary.app import NOTARY_LOG
from services.treasury.app import TREASURY_LOG
from tests.harness.buying import faucet, league, purchase_steps, server, settings
from tests.harness.founding import make_settings
from tests.harness.trading import T0
from tests.harness.treasury import Faucet
from tests.reliability.crashing import answered
from tests.reliability.figures import record

__all__ = ["faucet", "league", "make_settings", "server", "settings"]

T = TypeVar("T")
WAYS = 20
DELIVERED_STEPS = [
    "purchase-opened",
    "payment-notarized",
    "order-signed",
    "print-delivered",
    "payment-returned",
    "purchase-closed",
]
_FIGURES: Counter[str] = Counter()


def counted(race: str, requests: int, invariants: int) -> None:
    _FIGURES["races_run"] += 1
    _FIGURES["requests_raced"] += requests
    _FIGURES["invariants_checked"] += invariants
    _FIGURES[f"race_{race}"] = 1


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    """The races run, recorded once the module's tests are done."""
    yield
    record("races", dict(_FIGURES))


async def at_once(
    league: LeagueClient, calls: Sequence[Callable[[LeagueClient], Awaitable[T]]]
) -> list[T | LeagueProblem]:
    """Every call at once, each over a connection of its own; a refusal is returned."""

    async def one(call: Callable[[LeagueClient], Awaitable[T]]) -> T | LeagueProblem:
        async with LeagueClient(league.base_url, timeout=120) as own:
            try:
                return await call(own)
            except LeagueProblem as problem:
                return problem

    return await asyncio.gather(*(one(call) for call in calls))


def notarizing(chains: list[Chain]) -> Callable[[LeagueClient], Awaitable[NotarizeAnswer]]:
    return lambda own: own.notarize(chains)


def claiming(request: ClaimRequest) -> Callable[[LeagueClient], Awaitable[ClaimAnswer]]:
    return lambda own: own.claim(request)


def chain_of(note: object) -> Chain:
    return Chain(certificate=note, endorsements=())  # type: ignore[arg-type]


async def hops_of(server: TestServer, serials: set[str]) -> list[HopRecorded]:
    return [
        body
        for e in await server.app[NOTARY_LOG].read(-1, 10_000)
        if isinstance(body := parse_event(e, NOTARY_EVENTS), HopRecorded)
        and body.endorsement.serial in serials
    ]


async def stamps_for(server: TestServer, request_id: str) -> list[PrintStamped]:
    return [
        body
        for e in await server.app[MINT_LOG].read(-1, 10_000)
        if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)
        and body.request_id == request_id
    ]


async def notes_for(server: TestServer, request_id: str) -> list[NoteIssued]:
    return [
        body
        for e in await server.app[TREASURY_LOG].read(-1, 10_000)
        if isinstance(body := parse_event(e, TREASURY_EVENTS), NoteIssued)
        and body.request_id == request_id
    ]


async def test_a_note_pair_spent_twenty_ways_at_once_moves_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """V.6, V.7: A signs the same two notes away to twenty keys at once: one request gets its
    two receipts, nineteen are refused 409 fraud with proof convicting A, and each note has one
    hop, to the winner."""
    a = SigningKey.generate()
    pair = [chain_of(n) for n in (await faucet.claim(a, 50)).notes]
    assert len(pair) == 2
    friends = [SigningKey.generate() for _ in range(WAYS)]
    answers = await at_once(
        league, [notarizing([endorse(n, a, f.public, T0) for n in pair]) for f in friends]
    )
    won = [x for x in answers if isinstance(x, NotarizeAnswer)]
    lost = [x for x in answers if isinstance(x, NotaryConflict)]
    assert (len(won), len(lost)) == (1, WAYS - 1), answers
    assert len(won[0].receipts) == 2
    for conflict in lost:
        assert (conflict.status, conflict.slug) == (409, "fraud")
        assert all(c.proof.verify() == a.public for c in conflict.conflicts)
    hops = await hops_of(server, {n.serial for n in pair})
    assert len(hops) == 2
    assert len({h.endorsement.to for h in hops}) == 1
    counted("note_pair_double_spend", WAYS, 4)


async def test_a_buy_racing_twenty_transfers_of_its_notes(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """V.5, V.6: a purchase paid with two notes and twenty transfers of the same notes to
    other keys, all at once: either the purchase is delivered and every transfer is refused,
    or one transfer wins and the purchase is rejected (nothing stamped); never both, each note
    has one hop from A."""
    a = SigningKey.generate()
    pair = [chain_of(n) for n in (await faucet.claim(a, 50)).notes]
    treasury = PublicKey.from_text(faucet.manifest.treasury)
    pid = "race-buy-0001"
    buy = buy_request(
        a,
        faucet.manifest,
        "Tally",
        [endorse(n, a, treasury, T0) for n in pair],
        purchase_id=pid,
        at=int(time.time()),
    )
    friends = [SigningKey.generate() for _ in range(WAYS)]
    calls: list[Callable[[LeagueClient], Awaitable[object]]] = [
        lambda own: answered(lambda: own.buy(buy))
    ]
    calls += [notarizing([endorse(n, a, f.public, T0) for n in pair]) for f in friends]
    bought, *transfers = await at_once(league, calls)
    assert isinstance(bought, BuyAnswer), bought
    moved = [x for x in transfers if isinstance(x, NotarizeAnswer)]
    refused = [x for x in transfers if isinstance(x, NotaryConflict)]
    assert len(moved) + len(refused) == WAYS, transfers
    stamped = await stamps_for(server, pid)
    if bought.outcome == "delivered":
        assert (len(moved), len(stamped)) == (0, 1)
        assert await purchase_steps(server.app[TREASURY_LOG], pid) == DELIVERED_STEPS
    else:
        assert bought.outcome == "rejected", bought
        assert (len(moved), stamped) == (1, [])
    hops = [
        h
        for h in await hops_of(server, {n.serial for n in pair})
        if h.issue == 1 and h.endorsement.hop == 1
    ]
    assert len(hops) == 2
    assert len({h.endorsement.to for h in hops}) == 1
    counted("buy_against_transfers", WAYS + 1, 4)


async def test_the_faucet_cap_holds_under_twenty_claims_at_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """V.5's faucet, L-12: one key claims 10 marks twenty times at once against a cap of 50 a
    day: exactly 50 marks are issued to it, no more; every claim past the cap is refused 429
    allowance-exhausted; no note is issued twice."""
    a = SigningKey.generate()
    cap = faucet.manifest.policies.faucet_marks_per_day
    requests = [faucet.request(a, 10, request_id=f"cap-{i:04d}-claim") for i in range(WAYS)]
    answers = await at_once(league, [claiming(r) for r in requests])
    granted = [x for x in answers if isinstance(x, ClaimAnswer)]
    refused = [x for x in answers if isinstance(x, LeagueProblem)]
    assert sum(x.marks for x in granted) == cap == 50
    assert {(x.status, x.slug) for x in refused} == {(429, "allowance-exhausted")}
    issued = [n for r in requests for n in await notes_for(server, r.request_id)]
    assert sum(n.certificate.denomination for n in issued) == cap
    assert len({n.certificate.serial for n in issued}) == len(issued)
    counted("faucet_cap", WAYS, 3)


async def test_one_print_endorsed_twenty_ways_at_once_moves_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """V.6: a print signed away to twenty keys at once gets one receipt; nineteen requests are
    refused 409 fraud, and the print has one hop."""
    a = SigningKey.generate()
    answer = await league.stamp(stamp_request(a, faucet.manifest, [("Tally", "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped)
    print_chain = chain_of(item.certificate)
    answers = await at_once(
        league,
        [
            notarizing([endorse(print_chain, a, SigningKey.generate().public, T0 + i)])
            for i in range(WAYS)
        ],
    )
    assert sum(isinstance(x, NotarizeAnswer) for x in answers) == 1
    assert sum(isinstance(x, NotaryConflict) for x in answers) == WAYS - 1
    assert len(await hops_of(server, {item.certificate.serial})) == 1
    counted("print_double_endorsement", WAYS, 3)


def same_answers(answers: Sequence[object]) -> object:
    """Every copy answered, and answered the same; where the answer says whether it repeats an
    earlier one (``replayed``), exactly one copy took effect and every other is its replay."""
    assert not [x for x in answers if isinstance(x, LeagueProblem)], answers
    models = [x for x in answers if isinstance(x, BaseModel)]
    assert len(models) == len(answers), answers
    bodies = [x.model_dump(exclude={"replayed"}) for x in models]
    assert all(body == bodies[0] for body in bodies), answers
    flags = [x.replayed for x in models if hasattr(x, "replayed")]
    if flags:
        assert flags.count(False) == 1, flags
    return answers[0]


async def test_a_claim_replayed_twenty_times_at_once_issues_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """One claim request sent twenty times at once: each copy is answered with the first's
    notes, and its notes are issued once (the faucet is idempotent by request id)."""
    request: ClaimRequest = faucet.request(
        SigningKey.generate(), 30, request_id="replayed-claim-0001"
    )
    answers = await at_once(league, [lambda own: own.claim(request)] * WAYS)
    first = same_answers(answers)
    assert isinstance(first, ClaimAnswer)
    issued = await notes_for(server, request.request_id)
    assert sorted(n.certificate.serial for n in issued) == sorted(n.serial for n in first.notes)
    counted("claim_replayed", WAYS, 2)


async def test_a_stamp_replayed_twenty_times_at_once_stamps_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """One stamp request sent twenty times at once: each copy is answered with the first's
    certificate, and the mint stamped one print for it."""
    request = stamp_request(
        SigningKey.generate(),
        faucet.manifest,
        [("Tally", "standard")],
        request_id="replayed-stamp-0001",
    )
    answers = await at_once(league, [lambda own: own.stamp(request)] * WAYS)
    first = same_answers(answers)
    assert isinstance(first, StampAnswer)
    (stamped,) = await stamps_for(server, request.request_id)
    (item,) = first.items
    assert isinstance(item, Stamped)
    assert stamped.certificate == item.certificate
    counted("stamp_replayed", WAYS, 2)


async def test_a_buy_replayed_twenty_times_at_once_buys_once(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    """V.5: one purchase sent twenty times at once (each copy resent while the purchase waits,
    503): every copy ends with the first's answer; each step is once in its stream, the mint
    stamped its order once and its change was issued once."""
    a = SigningKey.generate()
    treasury = PublicKey.from_text(faucet.manifest.treasury)
    payment = [endorse(chain_of(n), a, treasury, T0) for n in (await faucet.claim(a, 50)).notes]
    request: BuyRequest = buy_request(
        a, faucet.manifest, "Tally", payment, purchase_id="replayed-buy-0001", at=int(time.time())
    )
    answers = await at_once(league, [lambda own: answered(lambda: own.buy(request))] * WAYS)
    first = same_answers(answers)
    assert isinstance(first, BuyAnswer)
    assert first.outcome == "delivered"
    pid = request.purchase_id
    assert await purchase_steps(server.app[TREASURY_LOG], pid) == DELIVERED_STEPS
    assert len(await stamps_for(server, pid)) == 1
    change = await notes_for(server, pid)
    assert sorted(n.certificate.serial for n in change) == sorted(n.serial for n in first.change)
    counted("buy_replayed", WAYS, 4)


@pytest.mark.parametrize("copies", [2, WAYS])
async def test_duplicates_of_one_claim_in_one_group_are_answered_as_replays(
    faucet: Faucet, league: LeagueClient, server: TestServer, copies: int
) -> None:
    """Copies of one claim that reach the treasury's writer in one group (sent at once, over
    a single connection each, after a claim that keeps the writer busy) are decided as one
    claim and its replays: every copy is answered the first's notes, none fails the group."""
    busy = [
        faucet.request(SigningKey.generate(), 50, request_id=f"busy-{i:04d}-claim")
        for i in range(10)
    ]
    request = faucet.request(SigningKey.generate(), 20, request_id="grouped-claim-0001")
    answers = await at_once(league, [*map(claiming, busy), *[claiming(request)] * copies])
    assert not [x for x in answers if isinstance(x, LeagueProblem)], answers
    first = same_answers(answers[len(busy) :])
    assert isinstance(first, ClaimAnswer)
    assert len(await notes_for(server, request.request_id)) == len(first.notes)
    counted(f"claim_duplicates_in_a_group_{copies}", copies + len(busy), 2)
