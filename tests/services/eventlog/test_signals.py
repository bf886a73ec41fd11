"""A log's checkpoints wake its followers: the store that signs one rings this process's bell
and notifies the log's channel in PostgreSQL at its commit; another process's relay turns
that notification into a ring, and listens again when its connection drops
(services/eventlog/signals.py; docs/eventlog.md, "Waking followers")."""

from __future__ import annotations

import asyncio
import os

import asyncpg

from services.eventlog import PostgresEventStore
from services.eventlog.signals import CHECKPOINTS, checkpoint_channel, process_token

#: A guard against a hang, never a timing assertion.
GUARD = 60.0


async def test_a_new_checkpoint_rings_here_and_notifies_at_its_commit(
    log: PostgresEventStore, migrated_url: str
) -> None:
    """Signing a checkpoint of a grown log rings the log's bell in this process and sends the
    database's other sessions a notification on the log's channel naming the new size."""
    channel = checkpoint_channel("mint")
    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(migrated_url)
    try:
        await listener.add_listener(channel, lambda *args: heard.put_nowait(args[3]))
        await log.append("print/CZ-MODEL-A-0001", 0, "stamped", {"n": 1})
        mark = CHECKPOINTS.mark(channel)
        checkpoint = await log.sign_checkpoint()
        assert await CHECKPOINTS.wait(channel, mark, GUARD)
        payload = await asyncio.wait_for(heard.get(), GUARD)
    finally:
        await listener.close()
    assert payload.split()[0] == str(checkpoint.size) == "1"


async def test_another_process_notification_rings_and_a_dropped_listener_listens_again(
    log: PostgresEventStore, pool: asyncpg.Pool
) -> None:
    """While a store relays a log's channel, a notification on it from another process rings
    the bell here; when the listening connection is killed, the relay listens again on a new
    one (ringing once, for what it may have missed) and later notifications ring again."""
    channel = checkpoint_channel("treasury")
    mark = CHECKPOINTS.mark(channel)
    async with log.relaying(channel):
        assert await CHECKPOINTS.wait(channel, mark, GUARD)  # rung once listening
        for _ in range(2):
            mark = CHECKPOINTS.mark(channel)
            await pool.execute("SELECT pg_notify($1, '7 another-process')", channel)
            assert await CHECKPOINTS.wait(channel, mark, GUARD)
            listening = await pool.fetchval(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname ="
                " current_database()"
            )
            assert listening is not None
            mark = CHECKPOINTS.mark(channel)
            assert await pool.fetchval("SELECT pg_terminate_backend($1)", listening)
            # Rung once listening again on another connection.
            assert await CHECKPOINTS.wait(channel, mark, GUARD)


def test_a_forked_worker_names_itself_apart_from_its_parent() -> None:
    """A worker forked after its parent drew its token (``league serve --workers`` forks)
    draws its own, so each worker's relay skips only its own notifications and hears its
    siblings'."""
    parent = process_token()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: say its token, and nothing else
        os.write(write, process_token().encode())
        os._exit(0)
    os.close(write)
    try:
        child = os.read(read, 64).decode()
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    assert child
    assert child != parent
    assert process_token() == parent
