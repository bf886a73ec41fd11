"""The checkpointer's copy outside the database, and the refusal of a database that does not
extend it (docs/architecture.md §4 "no silent forks")."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from ledger.checkpoint import Checkpoint
from ledger.errors import VerificationError
from ledger.keys import SigningKey
from ledger.leaf import NewEvent
from ledger.manifest import DEFAULT_POLICIES
from services.eventlog import PostgresEventStore
from services.kernel.checkpoints import Checkpointer, CheckpointFile, ForkedDatabase
from tests.harness.eventlog import migrated_url, pool

ORIGIN = "league.test/mint"
__all__ = ["migrated_url", "pool"]  # the event store's fixtures, used here


@pytest.fixture
def key() -> SigningKey:
    return SigningKey.generate()


def store(pool: asyncpg.Pool, key: SigningKey, schema: str = "mint") -> PostgresEventStore:
    return PostgresEventStore(pool, schema=schema, origin=ORIGIN, key=key)


async def fill(log: PostgresEventStore, n: int, start: int = 0, stream: str = "s") -> None:
    await log.append_batch([NewEvent(stream, start + i, "t", {"i": start + i}) for i in range(n)])


async def test_each_new_checkpoint_is_kept_outside_the_database(
    pool: asyncpg.Pool, key: SigningKey, tmp_path: Path
) -> None:
    """The checkpointer writes every checkpoint it signs to the file before committing it;
    the file reads back verified, and a file signed by another key is refused."""
    log = store(pool, key)
    kept = CheckpointFile(tmp_path / "mint.checkpoint", ORIGIN, key.public)
    assert kept.read() is None
    checkpointer = Checkpointer(log, DEFAULT_POLICIES, kept)
    await fill(log, 3)
    signed = await checkpointer.sign()
    assert kept.read() == signed
    assert signed.size == 3
    assert not (tmp_path / "mint.checkpoint.partial").exists()
    other = CheckpointFile(tmp_path / "mint.checkpoint", ORIGIN, SigningKey.generate().public)
    with pytest.raises(VerificationError):
        other.read()


async def test_an_older_or_other_database_is_refused_naming_both(
    pool: asyncpg.Pool, key: SigningKey, tmp_path: Path
) -> None:
    """Against a kept checkpoint of size 5, a log of 3 events is older (refused, both sizes
    named), a log of 5 other events is another history (refused, both roots named), and the
    log itself, grown to 7, extends it (accepted)."""
    log = store(pool, key)
    kept = CheckpointFile(tmp_path / "mint.checkpoint", ORIGIN, key.public)
    await fill(log, 5)
    checkpoint: Checkpoint = await Checkpointer(log, DEFAULT_POLICIES, kept).sign()
    assert checkpoint.size == 5
    older = store(pool, key, schema="notary")  # another log, standing in for an old backup
    await fill(older, 3)
    with pytest.raises(ForkedDatabase, match=r"holds 3 events.*size 5"):
        await kept.check(older)
    await fill(older, 2, stream="x")  # five events, another history
    with pytest.raises(ForkedDatabase, match="another history"):
        await kept.check(older)
    await fill(log, 2, start=5)
    await kept.check(log)


async def test_the_checkpointer_will_not_start_on_a_forked_database(
    pool: asyncpg.Pool, key: SigningKey, tmp_path: Path
) -> None:
    """running() checks first: on a database that does not extend the kept checkpoint the
    service never starts, and nothing is signed over it."""
    log = store(pool, key)
    kept = CheckpointFile(tmp_path / "mint.checkpoint", ORIGIN, key.public)
    await fill(log, 4)
    await Checkpointer(log, DEFAULT_POLICIES, kept).sign()
    empty = store(pool, key, schema="treasury")
    with pytest.raises(ForkedDatabase):
        async with Checkpointer(empty, DEFAULT_POLICIES, kept).running():
            pass
    assert await empty.latest_checkpoint() is None
    assert kept.read() is not None
    assert kept.read().size == 4  # type: ignore[union-attr]
