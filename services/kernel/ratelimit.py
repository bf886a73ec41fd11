"""Per-source rate limits: a token bucket per client network, with a bounded memory.

Keys are free, so limits per key only slow an honest player; a source's network is what a
script cannot multiply for free. An IPv4 client is counted by its /24, an IPv6 client by its
/56 (what one subscriber is commonly given). Buckets fill at the published rate up to the
published burst; the least recently seen sources are forgotten past :data:`MAX_SOURCES`
(a forgotten source starts full again, so the bound costs a flooder nothing it could not
already get from fresh networks).
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ledger.errors import RateLimited

#: Sources remembered at most (about 100 bytes each).
MAX_SOURCES = 100_000
IPV4_PREFIX = 24
IPV6_PREFIX = 56


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


class TokenBuckets:
    """``take(source, n)`` spends ``n`` tokens of ``source``'s bucket or refuses with the
    seconds until it could."""

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
            raise RateLimited(
                f"{count} {self.what} at once is more than a source may ever send together "
                f"({self.burst})",
                retry_after=60,
            )
        if bucket.tokens < count:
            wait = math.ceil((count - bucket.tokens) / self.rate)
            raise RateLimited(
                f"{source} has sent {self.what} faster than the published "
                f"{round(self.rate * 60)} a minute (bursts of {self.burst}); "
                f"try again in {wait} s",
                retry_after=wait,
            )
        bucket.tokens -= count

    def __len__(self) -> int:
        return len(self._buckets)
