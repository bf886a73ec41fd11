"""A treasury killed with SIGKILL while claims pour in loses nothing and doubles nothing: a
restarted `league serve treasury` holds every answered claim's notes exactly once and answers
every claim again as the same notes."""

from __future__ import annotations

import asyncio
import signal

import aiohttp
import asyncpg

from apiclient.league import LeagueProblem
from ledger.api.treasury import ClaimAnswer, ClaimRequest
from ledger.keys import SigningKey
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.settings import LeagueSettings
from tests.harness.served import GUARD_SECONDS, serve_child
from tests.harness.treasury import Faucet, check_supply


async def test_a_killed_treasury_loses_and_doubles_nothing(settings: LeagueSettings) -> None:
    """Claims by 60 keys run while the treasury process is SIGKILLed after the first answers;
    a restarted treasury answers every claim (those answered before the kill, those cut off
    by it and those never sent) with notes the log holds exactly once, replays the answered
    ones unchanged, and the supply invariant holds."""
    manifest = load_manifest(settings)
    owners = [SigningKey.generate() for _ in range(60)]
    answered: dict[str, ClaimAnswer] = {}
    treasury, url = await serve_child(settings, "treasury")
    async with aiohttp.ClientSession() as session:
        faucet = Faucet(session, url, manifest)
        requests: list[ClaimRequest] = [
            faucet.request(owner, 50, request_id=f"claim-kill-{i:04d}")
            for i, owner in enumerate(owners)
        ]

        async def claim_all() -> None:
            for request in requests:
                try:
                    answered[request.request_id] = await faucet.post(request.to_wire())
                except (aiohttp.ClientError, LeagueProblem):
                    return  # the treasury is gone

        claiming = asyncio.create_task(claim_all())
        try:
            for _ in range(GUARD_SECONDS * 100):
                if len(answered) >= 5:
                    break
                await asyncio.sleep(0.01)
        finally:
            treasury.send_signal(signal.SIGKILL)
            await treasury.wait()
        await claiming
        before = dict(answered)
        assert 5 <= len(before) < len(requests)

        treasury, url = await serve_child(settings, "treasury")
        try:
            faucet = Faucet(session, url, manifest)
            again = [await faucet.post(request.to_wire()) for request in requests]
            for request, answer in zip(requests, again, strict=True):
                if request.request_id in before:
                    assert answer.replayed
                    assert answer.notes == before[request.request_id].notes
            notes = [note for answer in again for note in answer.notes]
            assert sum(answer.marks for answer in again) == 50 * len(requests)
            key = load_service_key(settings, manifest, "treasury", None)
            async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
                store = PostgresEventStore(
                    pool, schema="treasury", origin=f"{manifest.league}/treasury", key=key
                )
                events = await store.read(-1, 1000)
                assert [e.body["certificate"] for e in events] == [
                    n.to_wire() for n in sorted(notes, key=lambda n: n.event)
                ]
                assert (await store.verify_all()).events == len(notes)
                await check_supply(faucet, store)
        finally:
            treasury.send_signal(signal.SIGTERM)
            await treasury.wait()
