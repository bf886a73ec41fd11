"""The feed follower over real HTTP: the notary's store follows the mint's feed.

Exactly once across crashes and restarts, and a feed that contradicts what it signed is
refused with the evidence kept (docs/architecture.md §4: the services follow and witness each
other)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.checkpoint import Checkpoint, log_verifier
from ledger.errors import BadSignatureError
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import Event
from ledger.manifest import LeagueManifest
from ledger.merkle import verify_inclusion
from services.eventlog import PostgresEventStore, StoreTransaction
from services.kernel.database import scratch_database
from services.kernel.follower import FeedFollower, FeedRefused
from services.kernel.settings import LeagueSettings
from tests.harness.mint import checkpoint_covering, serve

#: A guard against a hang, never a timing assertion.
GUARD = 60.0
APPLIED = "CREATE TABLE notary.applied (seq bigint NOT NULL, serial text NOT NULL)"


@pytest.fixture
async def pool(settings: LeagueSettings) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(settings.database, min_size=1, max_size=4)
    await pool.execute(APPLIED)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
def notary(pool: asyncpg.Pool) -> PostgresEventStore:
    """The following service's own store (a notary of the test league)."""
    return PostgresEventStore(
        pool, schema="notary", origin="test/notary", key=SigningKey.generate()
    )


async def record(tx: StoreTransaction, events: Sequence[Event]) -> None:
    """The test's projection of the mint's feed: one row per event applied."""
    await tx.execute(
        "INSERT INTO notary.applied SELECT * FROM unnest($1::bigint[], $2::text[])",
        [e.seq for e in events],
        [e.stream for e in events],
    )


def follower(
    notary: PostgresEventStore, league: LeagueClient, manifest: LeagueManifest, **options: object
) -> FeedFollower:
    return FeedFollower(
        store=notary,
        league=league,
        source="mint",
        origin=f"{manifest.league}/mint",
        key=PublicKey.from_text(manifest.mint),
        apply=options.pop("apply", record),  # type: ignore[arg-type]
        page=options.pop("page", 3),  # type: ignore[arg-type]
    )


async def stamp(league: LeagueClient, manifest: LeagueManifest, count: int) -> None:
    """Stamp ``count`` prints, two per request, each of a title not stamped before."""
    owner = SigningKey.generate()
    census = await league.census()
    fresh = [t.title for t in census.titles if t.finishes["standard"].stamped == 0]
    prints = [(title, "standard") for title in fresh[:count]]
    for start in range(0, count, 2):
        await league.stamp(stamp_request(owner, manifest, prints[start : start + 2]))


async def applied(pool: asyncpg.Pool) -> list[int]:
    return [row[0] for row in await pool.fetch("SELECT seq FROM notary.applied ORDER BY seq")]


async def test_follows_the_feed_page_by_page(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """Seven stamps are applied once each in pages of three; the position, Merkle edge and
    checkpoint are stored; a second catch-up finds nothing new."""
    manifest = await league.manifest()
    await stamp(league, manifest, 7)
    signed = Checkpoint.from_note(await checkpoint_covering(league, 7))
    following = follower(notary, league, manifest)
    assert await following.catch_up() == 7
    assert await applied(pool) == list(range(7))
    position = await following.position()
    assert position.next_seq == 7
    assert position.edge.root() == signed.root
    assert position.checkpoint is not None
    assert position.checkpoint.size == 7
    assert await following.catch_up() == 0
    await stamp(league, manifest, 2)
    await checkpoint_covering(league, 9)
    assert await following.catch_up() == 2
    assert await applied(pool) == list(range(9))


async def test_cancelled_in_the_middle_of_a_batch_applies_nothing_twice(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """A follower killed while applying its second page (its rows written, not committed)
    leaves the first page applied; a new follower resumes there, and every event is applied
    exactly once."""
    manifest = await league.manifest()
    await stamp(league, manifest, 7)
    await checkpoint_covering(league, 7)
    stuck = asyncio.Event()
    pages = 0

    async def hang_on_second_page(tx: StoreTransaction, events: Sequence[Event]) -> None:
        nonlocal pages
        pages += 1
        await record(tx, events)
        if pages == 2:
            stuck.set()
            await asyncio.Event().wait()  # never returns: the process dies here

    task = asyncio.create_task(
        follower(notary, league, manifest, apply=hang_on_second_page).catch_up()
    )
    await asyncio.wait_for(stuck.wait(), 10)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert await applied(pool) == [0, 1, 2]
    restarted = follower(notary, league, manifest)
    assert (await restarted.position()).next_seq == 3
    assert await restarted.catch_up() == 4
    assert await applied(pool) == list(range(7))


async def test_a_failing_apply_rolls_back_its_page_only(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """An error while applying a page rolls that page and its position back together."""
    manifest = await league.manifest()
    await stamp(league, manifest, 5)
    await checkpoint_covering(league, 5)

    async def fail_at_seq_four(tx: StoreTransaction, events: Sequence[Event]) -> None:
        await record(tx, events)
        if any(e.seq == 4 for e in events):
            raise RuntimeError("the machine lost power")

    with pytest.raises(RuntimeError, match="power"):
        await follower(notary, league, manifest, apply=fail_at_seq_four).catch_up()
    assert await applied(pool) == [0, 1, 2]
    assert await follower(notary, league, manifest).catch_up() == 2
    assert await applied(pool) == list(range(5))


async def test_an_edited_event_is_refused_and_kept(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """An event whose body was changed after it was signed is never applied: the follower
    stops before it, the served event is kept as evidence, and the position stays."""
    manifest = await league.manifest()
    await stamp(league, manifest, 5)
    await checkpoint_covering(league, 5)
    following = follower(notary, league, manifest)
    await pool.execute(
        "UPDATE mint.events SET body = jsonb_set(body, '{request_id}', '\"forged-request\"')"
        " WHERE seq = 4"
    )
    with pytest.raises(FeedRefused, match="event 4"):
        await following.catch_up()
    assert await applied(pool) == [0, 1, 2]
    evidence = await pool.fetchrow("SELECT reason, served_event FROM notary.feed_evidence")
    assert "leaf hash" in evidence["reason"]
    assert '"forged-request"' in evidence["served_event"]


async def test_a_forked_history_is_refused_with_both_checkpoints(
    settings: LeagueSettings,
    league: LeagueClient,
    notary: PostgresEventStore,
    pool: asyncpg.Pool,
    server_url: str,
    template_database: str,
    tmp_path: Path,
) -> None:
    """The same mint key serving another history (an old backup restored and stamped again)
    signs a checkpoint inconsistent with the one the follower verified: refused, and the two
    signed checkpoints, which convict the key, are kept."""
    manifest = await league.manifest()
    await stamp(league, manifest, 3)
    await checkpoint_covering(league, 3)
    assert await follower(notary, league, manifest).catch_up() == 3
    # Migrated (a copy of the template); a context manager that blocks: in a thread.
    fork = scratch_database(server_url, "cz_fork", template=template_database)
    fork_url = await asyncio.to_thread(fork.__enter__)
    try:
        # The same league's keys and manifest on another host, without the checkpoint this
        # one keeps (which would refuse the fork before it served anything).
        elsewhere = tmp_path / "elsewhere"
        shutil.copytree(settings.data_dir, elsewhere, ignore=shutil.ignore_patterns("checkpoints"))
        forked = await serve(
            settings.model_copy(update={"database_url": fork_url, "data_dir": elsewhere})
        )
        try:
            async with LeagueClient(str(forked.make_url(""))) as other:
                await stamp(other, manifest, 5)
                await checkpoint_covering(other, 5)
                with pytest.raises(FeedRefused, match="inconsistent"):
                    await follower(notary, other, manifest).catch_up()
        finally:
            await forked.close()
    finally:
        await asyncio.to_thread(fork.__exit__, None, None, None)
    row = await pool.fetchrow(
        "SELECT trusted_checkpoint, served_checkpoint FROM notary.feed_evidence"
    )
    trusted = Checkpoint.from_note(row["trusted_checkpoint"])
    served = Checkpoint.from_note(row["served_checkpoint"])
    assert (trusted.size, served.size) == (3, 5)
    assert trusted.origin == served.origin == f"{manifest.league}/mint"
    assert await applied(pool) == [0, 1, 2]


async def test_a_checkpoint_by_another_key_is_refused(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """A feed followed under the wrong key (or a checkpoint forged by another) applies
    nothing."""
    manifest = await league.manifest()
    await stamp(league, manifest, 2)
    await checkpoint_covering(league, 2)
    impostor = FeedFollower(
        store=notary,
        league=league,
        source="mint",
        origin=f"{manifest.league}/mint",
        key=SigningKey.generate().public,
        apply=record,
    )
    with pytest.raises(FeedRefused, match="checkpoint"):
        await impostor.catch_up()
    assert await applied(pool) == []


class Retries(logging.Handler):
    """Sets ``third`` once the follower has logged its third retry."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.third = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying in" in record.getMessage():
            self.count += 1
            if self.count >= 3:
                self.third.set()


async def test_run_backs_off_while_the_source_is_down(
    notary: PostgresEventStore, server: TestServer, pool: asyncpg.Pool
) -> None:
    """With the followed service unreachable, run() keeps retrying (it does not crash) until
    it is cancelled: three failures logged, each followed by another try; nothing is
    applied."""
    async with LeagueClient(str(server.make_url(""))) as league:
        manifest = await league.manifest()
    retries = Retries()
    logger = logging.getLogger("services.kernel.follower")
    logger.addHandler(retries)
    try:
        async with LeagueClient("http://127.0.0.1:9", timeout=1) as down:
            task = asyncio.create_task(follower(notary, down, manifest).run(idle=0.01))
            await asyncio.wait_for(retries.third.wait(), GUARD)
            assert not task.done()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    finally:
        logger.removeHandler(retries)
    assert await applied(pool) == []


#: A follower process for the kill test: it applies pages of one event, each transaction
#: holding its rows until the test writes "go" before it commits, and says when it is inside
#: one.
FOLLOWER_PROCESS = """
import asyncio, sys
import asyncpg
from apiclient.league import LeagueClient
from ledger.keys import PublicKey, SigningKey
from services.eventlog import PostgresEventStore
from services.kernel.follower import FeedFollower

database_url, mint_url, origin, mint_key = sys.argv[1:5]

async def apply(tx, events):
    await tx.execute(
        "INSERT INTO notary.applied SELECT * FROM unnest($1::bigint[], $2::text[])",
        [e.seq for e in events], [e.stream for e in events],
    )
    print("inside", events[0].seq, flush=True)
    # The rows are written, not committed: held until the test says "go" (a kill here loses
    # them).
    assert await asyncio.to_thread(sys.stdin.readline) == "go\\n"

async def main():
    async with asyncpg.create_pool(database_url, min_size=1, max_size=2) as pool:
        store = PostgresEventStore(pool, schema="notary", origin="test/notary",
                                   key=SigningKey.generate())
        async with LeagueClient(mint_url) as league:
            follower = FeedFollower(store=store, league=league, source="mint", origin=origin,
                                    key=PublicKey.from_text(mint_key), apply=apply, page=1)
            await follower.catch_up()

asyncio.run(main())
"""


async def test_killed_with_sigkill_mid_batch_and_restarted_applies_each_event_once(
    settings: LeagueSettings,
    server: TestServer,
    league: LeagueClient,
    notary: PostgresEventStore,
    pool: asyncpg.Pool,
) -> None:
    """A follower process killed with SIGKILL while a page's rows are written but not
    committed loses that page only; a restarted follower applies every event exactly once
    (docs/reliability.md: kill during a batch, restart, nothing lost or applied twice)."""
    manifest = await league.manifest()
    await stamp(league, manifest, 6)
    await checkpoint_covering(league, 6)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        FOLLOWER_PROCESS,
        settings.database,
        str(server.make_url("")),
        f"{manifest.league}/mint",
        manifest.mint,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for page in range(3):  # pages 0 and 1 commit; the kill lands inside page 2
            line = await asyncio.wait_for(process.stdout.readline(), GUARD)
            assert line == f"inside {page}\n".encode(), line
            if page < 2:
                process.stdin.write(b"go\n")
                await process.stdin.drain()
    finally:
        process.kill()
        await process.wait()
    assert await applied(pool) == [0, 1]
    restarted = follower(notary, league, manifest)
    assert (await restarted.position()).next_seq == 2
    assert await restarted.catch_up() == 4
    assert await applied(pool) == list(range(6))


async def lock_waiter(pool: asyncpg.Pool) -> None:
    """Return once a session of this database waits for a lock (a bounded wait: a guard)."""
    for _ in range(int(GUARD / 0.01)):
        if await pool.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no session ever waited for the open page's lock")


async def test_two_followers_starting_a_feed_at_once_apply_each_event_once(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """The background follower and a catch-up asked for by a request may start a feed at the
    same moment, before any position is stored: the second waits for the first's page and
    applies nothing twice (found by the treasury's saga test: a duplicate key in the notary's
    notes)."""
    manifest = await league.manifest()
    await stamp(league, manifest, 3)
    await checkpoint_covering(league, 3)
    inside = asyncio.Event()

    async def slow(tx: StoreTransaction, events: Sequence[Event]) -> None:
        await record(tx, events)
        inside.set()
        await lock_waiter(pool)  # holds this page open until the other waits for it

    first = asyncio.create_task(follower(notary, league, manifest, apply=slow).catch_up())
    await inside.wait()
    await asyncio.gather(first, follower(notary, league, manifest).catch_up())
    assert await applied(pool) == [0, 1, 2]
    assert (await follower(notary, league, manifest).position()).next_seq == 3


async def test_run_wakes_at_the_followed_logs_next_checkpoint(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """A follower that has caught up waits for the followed log's next checkpoint, not for its
    timer: with a timer of an hour, prints stamped after it caught up are applied once the
    mint signs a checkpoint covering them (the mint's store rings the bell in this process)."""
    manifest = await league.manifest()
    await stamp(league, manifest, 2)
    await checkpoint_covering(league, 2)
    following = follower(notary, league, manifest)
    task = asyncio.create_task(following.run(idle=3600))
    try:
        await until_applied(pool, 2)
        await stamp(league, manifest, 2)
        await until_applied(pool, 4)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert await applied(pool) == [0, 1, 2, 3]


async def until_applied(pool: asyncpg.Pool, count: int) -> None:
    """Return once ``count`` events are applied (a bounded wait: a guard, not a timing)."""
    for _ in range(int(GUARD / 0.01)):
        if len(await applied(pool)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the follower never applied {count} events")


class CountingClient(LeagueClient):
    """A league client that counts the checkpoints it reads (one per catch-up)."""

    read = 0

    async def checkpoint(self, *, service: str | None = None) -> str:
        self.read += 1
        return await super().checkpoint(service=service)


async def test_catch_ups_asked_at_once_share_one(
    server: TestServer, league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """Ten callers asking for a catch-up while one runs wait for it and then share a single
    next one: the feed's checkpoint is read twice, not eleven times, and every caller sees
    the position past every event applied."""
    manifest = await league.manifest()
    await stamp(league, manifest, 3)
    await checkpoint_covering(league, 3)
    inside, release = asyncio.Event(), asyncio.Event()

    async def held(tx: StoreTransaction, events: Sequence[Event]) -> None:
        await record(tx, events)
        inside.set()
        await release.wait()

    async with CountingClient(str(server.make_url(""))) as counting:
        following = follower(notary, counting, manifest, apply=held)
        first = asyncio.create_task(following.caught_up())
        await inside.wait()
        others = [asyncio.create_task(following.caught_up()) for _ in range(10)]
        await asyncio.sleep(0)  # each asks (and waits for the running catch-up)
        release.set()
        positions = await asyncio.gather(first, *others)
    assert counting.read == 2
    assert [position.next_seq for position in positions] == [3] * 11
    assert await applied(pool) == [0, 1, 2]


async def test_an_event_is_bound_by_its_leaf_and_its_signature_left_to_the_audit(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """The follower checks each event's content against its leaf hash and the leaf hashes
    against the signed checkpoint, not each event's signature: an event whose stored
    signature was replaced (its content and leaf intact) is applied, and the signature,
    served as stored, still fails to verify for anyone who checks the event alone (the
    audit: services/kernel/follower.py, docs/security.md)."""
    manifest = await league.manifest()
    await stamp(league, manifest, 4)
    await checkpoint_covering(league, 4)
    await pool.execute(
        "UPDATE mint.events SET signature = (SELECT signature FROM mint.events WHERE seq = 0)"
        " WHERE seq = 3"
    )
    assert await follower(notary, league, manifest).catch_up() == 4
    assert await applied(pool) == [0, 1, 2, 3]
    (served,) = (await league.events(2, 1)).events
    with pytest.raises(BadSignatureError):
        served.verified(PublicKey.from_text(manifest.mint))


async def test_a_proving_follower_proves_from_the_tree_it_kept(
    league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """A follower that keeps the tree proves each followed event's inclusion in the last
    checkpoint it applied through from its own rows (proofs that verify against that signed
    checkpoint); taking over a feed followed without the tree, it keeps the edge it starts
    from, so every later event is proven and an older one is not (None: asked of the
    service instead)."""
    manifest = await league.manifest()
    await stamp(league, manifest, 3)
    await checkpoint_covering(league, 3)
    assert await follower(notary, league, manifest).catch_up() == 3
    await stamp(league, manifest, 4)
    await checkpoint_covering(league, 7)
    proving = FeedFollower(
        store=notary,
        league=league,
        source="mint",
        origin=f"{manifest.league}/mint",
        key=PublicKey.from_text(manifest.mint),
        apply=record,
        page=3,
        prove=True,
    )
    assert await proving.catch_up() == 4
    leaves = {event.seq: event.leaf_hash for event in await mint_events(league)}
    seqs = [3, 4, 5, 6]
    kept = await proving.proofs(seqs)
    assert kept is not None
    checkpoint, proofs = kept
    checkpoint.verify([log_verifier(f"{manifest.league}/mint", PublicKey.from_text(manifest.mint))])
    assert checkpoint.size == 7
    for seq, proof in zip(seqs, proofs, strict=True):
        verify_inclusion(seq, checkpoint.size, leaves[seq], proof, checkpoint.root)
    assert await proving.proofs([0]) is None
    assert await proving.proofs([7]) is None  # beyond the checkpoint applied through


async def mint_events(league: LeagueClient) -> list[Event]:
    return [item.bound() for item in (await league.events(-1, 100)).events]


class LaggingClient(LeagueClient):
    """A league client whose feed's checkpoint is an older one (a replica that lags, or a
    checkpoint read before another follower stored a newer one)."""

    older = ""

    async def checkpoint(self, *, service: str = "mint") -> str:
        return self.older


async def test_an_older_checkpoint_is_stale_not_a_contradiction(
    server: TestServer, league: LeagueClient, notary: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """A follower that verified a checkpoint of four events, then served an older signed
    checkpoint of two, applies nothing and refuses nothing: the older one is a prefix the
    mint signed before, not a contradiction (two workers' catch-ups crossing refused the
    mint's feed for good: "the feed went back")."""
    manifest = await league.manifest()
    await stamp(league, manifest, 2)
    older = await checkpoint_covering(league, 2)
    await stamp(league, manifest, 2)
    await checkpoint_covering(league, 4)
    assert await follower(notary, league, manifest).catch_up() == 4
    async with LaggingClient(str(server.make_url(""))) as lagging:
        lagging.older = older
        assert await follower(notary, lagging, manifest).catch_up() == 0
    assert await pool.fetchval("SELECT count(*) FROM notary.feed_evidence") == 0
    assert (await follower(notary, league, manifest).position()).next_seq == 4


async def test_standing_at_its_checkpoint_the_first_page_proves_the_next_one(
    league: LeagueClient,
    notary: PostgresEventStore,
    pool: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A follower standing exactly at the last checkpoint it verified asks no consistency
    proof of it: the next page's tree is built on that very edge, so the page proven part of
    the new checkpoint proves the new checkpoint extends the old (a page that reaches it
    needs no proof at all); one that stops short of it is proven once."""
    manifest = await league.manifest()
    await stamp(league, manifest, 3)
    await checkpoint_covering(league, 3)
    following = follower(notary, league, manifest)
    assert await following.catch_up() == 3
    asked: list[tuple[int, int]] = []
    consistency_proof = league.consistency_proof

    async def counted(first: int, second: int, **where: str) -> object:
        asked.append((first, second))
        return await consistency_proof(first, second, **where)

    monkeypatch.setattr(league, "consistency_proof", counted)
    await stamp(league, manifest, 2)
    await checkpoint_covering(league, 5)
    assert await following.catch_up() == 2  # one page, to the checkpoint
    assert asked == []
    await stamp(league, manifest, 4)
    await checkpoint_covering(league, 9)
    assert await following.catch_up() == 4  # pages of three: the first stops short
    assert asked == [(8, 9)]
    assert await applied(pool) == list(range(9))
