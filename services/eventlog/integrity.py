"""The log's integrity check, ``fsck``-like: ``verify_all`` re-derives the whole log from its
rows and names the first bad ``seq`` (``league verify``; the store's
:meth:`~services.eventlog.store.PostgresEventStore.verify_all`). It reads the rows it is given
(:class:`LogRows`) and knows nothing of the store's own objects.

Two passes. The *leaf pass* reads every event row in ``seq`` order (keyset pages, the next
page fetched while this one is checked). Each row stores the exact leaf bytes the service
signed beside its queryable columns; the pass re-derives the leaf hash from those bytes,
verifies the service's signature over them, and parses them (C ``json``) to check that every
column says what the signed leaf says. So no column, leaf, hash or signature can be edited
without its ``seq`` being named, and no RFC 8785 canonicalization runs per event: the leaf
was canonicalized once, when it was signed. The pass can run on several processes, the
calling one included, each claiming the next page of the log when it is ready for it.

The *tree pass* rebuilds the Merkle tree level by level from the re-derived leaf hashes and
compares each level's stored subtree hashes in bulk, then every stored checkpoint (root,
size, and its signature) and the head row.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import multiprocessing
import os
import re
import time
from collections.abc import Awaitable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import NoReturn

import asyncpg

from ledger.canonical import DOMAIN_TAGS
from ledger.errors import LedgerError
from ledger.feed import signed_checkpoint
from ledger.keys import PublicKey
from ledger.merkle import CompactRange
from services.eventlog.contract import VerifySummary
from services.eventlog.errors import EventLogError, TamperedLog
from services.eventlog.sql import Statements


@dataclass(frozen=True, slots=True)
class LogRows:
    """What the check reads of one log: its pool, its statements, its schema, and the origin
    and key its checkpoints and leaves are signed under."""

    pool: asyncpg.Pool
    sql: Statements
    schema: str
    origin: str
    key: PublicKey


#: Events per page: one fetch, checked while the next page is fetched. Pages are also what
#: the processes of a parallel pass take turns to claim, so they stay small.
PAGE = 2000
#: Stored subtrees of one level compared per query in the tree pass.
NODE_CHUNK = 65_536
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+(-[0-9]+)?")
#: Below this many events a second process costs more than it saves.
PARALLEL_THRESHOLD = 20_000
_TAG = DOMAIN_TAGS["event"]
#: Key of a checkpoint's fault when ordering faults found at the same ``seq``.
_CHECKPOINT_RANK = 64


def _refuse(token: str) -> NoReturn:
    raise ValueError(f"{token} is not integral JSON")


#: Reads JSON keeping each integer as its digits in ``bytes`` (``42`` -> ``b"42"``). Bytes never
#: equal a str, a bool or None, so ``==`` between two such parses is exact JSON equality
#: (``1`` is not ``true``, as it would be between Python ints and bools); floats, NaN and
#: Infinity, which no event may hold, are refused.
_STRICT_JSON = json.JSONDecoder(parse_int=str.encode, parse_float=_refuse, parse_constant=_refuse)


def _parse(text: str) -> object:
    value, end = _STRICT_JSON.raw_decode(text)
    if end != len(text):
        raise ValueError("text after the JSON value")
    return value


def _signed_content(leaf: bytes) -> object:
    """What a stored leaf says: the JSON after the event tag, parsed as :data:`_STRICT_JSON`."""
    if not leaf.startswith(_TAG):
        raise ValueError("the leaf does not start with the event tag")
    return _parse(leaf[len(_TAG) :].decode())


def _disagreement(signed: object, columns: dict[str, object]) -> str:
    if not isinstance(signed, dict):
        return "the signed leaf is not a JSON object"
    differ = sorted(
        name
        for name in signed.keys() | columns.keys()
        if name not in signed or name not in columns or signed[name] != columns[name]
    )
    return f"the row and its signed leaf disagree on {', '.join(differ)}"


@dataclass(frozen=True, slots=True)
class _Bad:
    seq: int
    reason: str


def _check_rows(
    rows: list[asyncpg.Record], expected: int, key: PublicKey, out: bytearray
) -> _Bad | None:
    """Check rows starting at ``expected``; append their re-derived leaf hashes to ``out``."""
    sha256, equal, verify, parse = hashlib.sha256, hmac.compare_digest, key.verify_raw, _parse
    for seq, stream, version, type_, body, recorded_at, stored_hash, signature, leaf in rows:
        if seq != expected:
            return _Bad(expected, f"event {expected} is missing")
        digest = sha256(b"\x00" + leaf).digest()
        if not equal(digest, stored_hash):
            return _Bad(seq, "the stored leaf hash is not the hash of the stored leaf")
        try:
            verify(leaf, signature)
        except LedgerError:
            return _Bad(seq, "the service signature does not verify over the stored leaf")
        try:
            signed = _signed_content(leaf)
        except (ValueError, RecursionError) as exc:
            return _Bad(seq, f"the signed leaf is not an event ({exc})")
        try:
            columns = {
                "body": parse(body),
                "recorded_at": recorded_at,
                "seq": b"%d" % seq,
                "stream": stream,
                "stream_version": b"%d" % version,
                "type": type_,
            }
        except (ValueError, RecursionError) as exc:
            return _Bad(seq, f"the stored body is not integral JSON ({exc})")
        if signed != columns:
            return _Bad(seq, _disagreement(signed, columns))
        out += digest
        expected += 1
    return None


class _Pages:
    """The pages of a log of ``size`` events, handed out in order to whoever asks first.

    None is handed out once every page is, or past a page already found faulty (the pages
    before it must still be checked: an earlier fault is the one to name); ``found_fault(-1)``
    stops the hand-out altogether.
    """

    def __init__(self, size: int, context: BaseContext | None = None) -> None:
        self.size = size
        self.page = PAGE  # travels with the pages to the worker processes
        self.count = -(-size // self.page)
        # Shared memory when several processes claim, a plain counter otherwise.
        self._next = _Counter(0) if context is None else context.Value("q", 0)
        self._fault = _Counter(self.count) if context is None else context.Value("q", self.count)

    def claim(self) -> int | None:
        with self._next.get_lock():
            index = self._next.value
            if index >= min(self.count, self._fault.value + 1):
                return None
            self._next.value = index + 1
        return index

    def found_fault(self, index: int) -> None:
        with self._fault.get_lock():
            self._fault.value = min(self._fault.value, index)

    def bounds(self, index: int) -> tuple[int, int]:
        return index * self.page, min((index + 1) * self.page, self.size)


class _Counter:
    """A ``multiprocessing.Value`` stand-in for one process."""

    def __init__(self, value: int) -> None:
        self.value = value

    def get_lock(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


#: The pages a worker process claims from; set when the process starts (:func:`_share`).
_shared_pages: _Pages | None = None


def _share(pages: _Pages) -> None:
    global _shared_pages
    _shared_pages = pages


async def _verify_pages(
    conn: asyncpg.Connection, sql: Statements, key: PublicKey, pages: _Pages
) -> dict[int, tuple[_Bad | None, bytes]]:
    """Check pages as they are claimed, each fetched while the one before is checked; per
    page, its first bad row (if any) and its re-derived leaf hashes."""
    done: dict[int, tuple[_Bad | None, bytes]] = {}

    def fetch(index: int | None) -> asyncio.Future[list[asyncpg.Record]] | None:
        if index is None:
            return None
        rows: Awaitable[list[asyncpg.Record]] = conn.fetch(sql.audit_range, *pages.bounds(index))
        return asyncio.ensure_future(rows)

    index = pages.claim()
    page = fetch(index)
    while index is not None and page is not None:
        rows = await page
        following = pages.claim()
        page = fetch(following)
        await asyncio.sleep(0)  # send the next page's query before checking this one
        start, end = pages.bounds(index)
        hashes = bytearray()
        bad = _check_rows(rows, start, key, hashes)
        if bad is None and len(rows) != end - start:
            bad = _Bad(start + len(rows), f"event {start + len(rows)} is missing")
        if bad is not None:
            pages.found_fault(index)
        done[index] = bad, bytes(hashes)
        index = following
    return done


def _verify_pages_worker(
    database_url: str, snapshot: str, schema: str, public_key: bytes
) -> tuple[dict[int, tuple[_Bad | None, bytes]], float]:
    """Process-pool entry point: its own connection in the caller's snapshot, checking the
    pages it claims until none are left. Returns them and the CPU seconds it took."""
    pages = _shared_pages
    if pages is None:
        raise RuntimeError("the worker started without the shared pages its initializer sets")

    async def run() -> dict[int, tuple[_Bad | None, bytes]]:
        conn = await asyncpg.connect(database_url)
        try:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                # Not a parameter in SQL; the id's shape was checked by the caller.
                await conn.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
                return await _verify_pages(
                    conn, Statements.for_schema(schema), PublicKey(public_key), pages
                )
        finally:
            await conn.close()

    cpu = time.process_time()
    done = asyncio.run(run())
    return done, time.process_time() - cpu


async def _leaf_pass(
    log: LogRows,
    conn: asyncpg.Connection,
    size: int,
    database_url: str | None,
    workers: int | None,
) -> tuple[_Bad | None, bytes, int, float]:
    """The first bad row, the re-derived leaf hashes before it, the number of processes
    used, and the CPU seconds spent in processes other than this one."""
    if workers is None:
        auto = database_url is not None and size >= PARALLEL_THRESHOLD
        workers = (os.cpu_count() or 1) if auto else 1
    if workers > 1 and database_url is None:
        raise ValueError("verifying on several processes needs the database URL")
    if workers <= 1 or size == 0 or database_url is None:
        pages = _Pages(size)
        done = await _verify_pages(conn, log.sql, log.key, pages)
        bad, hashes = _in_order(pages, done)
        return bad, hashes, 1, 0.0
    snapshot: str = await conn.fetchval("SELECT pg_export_snapshot()")
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise EventLogError(f"unexpected snapshot id {snapshot!r}")
    context = multiprocessing.get_context("forkserver")
    pages = _Pages(size, context)
    args = (database_url, snapshot, log.schema, log.key.raw)
    # This process checks pages too, so no core idles while the others start, and each
    # process claims the next page when it is ready for it, so a core slowed by other jobs
    # simply checks fewer.
    with ProcessPoolExecutor(
        max_workers=workers - 1, mp_context=context, initializer=_share, initargs=(pages,)
    ) as pool:
        loop = asyncio.get_running_loop()
        elsewhere = [
            loop.run_in_executor(pool, _verify_pages_worker, *args) for _ in range(1, workers)
        ]
        here = asyncio.ensure_future(_verify_pages(conn, log.sql, log.key, pages))
        try:
            done = await here
            others = await asyncio.gather(*elsewhere)
        except BaseException:
            # Stop every process at its current page; this one's query must end before the
            # snapshot's transaction can roll back.
            pages.found_fault(-1)
            here.cancel()
            await asyncio.gather(here, *elsewhere, return_exceptions=True)
            raise
    for part, _ in others:
        done |= part
    bad, hashes = _in_order(pages, done)
    return bad, hashes, workers, sum(cpu for _, cpu in others)


def _in_order(
    pages: _Pages, done: dict[int, tuple[_Bad | None, bytes]]
) -> tuple[_Bad | None, bytes]:
    """The checked pages joined in order, up to the first bad row."""
    hashes = bytearray()
    for index in range(pages.count):
        bad, part = done[index]  # every page up to the first faulty one was checked
        hashes += part
        if bad is not None:
            return bad, bytes(hashes)
    return None, bytes(hashes)


def _level_above(below: bytes) -> bytes:
    """The RFC 6962 node hashes over consecutive pairs of ``below`` (an odd last one drops)."""
    sha256 = hashlib.sha256
    return b"".join(
        [sha256(b"\x01" + below[i : i + 64]).digest() for i in range(0, len(below) - 63, 64)]
    )


def _edge(levels: list[bytes], size: int) -> list[bytes]:
    """The right edge of the tree of ``size`` leaves: its complete subtrees, largest first."""
    return [
        levels[level][32 * ((size >> level) - 1) : 32 * (size >> level)]
        for level in reversed(range(size.bit_length()))
        if size >> level & 1
    ]


async def _bad_node(
    conn: asyncpg.Connection, sql: Statements, level: int, computed: bytes
) -> _Bad | None:
    """The first stored subtree of ``level`` that is missing or differs from ``computed``."""
    count = len(computed) // 32
    for lo in range(0, count, NODE_CHUNK):
        hi = min(lo + NODE_CHUNK, count)
        found, joined = await conn.fetchrow(sql.nodes_joined, level, lo, hi)
        if found == hi - lo and hmac.compare_digest(joined, computed[32 * lo : 32 * hi]):
            continue
        stored = {r[0]: bytes(r[1]) for r in await conn.fetch(sql.nodes_listed, level, lo, hi)}
        for index in range(lo, hi):
            digest = stored.get(index)
            if digest is None or not hmac.compare_digest(
                digest, computed[32 * index : 32 * index + 32]
            ):
                state = "missing" if digest is None else "wrong"
                last = ((index + 1) << level) - 1
                return _Bad(last, f"stored subtree ({level}, {index}) is {state}")
    return None


def _bad_checkpoint(
    row: asyncpg.Record, levels: list[bytes], origin: str, key: PublicKey
) -> _Bad | None:
    """None if the stored checkpoint verifies, matches its row and has the rebuilt root."""
    size, root, note = row[0], bytes(row[1]), row[2]
    seq = max(size - 1, 0)
    try:
        checkpoint = signed_checkpoint(note, origin, key)
    except LedgerError as exc:
        return _Bad(seq, f"checkpoint of size {size} does not verify ({exc.diagnostics()})")
    if checkpoint.size != size or checkpoint.root != root:
        return _Bad(seq, f"checkpoint of size {size} disagrees with its row")
    if not hmac.compare_digest(CompactRange(size, _edge(levels, size)).root(), root):
        return _Bad(seq, f"checkpoint of size {size} has a root the events do not produce")
    return None


async def _tree_pass(
    log: LogRows, conn: asyncpg.Connection, hashes: bytes, size: int
) -> tuple[int, int, bytes]:
    """Rebuild the tree over ``hashes``; compare subtrees, checkpoints and (if the leaves
    reached ``size``) the head. Returns subtrees and checkpoints checked, and the root."""
    upto = len(hashes) // 32
    levels = [hashes]
    # (seq, rank, fault): each level and each checkpoint is checked on its own, then the
    # fault at the earliest seq is the one reported.
    faults: list[tuple[int, int, _Bad]] = []
    while upto >> len(levels):
        level = len(levels)
        levels.append(_level_above(levels[-1]))
        bad = await _bad_node(conn, log.sql, level, levels[-1])
        if bad is not None:
            faults.append((bad.seq, level, bad))
    checkpoints = await conn.fetch(log.sql.all_checkpoints)
    for row in checkpoints:
        bad = _bad_checkpoint(row, levels, log.origin, log.key) if row[0] <= upto else None
        if bad is not None:
            faults.append((bad.seq, _CHECKPOINT_RANK, bad))
    if faults:
        first = min(faults, key=lambda fault: fault[:2])[2]
        raise TamperedLog(first.seq, first.reason)
    subtrees = sum(upto >> level for level in range(1, len(levels)))
    edge = _edge(levels, upto)
    if upto < size:
        return subtrees, 0, CompactRange(upto, edge).root()
    last = max(size - 1, 0)
    extra = await conn.fetchval(log.sql.count_nodes) - subtrees
    if extra:
        raise TamperedLog(last, f"{extra} stored subtrees lie outside the log")
    beyond = [row[0] for row in checkpoints if row[0] > size]
    if beyond:
        raise TamperedLog(last, f"a checkpoint of size {min(beyond)} is beyond the log")
    head = await conn.fetchrow(log.sql.read_head)
    if head is None or head[0] != size or [bytes(h) for h in head[1]] != edge:
        raise TamperedLog(last, "the head row disagrees with the events")
    return subtrees, len(checkpoints), CompactRange(size, edge).root()


async def verify_all(
    log: LogRows, *, database_url: str | None = None, workers: int | None = None
) -> VerifySummary:
    """Check every row, subtree and checkpoint; raise :class:`TamperedLog` at the first fault.

    ``workers`` > 1 spreads the leaf pass over that many processes (this one and
    ``workers - 1`` others, each opening its own connection to ``database_url``). ``None``
    chooses: one process per core when the URL is given and the log is long enough to repay
    starting them, else this process alone.
    """
    cpu = time.process_time()
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
        leaf_bad, hashes, used, elsewhere = await _leaf_pass(log, conn, size, database_url, workers)
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
        cpu_seconds=time.process_time() - cpu + elsewhere,
    )
