"""Serving an app on a socket with the published limits, and what aiohttp lacks for them.

aiohttp gives a keep-alive timer (which also closes a connection that never completes its
request head), a lingering close for unread bodies, header size limits and the listen backlog:
:func:`serving` sets each from :mod:`services.http.limits`. What it lacks is added here:

- a **connection limit**: one connection more than the limit is answered 503 ``overloaded``
  (problem+json, ``Retry-After``) and closed the moment it opens, so a flood of slow clients
  can never take every file descriptor;
- a **per-source connection limit**: one source (an IPv4 address, an IPv6 /64) holding its
  share already is answered 429 ``rate-limited`` and closed as it opens, so one client cannot
  hold every slot (a trusted reverse proxy is no source: it limits its clients itself);
- an **internal listener**: ``serving(..., internal=sock)`` also serves on a loopback socket
  reserved for the league's own calls between the services one server serves (``league
  serve`` points them there: :func:`internal_listener`), whose connections are counted apart,
  so outside clients holding every slot never make the server's calls to itself fail;
- **problem+json for aiohttp's own refusals** (a request that is not HTTP, a line too long):
  a :class:`GuardedRequestHandler` answers them like every other refusal, with the neutral
  ``Server`` header, and logs them as one debug line, since they are the client's fault;
- **log throttling** (:class:`LogThrottle`): one message repeated faster than the published
  burst is suppressed and counted, so a flood cannot fill the disk with the same line.

The body read timeout lives where the body is read (``services.http.bodies``).
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import ipaddress
import json
import logging
import os
import re
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aiohttp import web

from ledger.api.problems import PROBLEM_JSON, PROBLEM_PREFIX
from services.http.limits import (
    BACKLOG,
    LOG_BURST,
    LOG_WINDOW,
    OVERLOADED_RETRY_AFTER,
    TRUSTED_PROXIES,
    ServerLimits,
    limits_of,
)
from services.http.problems import HTTP_SLUGS, SERVER_NAME, problem_response, title_of

log = logging.getLogger(__name__)


def _refusal(slug: str, status: int, reason: str, detail: str) -> bytes:
    """The whole answer to a connection refused as it opens (problem+json, then closed)."""
    body = json.dumps(
        {
            "type": PROBLEM_PREFIX + slug,
            "title": title_of(slug),
            "status": status,
            "detail": detail,
            "instance": "/",
        },
        separators=(",", ":"),
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {PROBLEM_JSON}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {OVERLOADED_RETRY_AFTER}\r\n"
        f"Server: {SERVER_NAME}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


#: The whole answer to a connection over the limit, written before any request is read.
OVERLOADED_ANSWER = _refusal(
    "overloaded",
    503,
    "Service Unavailable",
    "the server serves as many connections as it takes; try again shortly",
)
#: The whole answer to a connection over its source's share.
SOURCE_LIMITED_ANSWER = _refusal(
    "rate-limited",
    429,
    "Too Many Requests",
    "your address holds as many connections to the server as one source may; reuse or close "
    "one, then try again",
)
#: An IPv6 client is counted by its /64 (one host's usual share); an IPv4 one by its address.
IPV6_SOURCE_PREFIX = 64


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def connection_source(peer: object, trusted: tuple[Network, ...] = ()) -> str | None:
    """The source a peer address (``peername``) counts against: its IPv4 address, its IPv6
    /64; None for a peer in ``trusted`` (a reverse proxy, limiting its clients itself) or
    one that is not IP (a Unix socket)."""
    if not isinstance(peer, tuple) or not peer or not isinstance(peer[0], str):
        return None
    try:
        ip = ipaddress.ip_address(peer[0].split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in trusted):
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{ip}/{IPV6_SOURCE_PREFIX}", strict=False))
    return str(ip)


class GuardedServer(web.Server):
    """aiohttp's connection manager, making :class:`GuardedRequestHandler` protocols that
    refuse connections beyond the limits: ``limit`` outside connections in all, ``per_source``
    of them from one source (a ``trusted`` proxy excepted), and ``internal_limit`` on the
    internal listener (whose local addresses are ``internal``), counted apart."""

    def __init__(
        self,
        plain: web.Server,
        limits: ServerLimits,
        *,
        internal: frozenset[tuple[str, int]] = frozenset(),
        trusted: tuple[Network, ...] = (),
    ) -> None:
        # The same handler, request factory and protocol settings as the server aiohttp's
        # AppRunner made (it builds it internally; this only swaps the protocol class).
        super().__init__(
            plain.request_handler,
            request_factory=plain.request_factory,
            handler_cancellation=plain.handler_cancellation,
            loop=plain._loop,
            **plain._kwargs,
        )
        self.limit = limits.connection_limit()
        self.per_source = limits.max_per_source
        self.internal_limit = limits.max_internal
        self.internal = internal
        self.trusted = trusted
        #: Connections refused for a limit since the server started.
        self.refused = 0
        #: Outside connections open, internal ones open, and outside ones by source.
        self.outside = 0
        self.inside = 0
        self.sources: dict[str, int] = {}

    def __call__(self) -> web.RequestHandler:
        return GuardedRequestHandler(self, loop=self._loop, **self._kwargs)

    def admit(self, transport: asyncio.BaseTransport) -> tuple[str, str | None] | bytes:
        """Count a new connection in (its kind and source), or the answer refusing it."""
        local = transport.get_extra_info("sockname")
        if isinstance(local, tuple) and (str(local[0]), int(local[1])) in self.internal:
            if self.inside >= self.internal_limit:
                return self._refuse(
                    "internal connection limit (%d) reached: an internal call is refused",
                    self.internal_limit,
                    OVERLOADED_ANSWER,
                )
            self.inside += 1
            return "internal", None
        if self.outside >= self.limit:
            return self._refuse(
                "connection limit (%d) reached: a new connection is refused",
                self.limit,
                OVERLOADED_ANSWER,
            )
        source = connection_source(transport.get_extra_info("peername"), self.trusted)
        if source is not None:
            held = self.sources.get(source, 0)
            if held >= self.per_source:
                return self._refuse(
                    "per-source connection limit (%d) reached: a new connection from %s is refused",
                    self.per_source,
                    SOURCE_LIMITED_ANSWER,
                    source,
                )
            self.sources[source] = held + 1
        self.outside += 1
        return "outside", source

    def release(self, kind: str, source: str | None) -> None:
        """Count a closed connection out."""
        if kind == "internal":
            self.inside -= 1
            return
        self.outside -= 1
        if source is not None:
            left = self.sources.pop(source, 1) - 1
            if left > 0:
                self.sources[source] = left

    def _refuse(self, message: str, limit: int, answer: bytes, *more: object) -> bytes:
        self.refused += 1
        log.warning(message, limit, *more)
        return answer


class GuardedRequestHandler(web.RequestHandler):
    """One connection: refused at once beyond the connection limit; aiohttp's own error
    answers (unreadable HTTP) given as problem+json."""

    #: How the manager counted this connection in (None: not counted).
    counted: tuple[str, str | None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        manager = self._manager
        if isinstance(manager, GuardedServer):
            admitted = manager.admit(transport)
            if isinstance(admitted, bytes):
                if isinstance(transport, asyncio.WriteTransport):
                    transport.write(admitted)
                transport.close()
                # Never registered with the manager, never parsed: connection_lost and
                # data_received have nothing to do for it.
                self._manager = None
                self._force_close = True
                return
            self.counted = admitted
        super().connection_made(transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        manager, counted = self._manager, self.counted
        if isinstance(manager, GuardedServer) and counted is not None:
            self.counted = None
            manager.release(*counted)
        super().connection_lost(exc)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500:
            self.logger.error("error answering %s %s", request.method, request.path, exc_info=exc)
        else:
            self.logger.debug(
                "refused an unreadable request from %s: %s", request.remote, exc or message
            )
        if request.writer.output_size > 0:
            raise ConnectionError("the answer was partly sent; the connection is dropped")
        slug = HTTP_SLUGS.get(status, "bad-request" if status < 500 else "internal")
        if status >= 500:
            detail = "the server failed to answer; the operator's log has the cause"
        else:
            detail = _unreadable_detail(exc, self.max_line_size, self.max_headers)
        response = problem_response(slug, status, detail, request)
        response.force_close()
        return response


def _unreadable_detail(exc: BaseException | None, max_line: int, max_headers: int) -> str:
    name = type(exc).__name__
    if name == "LineTooLong":
        return f"the request line or a header line is longer than {max_line} bytes"
    if name == "BadHttpMethod":
        return "the request method is not a valid HTTP method token"
    if name in {"BadStatusLine", "InvalidURLError"}:
        return "the request line is not valid HTTP/1.1"
    if "header" in name.lower() or "Header" in str(exc):
        return f"the request's headers are not valid HTTP/1.1 (at most {max_headers} lines)"
    return "the request is not valid HTTP/1.1"


class LeagueRunner(web.AppRunner):
    """aiohttp's AppRunner, serving through a :class:`GuardedServer`."""

    def __init__(
        self,
        app: web.Application,
        limits: ServerLimits,
        *,
        internal: frozenset[tuple[str, int]] = frozenset(),
        trusted: tuple[Network, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self.limits = limits
        self.internal = internal
        self.trusted = trusted

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()
        return GuardedServer(plain, self.limits, internal=self.internal, trusted=self.trusted)

    @property
    def public_addresses(self) -> list[Any]:
        """The addresses outside clients are served on (the internal listener's left out)."""
        return [a for a in self.addresses if (str(a[0]), int(a[1])) not in self.internal]


#: The address the internal listener is bound to: loopback, never a network address.
INTERNAL_HOST = "127.0.0.1"


def internal_listener() -> socket.socket:
    """A socket bound now on a free loopback port, for :func:`serving`'s ``internal``: bound
    before the app is composed, so its services know where to call each other
    (``f"http://127.0.0.1:{sock.getsockname()[1]}"``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((INTERNAL_HOST, 0))
        # Listening already: a call made while the app starts (before the listener is
        # served) waits in the backlog rather than being refused.
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


@asynccontextmanager
async def serving(
    app: web.Application,
    host: str,
    port: int,
    *,
    internal: socket.socket | None = None,
    listener: socket.socket | None = None,
) -> AsyncIterator[LeagueRunner]:
    """Serve ``app`` on ``host``:``port`` with its limits until the block exits (port 0
    binds a free port: see ``runner.addresses``), or on ``listener``, a socket already
    listening there (one a worker shares with the others: services/kernel/workers.py); and
    on ``internal`` (from :func:`internal_listener`) for the league's own calls, counted apart
    from outside clients. Connections from the app's trusted proxies count against no
    source."""
    limits = limits_of(app)
    internal_at: frozenset[tuple[str, int]] = frozenset()
    if internal is not None:
        bound = internal.getsockname()
        internal_at = frozenset({(str(bound[0]), int(bound[1]))})
    runner = LeagueRunner(
        app,
        limits,
        internal=internal_at,
        trusted=app.get(TRUSTED_PROXIES, ()),
        handle_signals=False,
        access_log=None,
        shutdown_timeout=limits.shutdown_timeout,
        keepalive_timeout=limits.head_timeout,
        lingering_time=limits.linger_timeout,
        max_line_size=limits.max_line,
        max_field_size=limits.max_line,
        max_headers=limits.max_headers,
    )
    await runner.setup()
    try:
        site: web.BaseSite = (
            web.TCPSite(runner, host, port, backlog=limits.backlog)
            if listener is None
            else web.SockSite(runner, listener, backlog=limits.backlog)
        )
        await site.start()
        if internal is not None:
            await web.SockSite(runner, internal, backlog=limits.backlog).start()
        yield runner
    finally:
        await runner.cleanup()


class LogThrottle(logging.Filter):
    """Let one message (logger and format string) through at most ``burst`` times per
    ``window`` seconds; the first one after a suppression says how many were suppressed."""

    def __init__(
        self,
        burst: int = LOG_BURST,
        window: float = LOG_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self.clock = clock
        #: Per message: when its window opened, how many passed in it, how many were dropped.
        self._seen: dict[tuple[str, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = self.clock()
        opened, passed, dropped = self._seen.get(key, (now, 0, 0))
        if now - opened >= self.window:
            opened, passed = now, 0
        if passed >= self.burst:
            self._seen[key] = (opened, passed, dropped + 1)
            return False
        if dropped:
            record.msg = f"{record.msg} (and {dropped} like it suppressed)"
        self._seen[key] = (opened, passed + 1, 0)
        if len(self._seen) > 10_000:  # a bound on distinct messages remembered
            self._seen.clear()
        return True


@asynccontextmanager
async def throttled_logs(throttle: LogThrottle | None = None) -> AsyncIterator[LogThrottle]:
    """Throttle every record the root logger's handlers write while the block runs."""
    throttle = throttle or LogThrottle()
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(throttle)
    try:
        yield throttle
    finally:
        for handler in handlers:
            handler.removeFilter(throttle)


# -- request ids and structured logs -----------------------------------------------------------

#: The header a request id travels in, both ways.
REQUEST_ID_HEADER = "X-Request-Id"
#: The request being answered, for every log line written while answering it.
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
#: A client's request id is used when it is 1 to 128 of these characters (a UUID, a trace id).
WELL_FORMED_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
access = logging.getLogger("services.http.access")


def request_id_of(given: str | None) -> str:
    """The client's request id when well-formed, else a new random one."""
    if given is not None and WELL_FORMED_ID.fullmatch(given):
        return given
    return os.urandom(16).hex()


def access_log(
    method: str, path: str, route: str, status: int, seconds: float, *, gone: bool = False
) -> None:
    """One line per answer (the path without its query): info, or debug for a client that
    went away before its answer (no error of the server's)."""
    access.log(
        logging.DEBUG if gone else logging.INFO,
        "%s %s -> %d in %.1f ms",
        method,
        path,
        status,
        seconds * 1000,
        extra={
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
        },
    )


#: Fields of an access line copied into its JSON object.
_EXTRA_FIELDS = ("method", "route", "status", "duration_ms")
REDACTED = "[redacted]"


class _Redacting(logging.Formatter):
    """A formatter that never writes one of ``secrets``: each is replaced wherever it shows
    (the message, its arguments, a traceback)."""

    def __init__(self, secrets: Sequence[str] = (), fmt: str | None = None) -> None:
        super().__init__(fmt)
        # Longest first, so a secret inside another is not half-replaced.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text


class JsonLogFormatter(_Redacting):
    """One JSON object per line: time (UTC), level, logger, message, the request id when
    answering a request, an access line's fields, and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": self.redact(record.getMessage()),
        }
        request_id = REQUEST_ID.get()
        if request_id is not None:
            entry["request_id"] = request_id
        for name in _EXTRA_FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["exception"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


class HumanLogFormatter(_Redacting):
    """``time level logger [request id] message`` for a person at a terminal."""

    def __init__(self, secrets: Sequence[str] = ()) -> None:
        super().__init__(secrets, "%(asctime)s %(levelname)s %(name)s%(request)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        request_id = REQUEST_ID.get()
        record.request = f" [{request_id}]" if request_id else ""
        return self.redact(super().format(record))


def log_formatter(stream: object, secrets: Sequence[str] = ()) -> logging.Formatter:
    """Human-readable lines for a terminal, JSON lines for anything else (a container's log,
    a file, a pipe)."""
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return HumanLogFormatter(secrets)
    return JsonLogFormatter(secrets)


@contextmanager
def structured_logs(secrets: Sequence[str] = ()) -> Iterator[None]:
    """While the block runs, the root logger's stream handlers write structured lines
    (:func:`log_formatter`) that never show one of ``secrets``."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    before = [h.formatter for h in handlers]
    for handler in handlers:
        handler.setFormatter(log_formatter(handler.stream, secrets))
    try:
        yield
    finally:
        for handler, formatter in zip(handlers, before, strict=True):
            handler.setFormatter(formatter)
