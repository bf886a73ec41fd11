"""The published limits on what a client may hold of the server: one place, one table.

``docs/operations.md`` ("Limits") lists the same numbers; a test keeps the two in step. Each
app carries its limits at :data:`LIMITS` (the defaults below unless a test sets smaller ones
before serving), and :func:`services.http.serving.serving` applies them.
"""

from __future__ import annotations

import ipaddress
import resource
from dataclasses import dataclass

from aiohttp import web

#: Seconds a connection may take to send a complete request head, counted from its opening
#: or from its previous answer; an idle keep-alive connection is closed after as long.
HEAD_TIMEOUT = 15.0
#: Seconds a request body may take to arrive in full once its head has; then 408, closed.
BODY_TIMEOUT = 30.0
#: Seconds an unread body is read and discarded after the answer, before the connection closes.
LINGER_TIMEOUT = 5.0
#: Connections served at once; one more is answered 503 ``overloaded`` and closed at once.
MAX_CONNECTIONS = 1000
#: Connections one source (an IPv4 address, an IPv6 /64) holds at once; one more is answered
#: 429 ``rate-limited`` and closed at once. A trusted reverse proxy is no source: it carries
#: many clients, and limits each itself (docs/operations.md).
MAX_CONNECTIONS_PER_SOURCE = 64
#: Connections at once on the loopback listener reserved for the league's own calls between
#: the services one server serves (``league serve``): never counted with outside clients'.
MAX_INTERNAL_CONNECTIONS = 128
#: File descriptors kept free beside the connections (database pool, logs, listening socket):
#: the connection limit is lowered to the process's descriptor limit less these (and less
#: two per internal connection: both its ends are this process's).
FD_RESERVE = 64
#: Connections the kernel queues before the server accepts them (the listen backlog).
BACKLOG = 128
#: Longest request line and header line, in bytes (longer: 400 ``bad-request``).
MAX_LINE = 8190
#: Most header lines in one request.
MAX_HEADERS = 128
#: Seconds a stopping server waits for answers in progress before closing their connections.
SHUTDOWN_TIMEOUT = 10.0
#: The server's log repeats one message at most this many times per window...
LOG_BURST = 10
#: ...of this many seconds, then says how many it suppressed.
LOG_WINDOW = 60.0
#: Seconds a client refused for the connection limit is told to wait (Retry-After).
OVERLOADED_RETRY_AFTER = 1


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """The limits one served app applies (the published defaults unless a test says less)."""

    head_timeout: float = HEAD_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    linger_timeout: float = LINGER_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    max_per_source: int = MAX_CONNECTIONS_PER_SOURCE
    max_internal: int = MAX_INTERNAL_CONNECTIONS
    backlog: int = BACKLOG
    max_line: int = MAX_LINE
    max_headers: int = MAX_HEADERS
    shutdown_timeout: float = SHUTDOWN_TIMEOUT

    def connection_limit(self) -> int:
        """:attr:`max_connections`, lowered so the connections never take the descriptors
        the process needs besides (its soft RLIMIT_NOFILE less :data:`FD_RESERVE` and the
        internal connections' two ends each)."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, soft - FD_RESERVE - 2 * self.max_internal))


#: The limits an app is served with.
LIMITS = web.AppKey("limits", ServerLimits)
#: The reverse proxies an app trusts (``LEAGUE_TRUSTED_PROXIES``): each carries many clients,
#: so its connections count against no source's share (it limits its clients itself).
TRUSTED_PROXIES = web.AppKey(
    "trusted_proxies", tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
)


def limits_of(app: web.Application) -> ServerLimits:
    """The limits ``app`` is served with (the published defaults when it names none)."""
    return app.get(LIMITS) or ServerLimits()
