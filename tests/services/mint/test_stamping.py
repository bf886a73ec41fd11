"""POST /mint/stamp over real HTTP on real PostgreSQL: serials, runs, replays and refusals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, LeagueProblem, stamp_request, verify_stamped
from ledger.address import address_of
from ledger.api.mint import Refused, StampAnswer, Stamped
from ledger.keys import SigningKey
from ledger.requests import StampRequest
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from services.mint.stamping import MAX_CLOCK_SKEW
from tests.harness.founding import TEST_POLICIES
from tests.harness.mint import serve


def serials(answer: StampAnswer) -> list[str]:
    return [item.certificate.serial for item in answer.items if isinstance(item, Stamped)]


def refusals(answer: StampAnswer) -> list[tuple[str, str, str]]:
    return [(i.title, i.finish, i.problem) for i in answer.items if isinstance(i, Refused)]


async def refused_with(league: LeagueClient, request: StampRequest) -> LeagueProblem:
    with pytest.raises(LeagueProblem) as caught:
        await league.stamp(request)
    return caught.value


async def post_raw(server: TestServer, body: bytes | dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST a body as-is (no client-side validation) and read the problem it gets."""
    async with aiohttp.ClientSession() as session:
        kwargs: dict[str, Any] = (
            {"json": body}
            if isinstance(body, dict)
            else {"data": body, "headers": {"Content-Type": "application/json"}}
        )
        async with session.post(server.make_url("/mint/stamp"), **kwargs) as response:
            assert response.content_type == "application/problem+json"
            return response.status, await response.json(content_type=None)


async def league_raw_retry_after(server: TestServer, request: StampRequest) -> int:
    """The Retry-After header of a refused stamp request, in seconds."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.make_url("/mint/stamp"), json=request.to_wire()) as response,
    ):
        assert response.status == 429
        return int(response.headers["Retry-After"])


async def test_stamp_issues_true_serials_to_the_owner(league: LeagueClient) -> None:
    """Each finish draws from its own range: standard 0001-0003, gilt 0004-0005, holofoil 0006;
    certificates are mint-signed, issued to the owner and name their event index."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    answer = await league.stamp(
        stamp_request(
            owner,
            manifest,
            [
                ("Tally", "standard"),
                ("Model-A", "gilt"),
                ("Tally", "standard"),
                ("Zenoseal", "holofoil"),
            ],
        )
    )
    assert not answer.replayed
    assert serials(answer) == [
        "CZ-TALLY-0001",
        "CZ-MODEL-A-0004",
        "CZ-TALLY-0002",
        "CZ-ZENOSEAL-0006",
    ]
    verify_stamped(answer, manifest, owner.public)
    events = [item.certificate.event for item in answer.items if isinstance(item, Stamped)]
    assert events == [0, 1, 2, 3]
    assert (answer.allowance.used_today, answer.allowance.remaining_today) == (4, 46)


async def test_run_exhaustion_at_the_boundary(league: LeagueClient) -> None:
    """A run of 3: the 4th print is refused with run-exhausted while the rest of the batch
    is served, and later requests of that finish are refused too; other finishes go on."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    first = await league.stamp(
        stamp_request(owner, manifest, [("Tally", "standard")] * 4 + [("Pairing", "standard")])
    )
    assert serials(first) == ["CZ-TALLY-0001", "CZ-TALLY-0002", "CZ-TALLY-0003", "CZ-PAIRING-0001"]
    assert refusals(first) == [("Tally", "standard", "run-exhausted")]
    assert isinstance(first.items[3], Refused)
    assert "exhausted" in first.items[3].reason
    later = await league.stamp(
        stamp_request(owner, manifest, [("Tally", "standard"), ("Tally", "gilt")])
    )
    assert refusals(later) == [("Tally", "standard", "run-exhausted")]
    assert serials(later) == ["CZ-TALLY-0004"]
    census = await league.census()
    tally = next(t for t in census.titles if t.title == "Tally")
    assert (tally.finishes["standard"].stamped, tally.finishes["standard"].remaining) == (3, 0)


async def test_replay_answers_the_same_certificates(league: LeagueClient) -> None:
    """The same signed request twice: the same certificates, nothing new stamped or logged."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    request = stamp_request(owner, manifest, [("Escrow", "gilt"), ("Escrow", "standard")])
    first = await league.stamp(request)
    census_before = await league.census()
    feed_before = await league.events()
    again = await league.stamp(request)
    assert again.replayed
    assert again.items == first.items
    assert again.allowance.used_today == 2
    census_after = await league.census()
    assert census_after.titles == census_before.titles
    assert (await league.events()).events == feed_before.events


async def test_request_id_reused_for_another_body_is_409(league: LeagueClient) -> None:
    """Reusing a request id for a different body is refused with request-id-reused (409)."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    first = stamp_request(owner, manifest, [("Turn", "standard")], request_id="order-0001")
    await league.stamp(first)
    other = stamp_request(owner, manifest, [("Turn", "gilt")], request_id="order-0001")
    problem = await refused_with(league, other)
    assert (problem.status, problem.slug) == (409, "request-id-reused")


async def test_same_request_id_from_another_key_is_its_own(league: LeagueClient) -> None:
    """Request ids are per key: another owner may use the same id for its own request."""
    manifest = await league.manifest()
    ids = "shared-id-1"
    a = await league.stamp(
        stamp_request(SigningKey.generate(), manifest, [("Fork", "standard")], request_id=ids)
    )
    b = await league.stamp(
        stamp_request(SigningKey.generate(), manifest, [("Fork", "standard")], request_id=ids)
    )
    assert serials(a) == ["CZ-FORK-0001"]
    assert serials(b) == ["CZ-FORK-0002"]


async def test_forged_signature_is_refused(league: LeagueClient) -> None:
    """A request altered after signing (holofoil asked where standard was signed) is refused."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    signed = stamp_request(owner, manifest, [("Exchange", "standard")]).to_wire()
    signed["prints"] = [{"title": "Exchange", "finish": "holofoil"}]
    problem = await refused_with(league, StampRequest.model_validate(signed))
    assert (problem.status, problem.slug) == (422, "bad-signature")
    assert (await league.census()).totals["all"].stamped == 0


async def test_request_signed_by_another_key_is_refused(league: LeagueClient) -> None:
    """A request naming one owner but signed by another key is refused: nobody stamps to a
    key they do not hold."""
    manifest = await league.manifest()
    victim, signer = SigningKey.generate(), SigningKey.generate()
    forged = StampRequest.sign(
        signer,
        **{
            **stamp_request(victim, manifest, [("Gram", "gilt")]).body(),
            "owner": victim.public.to_text(),
        },
    )
    problem = await refused_with(league, forged)
    assert (problem.status, problem.slug) == (422, "bad-signature")


async def test_unknown_title_is_refused(league: LeagueClient, server: TestServer) -> None:
    """A title the runs do not hold (or not spelled as printed) is unknown-title (422)."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    for title in ("Sponsorship", "Jester", "model-a"):
        problem = await refused_with(league, stamp_request(owner, manifest, [(title, "standard")]))
        assert (problem.status, problem.slug) == (422, "unknown-title"), title


async def test_unknown_finish_is_refused(server: TestServer, league: LeagueClient) -> None:
    """A finish outside the runs (the misprint included) is invalid-object (422)."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    body = stamp_request(owner, manifest, [("Tally", "standard")]).body()
    for finish in ("misprint", "chrome"):
        body["prints"] = [{"title": "Tally", "finish": finish}]
        status, problem = await post_raw(server, {**body, "sig": "A" * 86})
        assert (status, problem["type"]) == (422, "/problems/invalid-object")
        assert "finish" in problem["detail"]


async def test_batch_over_the_published_limit_is_refused(league: LeagueClient) -> None:
    """More prints than the manifest's batch limit (10 here) is too-large (413)."""
    manifest = await league.manifest()
    assert manifest.policies.stamp_batch_limit == 10
    owner = SigningKey.generate()
    problem = await refused_with(league, stamp_request(owner, manifest, [("Trace", "gilt")] * 11))
    assert (problem.status, problem.slug) == (413, "too-large")
    ok = await league.stamp(
        stamp_request(
            owner,
            manifest,
            [("Trace", "standard")] * 3 + [("Trace", "gilt")] * 2 + [("Trace", "holofoil")] * 5,
        )
    )
    assert len(serials(ok)) == 6


async def test_oversized_body_is_refused(server: TestServer) -> None:
    """A body over the stamp endpoint's limit is too-large (413) before it is parsed."""
    status, problem = await post_raw(server, b'{"pad": "' + b"x" * 40_000 + b'"}')
    assert (status, problem["type"]) == (413, "/problems/too-large")


@pytest.mark.parametrize("raw", [b"{", b"[1, 2", b'{"kind": "stamp-request", "kind": 1}', b"nul"])
async def test_malformed_json_is_refused(server: TestServer, raw: bytes) -> None:
    """A body that is not JSON (or repeats a key) is malformed (400)."""
    status, problem = await post_raw(server, raw)
    assert (status, problem["type"]) == (400, "/problems/malformed")


async def test_wrong_kind_is_refused(server: TestServer) -> None:
    """A signed object of another kind is not a stamp request (unknown-kind, 400)."""
    status, problem = await post_raw(server, {"kind": "endorsement"})
    assert (status, problem["type"]) == (400, "/problems/unknown-kind")


async def test_request_for_another_league_is_refused(
    league: LeagueClient, make_settings: Callable[..., LeagueSettings]
) -> None:
    """A request made under another league's manifest is wrong-league (422)."""
    other = load_manifest(make_settings(name="Another league"))
    owner = SigningKey.generate()
    problem = await refused_with(league, stamp_request(owner, other, [("Tally", "standard")]))
    assert (problem.status, problem.slug) == (422, "wrong-league")


async def test_stale_request_is_refused(league: LeagueClient) -> None:
    """A request signed outside the clock window (either way) is stale-request (422)."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    for skew in (-MAX_CLOCK_SKEW - 60, MAX_CLOCK_SKEW + 60):
        request = stamp_request(
            owner, manifest, [("Tally", "standard")], at=int(time.time()) + skew
        )
        problem = await refused_with(league, request)
        assert (problem.status, problem.slug) == (422, "stale-request")


async def test_daily_allowance_is_enforced_and_shown(
    make_settings: Callable[..., LeagueSettings],
) -> None:
    """With an allowance of 5 a day: a batch crossing it is served up to 5 and the rest
    refused per item; the next request is 429 with Retry-After until midnight UTC; the owner's
    census shows the allowance."""
    settings = make_settings(
        policies=TEST_POLICIES.model_copy(update={"stamp_allowance_per_day": 5})
    )
    server = await serve(settings)
    try:
        async with LeagueClient(str(server.make_url(""))) as league:
            manifest = await league.manifest()
            owner = SigningKey.generate()
            await league.stamp(stamp_request(owner, manifest, [("Plenum", "standard")] * 3))
            answer = await league.stamp(stamp_request(owner, manifest, [("Stage", "standard")] * 4))
            assert serials(answer) == ["CZ-STAGE-0001", "CZ-STAGE-0002"]
            assert refusals(answer) == [("Stage", "standard", "allowance-exhausted")] * 2
            assert answer.allowance.remaining_today == 0
            problem = await refused_with(
                league, stamp_request(owner, manifest, [("Stage", "standard")])
            )
            assert (problem.status, problem.slug) == (429, "allowance-exhausted")
            retry = await league_raw_retry_after(
                server, stamp_request(owner, manifest, [("Stage", "gilt")])
            )
            assert 0 < retry <= 24 * 3600
            holdings = (await league.owner(address_of(owner.public))).keys
            assert [(h.total, h.allowance.used_today, h.allowance.per_day) for h in holdings] == [
                (5, 5, 5)
            ]
            other = await league.stamp(
                stamp_request(SigningKey.generate(), manifest, [("Stage", "standard")])
            )
            assert serials(other) == ["CZ-STAGE-0003"]
    finally:
        await server.close()


async def test_concurrent_requests_never_share_a_serial(league: LeagueClient) -> None:
    """Eight owners stamping at once draw distinct, contiguous serials and event indices."""
    manifest = await league.manifest()
    owners = [SigningKey.generate() for _ in range(8)]
    answers = await asyncio.gather(
        *(
            league.stamp(
                stamp_request(o, manifest, [("Hemiring", "standard"), ("Hemiring", "gilt")])
            )
            for o in owners
        )
    )
    stamped = sorted(s for a in answers for s in serials(a))
    assert stamped == [
        "CZ-HEMIRING-0001",
        "CZ-HEMIRING-0002",
        "CZ-HEMIRING-0003",
        "CZ-HEMIRING-0004",
        "CZ-HEMIRING-0005",
    ]
    events = sorted(i.certificate.event for a in answers for i in a.items if isinstance(i, Stamped))
    assert events == list(range(5))
    assert sum(len(refusals(a)) for a in answers) == 11


async def test_the_same_request_at_once_stamps_once(league: LeagueClient) -> None:
    """A request sent several times at once (one transaction or several) stamps once; every
    answer carries the same certificates and exactly one is not a replay."""
    manifest = await league.manifest()
    request = stamp_request(SigningKey.generate(), manifest, [("Selection", "standard")] * 2)
    answers = await asyncio.gather(*(league.stamp(request) for _ in range(5)))
    assert sorted(a.replayed for a in answers) == [False, True, True, True, True]
    assert all(a.items == answers[0].items for a in answers)
    assert serials(answers[0]) == ["CZ-SELECTION-0001", "CZ-SELECTION-0002"]
    assert (await league.census()).totals["all"].stamped == 2


async def test_conflicting_bodies_at_once_stamp_one(league: LeagueClient) -> None:
    """Two bodies under one request id sent at once: the first is stamped, the other is a
    409, and only the first's prints are drawn."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    first = stamp_request(owner, manifest, [("Interface", "standard")], request_id="clash-001")
    second = stamp_request(owner, manifest, [("Interface", "gilt")], request_id="clash-001")
    results = await asyncio.gather(
        league.stamp(first), league.stamp(second), return_exceptions=True
    )
    answers = [r for r in results if isinstance(r, StampAnswer)]
    problems = [r for r in results if isinstance(r, LeagueProblem)]
    assert len(answers) == 1
    assert [p.slug for p in problems] == ["request-id-reused"]
    assert (await league.census()).totals["all"].stamped == 1
