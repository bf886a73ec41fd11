"""POST /treasury/claim over real HTTP on real PostgreSQL: the faucet's notes, its daily cap,
replays and refusals; GET /treasury after each (the conftest checks the supply invariant)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueProblem
from ledger.api.treasury import ClaimAnswer, TreasurySupply, claim_request, claim_work
from ledger.endorsements import Chain, endorse
from ledger.errors import AllowanceExhausted, RequestIdReused
from ledger.events import NoteReturned
from ledger.keys import PublicKey, SigningKey
from ledger.note_set import NoteIssue, NoteSet
from ledger.work import challenge, meets
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.treasury import tables
from services.treasury.app import TREASURY_LOG
from services.treasury.claiming import MAX_CLOCK_SKEW, Presented, claim_group, present
from services.treasury.projection import PROJECTION
from services.treasury.treasury import Treasury
from tests.harness.founding import TEST_POLICIES
from tests.harness.treasury import Faucet, check_supply, refused, serve, throttled_faucet


def notes_of(answer: ClaimAnswer) -> list[tuple[str, int]]:
    return [(note.serial, note.issue) for note in answer.notes]


async def test_claims_up_to_and_past_the_daily_cap(faucet: Faucet) -> None:
    """30 marks, then 30 more of which 20 are left, then nothing: each answer says what is
    left today; the notes are treasury-signed certificates of issue 1 made out to the
    claimant, numbered from 000001 per denomination, each naming its event; another key's
    day is its own."""
    owner, other = SigningKey.generate(), SigningKey.generate()
    first = await faucet.claim(owner, 30)
    assert (first.requested, first.marks, first.replayed) == (30, 30, False)
    assert notes_of(first) == [("CZ-M25-000001", 1), ("CZ-M5-000001", 1)]
    assert (first.faucet.per_day, first.faucet.claimed_today, first.faucet.left_today) == (
        50,
        30,
        20,
    )
    treasury_key = PublicKey.from_text(faucet.manifest.treasury)
    for seq, note in enumerate(first.notes):
        note.verify(treasury_key)
        faucet.manifest.check_certificate(note)
        assert note.issued_to == owner.public.to_text()
        assert note.event == seq
    second = await faucet.claim(owner, 30)
    assert (second.requested, second.marks, second.faucet.left_today) == (30, 20, 0)
    assert [n.serial for n in second.notes] == [f"CZ-M5-00000{k}" for k in range(2, 6)]
    with pytest.raises(LeagueProblem) as caught:
        await faucet.claim(owner, 1)
    assert refused(caught) == (429, "allowance-exhausted")
    assert "50 marks" in caught.value.problem.detail
    third = await faucet.claim(other, 50)
    assert notes_of(third) == [("CZ-M25-000002", 1), ("CZ-M25-000003", 1)]
    supply = await faucet.supply()
    assert supply.marks.circulation == 100
    by_denomination = {d.denomination: d for d in supply.denominations}
    assert (by_denomination[25].circulation, by_denomination[5].circulation) == (3, 5)
    assert by_denomination[25].reserve == 24_000 - 3


async def test_a_replayed_claim_issues_nothing_new(faucet: Faucet, server: TestServer) -> None:
    """The same signed claim twice answers the same notes, marked replayed, and the log holds
    them once; the request id reused for another body is refused (409)."""
    owner = SigningKey.generate()
    request = faucet.request(owner, 26, request_id="claim-replayed-1")
    first = await faucet.post(request.to_wire())
    again = await faucet.post(request.to_wire())
    assert again.replayed
    assert not first.replayed
    assert again.notes == first.notes
    assert again.faucet.left_today == first.faucet.left_today == 24
    assert (await server.app[TREASURY_LOG].head()).size == 2
    with pytest.raises(LeagueProblem) as caught:
        await faucet.claim(owner, 5, request_id="claim-replayed-1")
    assert refused(caught) == (409, "request-id-reused")


async def test_bad_claims_are_refused_and_issue_nothing(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """A body whose signature does not verify, a claim signed by another key, a nonce short
    of the price, a claim of no marks, a stale claim and a claim for another league are each
    refused with their problem, and the log stays empty."""
    policies = TEST_POLICIES.model_copy(update={"stamp_work": 3000})
    settings = make_settings(policies=policies)
    other_league = load_manifest(make_settings())
    server = await serve(settings)
    try:
        async with aiohttp.ClientSession() as session:
            faucet = Faucet(session, str(server.make_url("")).rstrip("/"), load_manifest(settings))
            owner = SigningKey.generate()
            good = faucet.request(owner, 50).to_wire()
            cases: list[tuple[dict[str, object], tuple[int, str]]] = [
                ({**good, "marks": 49}, (422, "bad-signature")),
                ({**good, "owner": SigningKey.generate().public.to_text()}, (422, "bad-signature")),
                ({**good, "marks": 0}, (422, "invalid-object")),
            ]
            price = claim_work(policies, 50)
            short = faucet.request(owner, 50, work=1)
            bound = challenge(short.to_wire())
            if not meets(bound, 0, short.work, price):
                cases.append((short.to_wire(), (422, "insufficient-work")))
            stale = faucet.request(owner, 50, at=1_800_000_000 - MAX_CLOCK_SKEW * 10)
            cases.append((stale.to_wire(), (422, "stale-request")))
            elsewhere = Faucet(session, faucet.url, other_league).request(owner, 5)
            cases.append((elsewhere.to_wire(), (422, "wrong-league")))
            assert len(cases) == 6
            for body, expected in cases:
                with pytest.raises(LeagueProblem) as caught:
                    await faucet.post(body)
                assert refused(caught) == expected, body
            assert (await server.app[TREASURY_LOG].head()).size == 0
            assert (await faucet.claim(owner, 50)).marks == 50  # the same key, a good claim
            await check_supply(faucet, server.app[TREASURY_LOG])
    finally:
        await server.close()


async def test_a_reserve_that_cannot_make_the_marks_refuses_the_claim(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """A note set of one M25 and three M1 (28 marks): 30 marks cannot be made (409, naming
    what the reserve holds), 28 can, and then not one mark more; the supply stays 28."""
    tiny = NoteSet(issues=(NoteIssue(denomination=25, count=1), NoteIssue(denomination=1, count=3)))
    settings = make_settings(note_set=tiny)
    server = await serve(settings)
    try:
        async with aiohttp.ClientSession() as session:
            faucet = Faucet(session, str(server.make_url("")).rstrip("/"), load_manifest(settings))
            owner, other = SigningKey.generate(), SigningKey.generate()
            with pytest.raises(LeagueProblem) as caught:
                await faucet.claim(owner, 30)
            assert refused(caught) == (409, "run-exhausted")
            assert "1 × M1" not in caught.value.problem.detail
            assert "3 × M1, 1 × M25" in caught.value.problem.detail
            answer = await faucet.claim(owner, 28)
            assert [n.denomination for n in answer.notes] == [25, 1, 1, 1]
            with pytest.raises(LeagueProblem) as caught:
                await faucet.claim(other, 1)
            assert refused(caught) == (409, "run-exhausted")
            supply = await faucet.supply()
            assert (supply.marks.supply, supply.marks.reserve) == (28, 0)
            await check_supply(faucet, server.app[TREASURY_LOG])
    finally:
        await server.close()


async def test_concurrent_claims_never_share_a_note(faucet: Faucet, server: TestServer) -> None:
    """Forty keys claim at once: every note is issued once, the log is dense and the serials
    of each denomination are 1..n."""
    owners = [SigningKey.generate() for _ in range(40)]
    answers = await asyncio.gather(*(faucet.claim(o, 50 - i % 7) for i, o in enumerate(owners)))
    serials = [note.serial for answer in answers for note in answer.notes]
    assert len(serials) == len(set(serials))
    assert sorted(note.event for a in answers for note in a.notes) == list(range(len(serials)))
    assert sum(a.marks for a in answers) == sum(50 - i % 7 for i in range(40))


class Clock:
    """A time a test sets and moves."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def __call__(self) -> datetime:
        return self.moment


async def test_the_next_utc_day_opens_the_faucet_again(settings: LeagueSettings) -> None:
    """The database's clock (set by the test through the store) decides the day: 50 marks at
    23:59:59.9 use the day up, 0.2 s later it is the next UTC day and 50 more are issued,
    recorded and counted on that day."""
    manifest = load_manifest(settings)
    key = load_service_key(settings, manifest, "treasury", None)
    clock = Clock(datetime(2026, 12, 31, 23, 59, 59, 900_000, tzinfo=UTC))
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(
            pool, schema="treasury", origin=f"{manifest.league}/treasury", key=key, clock=clock
        )
        await tables.bind_league(store, manifest)
        treasury = Treasury(manifest, key, store)
        owner = SigningKey.generate()

        def claim(marks: int, request_id: str) -> Presented:
            signed = claim_request(
                owner, manifest, marks, request_id=request_id, at=int(clock.moment.timestamp())
            )
            return present(treasury, signed)

        (first,) = await claim_group(treasury, [claim(50, "claim-day-1")])
        assert isinstance(first, ClaimAnswer)
        assert first.faucet.left_today == 0
        (late,) = await claim_group(treasury, [claim(1, "claim-day-2")])
        assert isinstance(late, AllowanceExhausted)
        assert late.retry_after == 1
        clock.moment += timedelta(seconds=0.2)
        (next_day,) = await claim_group(treasury, [claim(50, "claim-day-2")])
        assert isinstance(next_day, ClaimAnswer)
        assert (next_day.faucet.day, next_day.faucet.left_today) == ("2027-01-01", 0)
        days = await pool.fetch("SELECT day, marks FROM treasury.faucet ORDER BY day")
        assert [(r["day"].isoformat(), r["marks"]) for r in days] == [
            ("2026-12-31", 50),
            ("2027-01-01", 50),
        ]
        events = await store.read()
        assert [e.recorded_at.date().isoformat() for e in events] == ["2026-12-31"] * 2 + [
            "2027-01-01"
        ] * 2
        rows = await tables.supply(store)
        supply = TreasurySupply.of(manifest, {d: r.circulating for d, r in rows.items()}, "-")
        assert (supply.marks.supply, supply.marks.circulation) == (1_500_000, 100)
        assert (await rebuild(store, PROJECTION, commit=False)).agrees


async def test_a_source_claiming_too_fast_is_refused(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """A source network may claim source_prints_burst times at once: the next claim is a 429
    `rate-limited` with Retry-After, before its signature is even checked, and issues
    nothing."""
    async with throttled_faucet(make_settings, 2) as (faucet, server):
        for _ in range(2):
            await faucet.claim(SigningKey.generate(), 5)
        body = {**faucet.request(SigningKey.generate(), 5).to_wire(), "sig": "A" * 86}
        async with faucet.session.post(f"{faucet.url}/treasury/claim", json=body) as response:
            assert response.status == 429
            assert int(response.headers["Retry-After"]) >= 1
            assert (await response.json(content_type=None))["type"] == "/problems/rate-limited"
        assert (await server.app[TREASURY_LOG].head()).size == 2


async def test_a_returned_note_is_issued_again_under_its_next_issue(
    faucet: Faucet, server: TestServer
) -> None:
    """A note endorsed back to the treasury and returned (the event a purchase appends) is
    back in the reserve; the next claim gets it again as issue 2, a new certificate whose
    stream version follows the return, while the never-issued notes wait."""
    owner = SigningKey.generate()
    first = await faucet.claim(owner, 25)
    (note,) = first.notes
    chain = endorse(
        Chain(certificate=note, endorsements=()),
        owner,
        PublicKey.from_text(faucet.manifest.treasury),
        1_800_000_000,
    )
    store = server.app[TREASURY_LOG]
    returned = NoteReturned(
        serial=note.serial,
        issue=1,
        endorsement=chain.endorsements[0],
        notarized=0,
        purchase_id="buy-returns-1",
    )
    async with store.transaction() as tx:
        await tx.lock()
        (event,) = await tx.append_batch([returned.new_event(expected_version=1)])
        changes = PROJECTION.empty()
        PROJECTION.project(event, changes)
        await PROJECTION.write(tx, changes)
    assert (await faucet.supply()).marks.circulation == 0
    again = await faucet.claim(SigningKey.generate(), 50)
    assert notes_of(again) == [("CZ-M25-000001", 2), ("CZ-M25-000002", 1)]
    assert again.notes[0].event == 2
    events = await store.read()
    assert [(e.stream, e.stream_version) for e in events] == [
        ("note/CZ-M25-000001", 1),
        ("note/CZ-M25-000001", 2),
        ("note/CZ-M25-000001", 3),
        ("note/CZ-M25-000002", 1),
    ]


async def test_copies_of_one_claim_in_one_group_are_replays_of_the_first(
    settings: LeagueSettings,
) -> None:
    """A claim sent several times at once beside honest claims, all decided in one
    transaction: the first copy is granted, every later copy is answered as its replay (the
    same notes, not a 429 because the grant used the day up), a copy reusing the id for
    another body is refused 409, and the honest claims are granted: nothing fails the group
    (it failed 409 store-integrity, two answers stored for one id). Afterwards the same claim
    is answered the same from the store."""
    manifest = load_manifest(settings)
    key = load_service_key(settings, manifest, "treasury", None)
    async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(
            pool, schema="treasury", origin=f"{manifest.league}/treasury", key=key
        )
        await tables.bind_league(store, manifest)
        treasury = Treasury(manifest, key, store)
        now = int(datetime.now(UTC).timestamp())
        greedy, *honest = (SigningKey.generate() for _ in range(4))
        claim = present(
            treasury, claim_request(greedy, manifest, 50, request_id="claim-dup-1", at=now)
        )
        other = present(
            treasury, claim_request(greedy, manifest, 10, request_id="claim-dup-1", at=now)
        )
        fair = [
            present(treasury, claim_request(k, manifest, 30, request_id="claim-fair-1", at=now))
            for k in honest
        ]
        group = [fair[0], claim, claim, fair[1], other, claim, fair[2]]
        answers = await claim_group(treasury, group)
        first, *copies = (answers[i] for i in (1, 2, 5))
        assert isinstance(first, ClaimAnswer)
        assert not first.replayed
        for copy in copies:
            assert isinstance(copy, ClaimAnswer)
            assert (copy.replayed, copy.notes, copy.marks) == (True, first.notes, 50)
        assert isinstance(answers[4], RequestIdReused)
        for i in (0, 3, 6):
            answer = answers[i]
            assert isinstance(answer, ClaimAnswer)
            assert answer.marks == 30
        # A later group: the reused id refused first must not refuse the granted body's
        # copies after it (one did: the refusal had taken the id in its transaction).
        later = await claim_group(treasury, [other, claim, claim])
        assert isinstance(later[0], RequestIdReused)
        for copy in later[1:]:
            assert isinstance(copy, ClaimAnswer)
            assert (copy.replayed, copy.notes) == (True, first.notes)
        assert (await rebuild(store, PROJECTION, commit=False)).agrees
