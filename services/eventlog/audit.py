"""``verify_all``: re-derive the whole log from its rows and name the first bad ``seq``.

Two passes. The *leaf pass* reads every event row in ``seq`` order (keyset pagination, the
next page fetched while this one is checked), recomputes its canonical leaf bytes and leaf
hash, and verifies the service's signature; it can run on several processes, each over its
own contiguous range with its own connection. The *tree pass* rebuilds the Merkle tree from
the recomputed leaf hashes and compares every stored subtree hash, every stored checkpoint
(root, size, and its signature) and the head row against it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import asyncpg

from ledger.checkpoint import Checkpoint, log_verifier
from ledger.errors import LedgerError
from ledger.keys import PublicKey
from ledger.merkle import CompactRange
from ledger.signed_note import NoteVerifier
from services.eventlog.errors import EventLogError, TamperedLog
from services.eventlog.leaf import canonical_leaf
from services.eventlog.sql import Statements

if TYPE_CHECKING:
    from services.eventlog.store import EventLog

PAGE = 5000
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+(-[0-9]+)?")
#: Below this many events a second process costs more than it saves.
PARALLEL_THRESHOLD = 20_000


@dataclass(frozen=True, slots=True)
class VerifySummary:
    """What ``verify_all`` checked, when everything held."""

    events: int
    subtrees: int
    checkpoints: int
    root: bytes
    workers: int


@dataclass(frozen=True, slots=True)
class _Bad:
    seq: int
    reason: str


def _check_rows(
    rows: list[asyncpg.Record], expected: int, key: PublicKey, out: bytearray
) -> _Bad | None:
    """Check one page of rows starting at ``expected``; append recomputed leaf hashes."""
    sha256, equal = hashlib.sha256, hmac.compare_digest
    verify = key.verify_raw
    for row in rows:
        seq = row[0]
        if seq != expected:
            return _Bad(expected, f"event {expected} is missing")
        try:
            leaf = canonical_leaf(
                seq=seq,
                stream=row[1],
                stream_version=row[2],
                type=row[3],
                body=json.loads(row[4]),
                recorded_at=row[5],
            )
        except LedgerError as exc:
            return _Bad(seq, f"the row is not a valid event ({exc.diagnostics()})")
        digest = sha256(b"\x00" + leaf).digest()
        if not equal(digest, row[6]):
            return _Bad(seq, "the stored leaf hash does not match the row")
        try:
            verify(leaf, row[7])
        except LedgerError:
            return _Bad(seq, "the service signature does not verify over the row")
        out += digest
        expected += 1
    return None


async def _verify_leaves(
    conn: asyncpg.Connection, sql: Statements, key: PublicKey, start: int, end: int
) -> tuple[_Bad | None, bytes]:
    """Leaf pass over ``[start, end)``: the first bad row, and the recomputed leaf hashes."""
    hashes = bytearray()
    nxt: asyncio.Task[list[asyncpg.Record]] | None = None
    position = start
    while position < end:
        upto = min(position + PAGE, end)
        page = (
            nxt
            if nxt is not None
            else asyncio.ensure_future(conn.fetch(sql.read_range, position, upto))
        )
        rows = await page
        nxt = None
        if upto < end:
            # Let the server produce the next page while this one is checked.
            nxt = asyncio.ensure_future(conn.fetch(sql.read_range, upto, min(upto + PAGE, end)))
            await asyncio.sleep(0)
        bad = _check_rows(rows, position, key, hashes)
        if bad is None and len(rows) != upto - position:
            bad = _Bad(position + len(rows), f"event {position + len(rows)} is missing")
        if bad is not None:
            if nxt is not None:
                await nxt
            return bad, bytes(hashes)
        position = upto
    return None, bytes(hashes)


def _verify_leaves_worker(
    database_url: str, snapshot: str, schema: str, public_key: bytes, start: int, end: int
) -> tuple[_Bad | None, bytes]:
    """Process-pool entry point: its own connection, in the caller's snapshot, one range."""

    async def run() -> tuple[_Bad | None, bytes]:
        conn = await asyncpg.connect(database_url)
        try:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                # Not a parameter in SQL; the id's shape was checked by the caller.
                await conn.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
                return await _verify_leaves(
                    conn, Statements.for_schema(schema), PublicKey(public_key), start, end
                )
        finally:
            await conn.close()

    return asyncio.run(run())


async def _leaf_pass(
    log: EventLog,
    conn: asyncpg.Connection,
    size: int,
    database_url: str | None,
    workers: int | None,
) -> tuple[_Bad | None, bytes, int]:
    if workers is None:
        auto = database_url is not None and size >= PARALLEL_THRESHOLD
        workers = (os.cpu_count() or 1) if auto else 1
    if workers > 1 and database_url is None:
        raise ValueError("verifying on several processes needs the database URL")
    if workers <= 1 or size == 0:
        bad, hashes = await _verify_leaves(conn, log.sql, log.key.public, 0, size)
        return bad, hashes, 1
    snapshot = await conn.fetchval("SELECT pg_export_snapshot()")
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise EventLogError(f"unexpected snapshot id {snapshot!r}")
    bounds = [size * i // workers for i in range(workers + 1)]
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        results = await asyncio.gather(
            *(
                loop.run_in_executor(
                    pool,
                    _verify_leaves_worker,
                    database_url,
                    snapshot,
                    log.schema,
                    log.key.public.raw,
                    bounds[i],
                    bounds[i + 1],
                )
                for i in range(workers)
            )
        )
    hashes = bytearray()
    for bad, part in results:
        hashes += part
        if bad is not None:
            return bad, bytes(hashes), workers
    return None, bytes(hashes), workers


def _closed_ranges(start: int, end: int) -> tuple[list[int], list[int], list[int]]:
    """Per level, the index range of subtrees whose last leaf lies in ``[start, end)``."""
    levels, lows, highs = [], [], []
    for level in range(1, end.bit_length() + 1):
        lo, hi = ((start + (1 << level)) >> level) - 1, end >> level
        if lo < hi:
            levels.append(level)
            lows.append(lo)
            highs.append(hi)
    return levels, lows, highs


async def _tree_pass(
    log: EventLog, conn: asyncpg.Connection, hashes: bytes, size: int
) -> tuple[int, int, bytes]:
    """Rebuild the tree over ``hashes``; compare subtrees, checkpoints and (if the leaves
    reached ``size``) the head. Returns subtrees and checkpoints checked, and the root."""
    upto = len(hashes) // 32
    verifier = log_verifier(log.origin, log.key.public)
    checkpoints = {r[0]: r for r in await conn.fetch(log.sql.all_checkpoints)}
    edge = CompactRange()
    subtrees = 0
    if 0 in checkpoints:
        _check_checkpoint(checkpoints[0], edge, verifier, log.origin)
    for start in range(0, upto, PAGE):
        end = min(start + PAGE, upto)
        stored = {
            (r[0], r[1]): bytes(r[2])
            for r in await conn.fetch(log.sql.read_nodes_closed_by, *_closed_ranges(start, end))
        }
        for seq in range(start, end):
            for level, index, digest in edge.append(hashes[32 * seq : 32 * seq + 32]):
                found = stored.pop((level, index), None)
                if found is None or not hmac.compare_digest(found, digest):
                    state = "missing" if found is None else "wrong"
                    raise TamperedLog(seq, f"stored subtree ({level}, {index}) is {state}")
                subtrees += 1
            if seq + 1 in checkpoints:
                _check_checkpoint(checkpoints[seq + 1], edge, verifier, log.origin)
    if upto < size:
        return subtrees, 0, edge.root()
    last = max(size - 1, 0)
    extra = await conn.fetchval(log.sql.count_nodes) - subtrees
    if extra:
        raise TamperedLog(last, f"{extra} stored subtrees lie outside the log")
    beyond = [s for s in checkpoints if s > size]
    if beyond:
        raise TamperedLog(last, f"a checkpoint of size {min(beyond)} is beyond the log")
    head = await conn.fetchrow(log.sql.read_head)
    if head[0] != size or [bytes(h) for h in head[1]] != edge.hashes:
        raise TamperedLog(last, "the head row disagrees with the events")
    return subtrees, len(checkpoints), edge.root()


def _check_checkpoint(
    row: asyncpg.Record, edge: CompactRange, verifier: NoteVerifier, origin: str
) -> None:
    """The stored checkpoint verifies, matches its row, and has the rebuilt tree's root."""
    size, root, note = row[0], bytes(row[1]), row[2]
    seq = max(size - 1, 0)
    try:
        checkpoint = Checkpoint.from_note(note)
        checkpoint.verify([verifier])
    except LedgerError as exc:
        raise TamperedLog(
            seq, f"checkpoint of size {size} does not verify ({exc.diagnostics()})"
        ) from exc
    if checkpoint.origin != origin or checkpoint.size != size or checkpoint.root != root:
        raise TamperedLog(seq, f"checkpoint of size {size} disagrees with its row")
    if not hmac.compare_digest(edge.root(), root):
        raise TamperedLog(seq, f"checkpoint of size {size} has a root the events do not produce")


async def verify_all(
    log: EventLog, *, database_url: str | None = None, workers: int | None = None
) -> VerifySummary:
    """Check every row, subtree and checkpoint; raise :class:`TamperedLog` at the first fault.

    ``workers`` > 1 spreads the leaf pass over that many processes, each opening its own
    connection to ``database_url``. ``None`` chooses: one process per core when the URL is
    given and the log is long enough to repay starting them, else this process alone.
    """
    # One snapshot for every read (exported to the worker processes), so appends committed
    # while the audit runs are simply not part of it.
    async with (
        log.pool.acquire() as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        size = await conn.fetchval(log.sql.head_size)
        last = await conn.fetchval(log.sql.max_seq)
        if last is not None and last >= size:
            size_bad: _Bad | None = _Bad(size, f"event {size} lies beyond the head of the log")
        else:
            size_bad = None
        leaf_bad, hashes, used = await _leaf_pass(log, conn, size, database_url, workers)
        # The tree pass covers the leaves before the first bad one, so what it finds is earlier.
        subtrees, checkpoints, root = await _tree_pass(log, conn, hashes, size)
    for bad in (leaf_bad, size_bad):
        if bad is not None:
            raise TamperedLog(bad.seq, bad.reason)
    return VerifySummary(
        events=size,
        subtrees=subtrees,
        checkpoints=checkpoints,
        root=root,
        workers=used,
    )
