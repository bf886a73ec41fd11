"""Per-source rate limits: a token bucket per client network, with a bounded memory.

Keys are free, so limits per key only slow an honest player; a source's network is what a
script cannot multiply for free. An IPv4 client is counted by its /24, an IPv6 client by its
/56 (what one subscriber is commonly given). Buckets fill at the published rate up to the
published burst; the least recently seen sources are forgotten past :data:`MAX_SOURCES`
(a forgotten source starts full again, so the bound costs a flooder nothing it could not
already get from fresh networks).

One process keeps its buckets in memory (:class:`TokenBuckets`). Several workers of one
service (``league serve --workers N``) share theirs in the service's schema
(:class:`SharedBuckets`, one statement a request, or a batch of a busy source's), so a
source spreading its connections over the workers gets the published rate, not N times it.
Either is spent the same way, ``await buckets.spend(source, n)``, before the request costs
the service anything else.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ledger.errors import LedgerError, RateLimited
from services.eventlog import EventStore

log = logging.getLogger(__name__)

#: Sources remembered at most (about 100 bytes each).
MAX_SOURCES = 100_000
IPV4_PREFIX = 24
IPV6_PREFIX = 56


#: Client addresses whose source is remembered (a source costs ~10-25 µs to work out with
#: ``ipaddress``, and a busy client asks again and again; a script cycling addresses evicts).
SOURCES_REMEMBERED = 4096


@functools.lru_cache(maxsize=SOURCES_REMEMBERED)
def source_of(address: str | None) -> str:
    """The network a client address is counted by: ``203.0.113.0/24``, ``2001:db8::/56``;
    an address that is not IP (a Unix socket, none) is one source, ``local``."""
    if not address:
        return "local"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "local"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = IPV4_PREFIX if ip.version == 4 else IPV6_PREFIX
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class SourceBuckets(Protocol):
    """Per-source token buckets, however kept."""

    async def spend(self, source: str, count: int) -> None:
        """Spend ``count`` tokens of ``source``'s bucket, or raise :class:`RateLimited`
        (spending nothing)."""


def _too_many(count: int, burst: int, what: str) -> RateLimited:
    return RateLimited(
        f"{count} {what} at once is more than a source may ever send together ({burst})",
        retry_after=60,
    )


def _too_fast(source: str, what: str, rate: float, burst: int, wait: int) -> RateLimited:
    return RateLimited(
        f"{source} has sent {what} faster than the published {round(rate * 60)} a minute "
        f"(bursts of {burst}); try again in {wait} s",
        retry_after=wait,
    )


class TokenBuckets:
    """``take(source, n)`` spends ``n`` tokens of ``source``'s bucket or refuses with the
    seconds until it could (one process's buckets, in memory)."""

    def __init__(
        self,
        *,
        per_minute: int,
        burst: int,
        what: str = "prints",
        clock: Callable[[], float] = time.monotonic,
        max_sources: int = MAX_SOURCES,
    ) -> None:
        self.rate = per_minute / 60
        self.burst = burst
        self.what = what
        self._clock = clock
        self._max = max_sources
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, source: str, count: int) -> None:
        """Spend ``count`` tokens, or raise :class:`RateLimited` (spending nothing)."""
        now = self._clock()
        bucket = self._buckets.pop(source, None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self._buckets[source] = bucket
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        if count > self.burst:
            raise _too_many(count, self.burst, self.what)
        if bucket.tokens < count:
            wait = math.ceil((count - bucket.tokens) / self.rate)
            raise _too_fast(source, self.what, self.rate, self.burst, wait)
        bucket.tokens -= count

    async def spend(self, source: str, count: int) -> None:
        self.take(source, count)

    def __len__(self) -> int:
        return len(self._buckets)


#: Spend from a shared bucket in one statement: a new row starts full less ``count``; an old
#: one is refilled for the time since it was last spent, capped at the burst, and spent only
#: if it holds ``count`` (no row answered: refused, nothing spent). The database's clock is
#: the one clock, whichever worker asks. $1 bucket, $2 source, $3 burst, $4 count, $5 rate/s.
SPEND = """
WITH asked (burst, count, rate) AS (SELECT $3::float8, $4::float8, $5::float8)
INSERT INTO {s}.source_buckets AS b (bucket, source, tokens, at, full_at)
SELECT $1, $2, burst - count, clock_timestamp(),
       clock_timestamp() + make_interval(secs => count / rate)
FROM asked
ON CONFLICT (bucket, source) DO UPDATE SET
    tokens = least($3::float8, b.tokens + extract(epoch FROM clock_timestamp() - b.at)
                   * $5::float8) - $4::float8,
    at = clock_timestamp(),
    full_at = clock_timestamp() + make_interval(secs => ($3::float8 - (least($3::float8,
        b.tokens + extract(epoch FROM clock_timestamp() - b.at) * $5::float8)
        - $4::float8)) / $5::float8)
WHERE least($3::float8, b.tokens + extract(epoch FROM clock_timestamp() - b.at) * $5::float8)
      >= $4::float8
RETURNING tokens
"""
#: What a refused source's bucket holds now.
HOLDS = """
SELECT least($3::float8, tokens + extract(epoch FROM clock_timestamp() - at) * $4::float8)
FROM {s}.source_buckets WHERE bucket = $1 AND source = $2
"""
#: Buckets full again hold nothing a fresh one would not: the leader forgets them.
FORGET = (
    "WITH gone AS (DELETE FROM {s}.source_buckets WHERE full_at < clock_timestamp()"
    " RETURNING 1) SELECT count(*) FROM gone"
)


class SharedBuckets:
    """The same buckets as :class:`TokenBuckets`, kept in ``store``'s schema so every
    worker of the service spends from one: bucket ``name`` (e.g. ``claims``).

    Spends of one source that arrive while a statement of that source is in flight wait for
    it and are then taken together, in one statement of their sum: granted, each is granted;
    refused (the bucket holds less than the sum), each is spent again alone in arrival order,
    as it would have been one by one. A busy source so costs a statement a batch rather than
    a request, and the bucket ends as it would have spent one request at a time."""

    def __init__(
        self, store: EventStore, name: str, *, per_minute: int, burst: int, what: str = "prints"
    ) -> None:
        self.store = store
        self.name = name
        self.rate = per_minute / 60
        self.burst = burst
        self.what = what
        self._spend = SPEND.replace("{s}", store.schema)
        self._holds = HOLDS.replace("{s}", store.schema)
        #: Per source, the spends waiting for the statement in flight (count, answer).
        self._waiting: dict[str, list[tuple[int, asyncio.Future[None]]]] = {}
        #: The tasks taking each source's spends (kept referenced until they finish).
        self._takers: dict[str, asyncio.Task[None]] = {}

    async def spend(self, source: str, count: int) -> None:
        if count > self.burst:
            raise _too_many(count, self.burst, self.what)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(source, []).append((count, future))
        if source not in self._takers:
            self._takers[source] = asyncio.create_task(self._take(source))
        await future

    async def _take(self, source: str) -> None:
        """Take ``source``'s waiting spends, a batch a statement, until none waits."""
        try:
            while waiting := self._waiting.pop(source, None):
                try:
                    await self._settle(source, waiting)
                except Exception as exc:
                    for _, future in waiting:
                        if not future.done():
                            future.set_exception(exc)
                except BaseException:
                    for _, future in waiting:
                        future.cancel()
                    raise
        finally:
            del self._takers[source]
            for _, future in self._waiting.pop(source, []):  # cancelled while waiting
                if not future.done():
                    future.cancel()

    async def _settle(self, source: str, waiting: list[tuple[int, asyncio.Future[None]]]) -> None:
        total = sum(count for count, _ in waiting)
        if len(waiting) > 1 and total <= self.burst and await self._spent(source, total):
            for _, future in waiting:
                if not future.done():
                    future.set_result(None)
            return
        for count, future in waiting:
            refusal = (
                None if await self._spent(source, count) else await self._refusal(source, count)
            )
            if future.done():
                continue
            if refusal is None:
                future.set_result(None)
            else:
                future.set_exception(refusal)

    async def _spent(self, source: str, count: int) -> bool:
        """Spend ``count`` of ``source``'s bucket in one statement; False (spending nothing)
        if it holds less."""
        left = await self.store.fetchval(
            self._spend, self.name, source, float(self.burst), float(count), self.rate
        )
        return left is not None

    async def _refusal(self, source: str, count: int) -> RateLimited:
        holds = await self.store.fetchval(
            self._holds, self.name, source, float(self.burst), self.rate
        )
        wait = max(1, math.ceil((count - float(holds or 0.0)) / self.rate))
        return _too_fast(source, self.what, self.rate, self.burst, wait)


#: Seconds between two sweeps of the shared buckets that are full again.
FORGET_EVERY = 60.0


async def forget_full(store: EventStore, every: float = FORGET_EVERY) -> None:
    """Until cancelled, every ``every`` seconds delete ``store``'s shared buckets that are
    full again (the leader's work: a deleted bucket is a fresh one, so this bounds the table
    by the sources seen within a refill, and changes no answer)."""
    statement = FORGET.replace("{s}", store.schema)
    while True:
        await asyncio.sleep(every)
        try:
            await store.fetchval(statement)
        except LedgerError as exc:  # the database down: the next sweep tries again
            log.warning("%s: full buckets not swept: %s", store.schema, exc.diagnostics())


def source_buckets(
    store: EventStore, name: str, *, per_minute: int, burst: int, what: str, shared: bool
) -> SourceBuckets:
    """Buckets ``name`` of ``what``: in the database when ``shared`` (several workers serve
    ``store``'s service), else in memory."""
    if shared:
        return SharedBuckets(store, name, per_minute=per_minute, burst=burst, what=what)
    return TokenBuckets(per_minute=per_minute, burst=burst, what=what)
