"""Serving an app on a socket with the published limits, and what aiohttp lacks for them.

aiohttp gives a keep-alive timer (which also closes a connection that never completes its
request head), a lingering close for unread bodies, header size limits and the listen backlog:
:func:`serving` sets each from :mod:`services.http.limits`. What it lacks is added here:

- a **connection limit**: one connection more than the limit is answered 503 ``overloaded``
  (problem+json, ``Retry-After``) and closed the moment it opens, so a flood of slow clients
  can never take every file descriptor;
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
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from aiohttp import web

from ledger.api.problems import PROBLEM_JSON, PROBLEM_PREFIX
from services.http.limits import (
    LOG_BURST,
    LOG_WINDOW,
    OVERLOADED_RETRY_AFTER,
    ServerLimits,
    limits_of,
)
from services.http.problems import HTTP_SLUGS, SERVER_NAME, problem_response, title_of

log = logging.getLogger(__name__)


def _overloaded_answer() -> bytes:
    body = json.dumps(
        {
            "type": PROBLEM_PREFIX + "overloaded",
            "title": title_of("overloaded"),
            "status": 503,
            "detail": "the server serves as many connections as it takes; try again shortly",
            "instance": "/",
        },
        separators=(",", ":"),
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        f"Content-Type: {PROBLEM_JSON}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Retry-After: {OVERLOADED_RETRY_AFTER}\r\n"
        f"Server: {SERVER_NAME}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


#: The whole answer to a connection over the limit, written before any request is read.
OVERLOADED_ANSWER = _overloaded_answer()


class GuardedServer(web.Server):
    """aiohttp's connection manager, making :class:`GuardedRequestHandler` protocols that
    refuse connections beyond ``limit``."""

    def __init__(self, plain: web.Server, limit: int) -> None:
        # The same handler, request factory and protocol settings as the server aiohttp's
        # AppRunner made (it builds it internally; this only swaps the protocol class).
        super().__init__(
            plain.request_handler,
            request_factory=plain.request_factory,
            handler_cancellation=plain.handler_cancellation,
            loop=plain._loop,
            **plain._kwargs,
        )
        self.limit = limit
        #: Connections refused for the limit since the server started.
        self.refused = 0

    def __call__(self) -> web.RequestHandler:
        return GuardedRequestHandler(self, loop=self._loop, **self._kwargs)


class GuardedRequestHandler(web.RequestHandler):
    """One connection: refused at once beyond the connection limit; aiohttp's own error
    answers (unreadable HTTP) given as problem+json."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        manager = self._manager
        if isinstance(manager, GuardedServer) and len(manager.connections) >= manager.limit:
            manager.refused += 1
            log.warning(
                "connection limit (%d) reached: a new connection is refused", manager.limit
            )
            if isinstance(transport, asyncio.WriteTransport):
                transport.write(OVERLOADED_ANSWER)
            transport.close()
            # Never registered with the manager, never parsed: connection_lost and
            # data_received have nothing to do for it.
            self._manager = None
            self._force_close = True
            return
        super().connection_made(transport)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500:
            self.logger.error(
                "error answering %s %s", request.method, request.path, exc_info=exc
            )
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

    def __init__(self, app: web.Application, limits: ServerLimits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.limits = limits

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()
        return GuardedServer(plain, self.limits.connection_limit())


@asynccontextmanager
async def serving(app: web.Application, host: str, port: int) -> AsyncIterator[LeagueRunner]:
    """Serve ``app`` on ``host``:``port`` with its limits until the block exits (port 0
    binds a free port: see ``runner.addresses``)."""
    limits = limits_of(app)
    runner = LeagueRunner(
        app,
        limits,
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
        site = web.TCPSite(runner, host, port, backlog=limits.backlog)
        await site.start()
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
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
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
        "%s %s -> %d in %.1f ms", method, path, status, seconds * 1000,
        extra={"method": method, "route": route, "status": status,
               "duration_ms": round(seconds * 1000, 3)},
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
    handlers = [
        h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)
    ]
    before = [h.formatter for h in handlers]
    for handler in handlers:
        handler.setFormatter(log_formatter(handler.stream, secrets))
    try:
        yield
    finally:
        for handler, formatter in zip(handlers, before, strict=True):
            handler.setFormatter(formatter)
