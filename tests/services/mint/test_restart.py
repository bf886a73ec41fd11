"""A mint killed with SIGKILL while stamps pour in loses nothing and doubles nothing: a
restarted `league serve mint` holds every answered stamp exactly once, answers each stamp
request sent again as the same print (a replay), stamps those never answered once, and its log
verifies and folds to its tables (docs/architecture.md §4; Book V.4)."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter

import asyncpg

from apiclient.league import LeagueClient, LeagueProblem, LeagueUnreachable, stamp_request
from ledger.api.mint import StampAnswer, Stamped
from ledger.catalog import PLAYING
from ledger.events import MINT_EVENTS, PrintStamped, parse_event
from ledger.keys import SigningKey
from ledger.requests import StampRequest
from services.eventlog import PostgresEventStore
from services.kernel.founding import load_manifest, load_service_key
from services.kernel.projections import rebuild
from services.kernel.settings import LeagueSettings
from services.mint.projection import PROJECTION
from tests.harness.served import GUARD_SECONDS, serve_child

#: Stamps answered before the kill.
BEFORE_KILL = 5


def printed(answer: StampAnswer) -> Stamped:
    (item,) = answer.items
    assert isinstance(item, Stamped), item
    return item


async def test_a_killed_mint_loses_and_doubles_nothing(settings: LeagueSettings) -> None:
    """Stamps of 20 titles by 20 keys run while the mint process is SIGKILLed once the first
    are answered; a restarted mint answers every request (those answered before the kill as
    replays of the same print, those cut off by it or never sent with one print each), its log
    holds one ``print-stamped`` per request, the print it answered, and verifies, and its
    tables are what the log folds to."""
    manifest = load_manifest(settings)
    titles = [card.name for card in PLAYING][:20]
    requests: list[StampRequest] = [
        stamp_request(
            SigningKey.generate(), manifest, [(title, "standard")], request_id=f"stamp-kill-{i:04d}"
        )
        for i, title in enumerate(titles)
    ]
    answered: dict[str, StampAnswer] = {}
    enough = asyncio.Event()
    mint, url = await serve_child(settings, "mint")

    async def stamp_all(league: LeagueClient) -> None:
        for request in requests:
            try:
                answered[request.request_id] = await league.stamp(request)
            except (LeagueUnreachable, LeagueProblem):
                return  # the mint is gone
            if len(answered) >= BEFORE_KILL:
                enough.set()

    async with LeagueClient(url) as league:
        stamping = asyncio.create_task(stamp_all(league))
        try:
            await asyncio.wait_for(enough.wait(), GUARD_SECONDS)
        finally:
            mint.send_signal(signal.SIGKILL)
            assert await mint.wait() == -signal.SIGKILL
        await stamping
    before = dict(answered)
    assert BEFORE_KILL <= len(before) < len(requests)

    mint, url = await serve_child(settings, "mint")
    try:
        async with LeagueClient(url) as league:
            again = [await league.stamp(request) for request in requests]
        for request, answer in zip(requests, again, strict=True):
            if request.request_id in before:
                assert answer.replayed
                assert printed(answer) == printed(before[request.request_id])
        key = load_service_key(settings, manifest, "mint", None)
        async with asyncpg.create_pool(settings.database, min_size=1, max_size=2) as pool:
            store = PostgresEventStore(
                pool, schema="mint", origin=f"{manifest.league}/mint", key=key
            )
            stamps = [
                body
                for e in await store.read(-1, 1000)
                if isinstance(body := parse_event(e, MINT_EVENTS), PrintStamped)
            ]
            assert Counter(s.request_id for s in stamps) == {r.request_id: 1 for r in requests}
            by_request = {s.request_id: s.certificate for s in stamps}
            for request, answer in zip(requests, again, strict=True):
                assert by_request[request.request_id] == printed(answer).certificate
            assert (await store.verify_all()).events == len(requests)
            assert (await rebuild(store, PROJECTION, commit=False)).agrees
    finally:
        mint.send_signal(signal.SIGTERM)
        await mint.wait()
