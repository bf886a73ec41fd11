"""Slow, vanishing and unreadable clients against a served app, over raw sockets on 127.0.0.1.

Every test opens a bounded number of sockets (at most 50) and every wait is a bounded guard
against a hang, never a timing assertion: the app is served with small limits so the server's
own timers fire quickly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ledger.api.problems import PROBLEM_JSON
from services.http.apps import new_app
from services.http.limits import LIMITS, MAX_CONNECTIONS, ServerLimits
from services.http.problems import SERVER_NAME
from services.http.serving import GuardedServer, LeagueRunner, LogThrottle, serving
from tests.harness.endpoints import ENDPOINTS
from tests.harness.sockets import GUARD, read_answer

HOST = "127.0.0.1"


async def served(limits: ServerLimits) -> tuple[LeagueRunner, int, Any]:
    app = new_app(ENDPOINTS, max_body=1000)
    app[LIMITS] = limits
    context = serving(app, HOST, 0)
    runner = await context.__aenter__()
    return runner, runner.addresses[0][1], context


@pytest.fixture
async def small() -> AsyncIterator[tuple[LeagueRunner, int]]:
    """The test app served with half-second read timeouts and 20 connections at most."""
    runner, port, context = await served(
        ServerLimits(head_timeout=0.5, body_timeout=0.5, linger_timeout=0.2, max_connections=20)
    )
    try:
        yield runner, port
    finally:
        await context.__aexit__(None, None, None)


async def connections_settle(runner: LeagueRunner, count: int) -> None:
    """Wait (at most 1,000 short sleeps) until the server holds exactly ``count``
    connections."""
    server = runner.server
    assert server is not None
    for _ in range(1000):
        if len(server.connections) == count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the server holds {len(server.connections)}, not {count}")


async def test_partial_bodies_are_timed_out(small: tuple[LeagueRunner, int]) -> None:
    """Connections that send a head and part of a body are answered 408 `request-timeout`
    (problem+json) once the body read timeout passes, and closed."""
    # Regression: 5,000 connections sending a partial body were never timed out
    runner, port = small
    head = (
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n"
    )
    streams = [await asyncio.open_connection(HOST, port) for _ in range(10)]
    for _, writer in streams:
        writer.write(head.encode() + b'{"word": ')
        await writer.drain()
    answers = await asyncio.gather(*(read_answer(reader) for reader, _ in streams))
    for status, headers, body in answers:
        assert status == 408
        assert headers["content-type"] == PROBLEM_JSON
        assert json.loads(body)["type"] == "/problems/request-timeout"
    for _, writer in streams:
        writer.close()
    await connections_settle(runner, 0)


async def test_partial_heads_are_closed(small: tuple[LeagueRunner, int]) -> None:
    """A connection that never completes its request head, or sends nothing, is closed
    when the head timeout passes."""
    # Regression: slow clients were never timed out
    runner, port = small
    streams = [await asyncio.open_connection(HOST, port) for _ in range(10)]
    for i, (_, writer) in enumerate(streams):
        if i % 2:
            writer.write(b"GET /plain HTTP/1.1\r\nHost: x\r\n")
            await writer.drain()
    for reader, _ in streams:
        assert await asyncio.wait_for(reader.read(), GUARD) == b""
    for _, writer in streams:
        writer.close()
    await connections_settle(runner, 0)


async def test_connections_beyond_the_limit_are_refused_at_once() -> None:
    """With 20 connections held, each of 30 more is answered 503 `overloaded` with
    Retry-After and closed; once held ones close, new ones are served again."""
    # Regression: at 20,000 connections the process ran out of file descriptors
    runner, port, context = await served(
        ServerLimits(head_timeout=60, body_timeout=60, max_connections=20)
    )
    try:
        held = [await asyncio.open_connection(HOST, port) for _ in range(20)]
        await connections_settle(runner, 20)
        for _ in range(30):
            reader, writer = await asyncio.open_connection(HOST, port)
            status, headers, body = await read_answer(reader)
            writer.close()
            assert status == 503
            assert headers["content-type"] == PROBLEM_JSON
            assert headers["retry-after"] == "1"
            assert headers["server"] == SERVER_NAME
            assert json.loads(body)["type"] == "/problems/overloaded"
        server = runner.server
        assert isinstance(server, GuardedServer)
        assert server.refused == 30
        for _, writer in held[:5]:
            writer.close()
        await connections_settle(runner, 15)
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(b"GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, _, body = await read_answer(reader)
        assert (status, body) == (200, b"hello\n")
        writer.close()
        for _, writer in held[5:]:
            writer.close()
    finally:
        await context.__aexit__(None, None, None)


def test_the_limit_leaves_descriptors_free() -> None:
    """The connection limit never exceeds the process's descriptor limit less a reserve."""
    # A connection limit below the file descriptor limit
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = ServerLimits().connection_limit()
    assert 1 <= limit <= MAX_CONNECTIONS
    assert soft == resource.RLIM_INFINITY or limit < soft


async def test_a_client_vanishing_mid_body_is_not_an_error(
    small: tuple[LeagueRunner, int], caplog: pytest.LogCaptureFixture
) -> None:
    """A client that disconnects in the middle of its body leaves no error and no traceback
    in the log: at most one debug line."""
    # Regression: every client disconnecting mid-body logged "unhandled error" + traceback
    runner, port = small
    caplog.set_level(logging.DEBUG)
    head = (
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n"
    )
    for _ in range(5):
        _, writer = await asyncio.open_connection(HOST, port)
        writer.write(head.encode() + b'{"wo')
        await writer.drain()
        await connections_settle(runner, 1)
        writer.transport.abort()
        await connections_settle(runner, 0)
    noisy = [r for r in caplog.records if r.levelno >= logging.INFO or r.exc_info]
    assert noisy == [], [r.getMessage() for r in noisy]


@pytest.mark.parametrize(
    "raw",
    [
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"G@T /plain HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /plain HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40,
    ],
    ids=["long-url", "bad-method", "long-header", "tls-hello"],
)
async def test_unreadable_requests_are_problems(
    small: tuple[LeagueRunner, int], raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """aiohttp's own refusals (a URL or header line too long, a bad method, not HTTP at all)
    are 400 `bad-request` problem+json with the neutral Server header, logged at debug."""
    # Regression: aiohttp's own 400/414 were text/plain, not problem+json
    _, port = small
    caplog.set_level(logging.DEBUG)
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(raw)
    await writer.drain()
    status, headers, body = await read_answer(reader)
    writer.close()
    assert status == 400
    assert headers["content-type"] == PROBLEM_JSON
    assert headers["server"] == SERVER_NAME
    problem = json.loads(body)
    assert problem["type"] == "/problems/bad-request"
    assert "bytearray" not in problem["detail"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_log_throttle_suppresses_a_flood_and_counts_it() -> None:
    """One message repeated beyond the burst within a window is suppressed; the first one
    of the next window says how many were; other messages pass meanwhile."""
    # Regression: the log grew 2.8 MB/s ("socket.accept() out of system resource")
    now = [0.0]
    throttle = LogThrottle(burst=3, window=10.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, msg, None, None)

    passed = [throttle.filter(record("socket.accept() out of system resource")) for _ in range(50)]
    assert passed.count(True) == 3
    assert throttle.filter(record("another message"))
    now[0] = 10.0
    again = record("socket.accept() out of system resource")
    assert throttle.filter(again)
    assert again.getMessage().endswith("(and 47 like it suppressed)")


async def test_every_answer_names_no_server_version(aiohttp_client: Any) -> None:
    """The Server header is the neutral name on answers and refusals alike."""
    # Regression: the Server header named the aiohttp version
    client = await aiohttp_client(new_app(ENDPOINTS, max_body=1000))
    for path in ("/plain", "/nowhere", "/page?after=x"):
        response = await client.get(path)
        assert response.headers["Server"] == SERVER_NAME


def test_operations_doc_publishes_the_limits() -> None:
    """docs/operations.md's table of limits gives exactly the values in
    services/http/limits.py."""
    # The limits are published as constants in one place and in docs/operations.md
    from pathlib import Path

    from services.http import limits

    doc = (Path(__file__).parents[3] / "docs" / "operations.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| ([a-z ,-]+) \| ([^|]+) \|", doc, re.MULTILINE))
    assert rows["request head timeout"] == f"{limits.HEAD_TIMEOUT:g} s"
    assert rows["request body timeout"] == f"{limits.BODY_TIMEOUT:g} s"
    assert rows["lingering close"] == f"{limits.LINGER_TIMEOUT:g} s"
    assert rows["connections at once"] == str(limits.MAX_CONNECTIONS)
    assert rows["connections per source"] == str(limits.MAX_CONNECTIONS_PER_SOURCE)
    assert rows["internal connections"] == str(limits.MAX_INTERNAL_CONNECTIONS)
    assert rows["listen backlog"] == str(limits.BACKLOG)
    assert rows["request line, header line"] == f"{limits.MAX_LINE} bytes"
    assert rows["header lines"] == str(limits.MAX_HEADERS)
    assert rows["shutdown grace"] == f"{limits.SHUTDOWN_TIMEOUT:g} s"
    assert rows["log repetition"] == f"{limits.LOG_BURST} per {limits.LOG_WINDOW:g} s"
    assert f"less {limits.FD_RESERVE}" in doc
    assert f"Retry-After: {limits.OVERLOADED_RETRY_AFTER}" in doc
