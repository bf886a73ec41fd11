"""The league API client's own behaviour: refusals and failures become typed errors."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp import web

from apiclient.league import MAX_RETRIES, LeagueClient, LeagueProblem, LeagueUnreachable
from ledger.api.problems import PROBLEM_JSON
from ledger.errors import SchemaError, SizeLimitError
from ledger.limits import MAX_ANSWER_BYTES, MIB
from services.http.apps import new_app


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_league_is_a_typed_error() -> None:
    """Nothing listening: LeagueUnreachable naming the URL, not an aiohttp exception."""
    url = f"http://127.0.0.1:{closed_port()}"
    async with LeagueClient(url, timeout=10) as league:
        with pytest.raises(LeagueUnreachable, match="did not answer"):
            await league.census()


async def test_unreachable_league_never_names_the_url_password() -> None:
    """A base URL with credentials is named in the error without its user or password."""
    url = f"http://player:hunter2@127.0.0.1:{closed_port()}"
    async with LeagueClient(url, timeout=10) as league:
        with pytest.raises(LeagueUnreachable, match="did not answer") as caught:
            await league.census()
    assert "hunter2" not in caught.value.diagnostics()
    assert "127.0.0.1" in caught.value.diagnostics()


async def test_problem_answer_becomes_league_problem(aiohttp_server: Any) -> None:
    """A problem+json answer keeps its slug, status and detail."""
    server = await aiohttp_server(new_app(()))
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(LeagueProblem) as caught:
            await league.census()
    assert (caught.value.slug, caught.value.status) == ("not-found", 404)
    assert "/ledger" in caught.value.diagnostics()


async def test_error_without_a_problem_document_is_refused(aiohttp_server: Any) -> None:
    """A 502 from a proxy (plain text) is a SchemaError, never parsed as an answer."""
    app = web.Application()

    async def gateway(request: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>bad gateway</html>", content_type="text/html")

    app.router.add_get("/ledger", gateway)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(SchemaError, match="502"):
            await league.census()


async def test_answer_of_the_wrong_shape_is_refused(aiohttp_server: Any) -> None:
    """A 200 whose JSON is not a census is a SchemaError naming the endpoint."""
    app = web.Application()

    async def liar(request: web.Request) -> web.Response:
        return web.json_response({"titles": "all of them"})

    app.router.add_get("/ledger", liar)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(SchemaError, match="/ledger"):
            await league.census()


async def test_an_answer_past_the_limit_is_refused_unread(aiohttp_server: Any) -> None:
    """A league streaming more than MAX_ANSWER_BYTES (no Content-Length) is a SizeLimitError."""
    app = web.Application()

    async def flood(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        chunk = b" " * MIB
        for _ in range(MAX_ANSWER_BYTES // MIB + 1):
            await response.write(chunk)
        await response.write_eof()
        return response

    app.router.add_get("/ledger", flood)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(SizeLimitError, match="larger than"):
            await league.census()


async def test_an_answer_declared_too_long_is_refused(aiohttp_server: Any) -> None:
    """A Content-Length past MAX_ANSWER_BYTES is refused before the body is read."""
    app = web.Application()

    async def declared(request: web.Request) -> web.Response:
        return web.Response(body=b" " * (MAX_ANSWER_BYTES + 1), content_type="application/json")

    app.router.add_get("/ledger", declared)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(SizeLimitError, match="larger than"):
            await league.census()


async def test_overload_is_retried_honouring_retry_after(aiohttp_server: Any) -> None:
    """503 and 429 with a short Retry-After are retried (the POSTs are idempotent): the third
    attempt's answer is returned, after exactly three requests."""
    app = web.Application()
    seen: list[int] = []

    async def busy(request: web.Request) -> web.Response:
        seen.append(1)
        if len(seen) == 1:
            return web.Response(status=503, headers={"Retry-After": "0"}, text="busy")
        if len(seen) == 2:
            return web.Response(status=429, text="slow down")  # no Retry-After: backoff
        return web.Response(text="the checkpoint")

    app.router.add_get("/mint/checkpoint", busy)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url("")), retries=MAX_RETRIES) as league:
        assert await league.checkpoint() == "the checkpoint"
    assert len(seen) == 3
    async with LeagueClient(str(server.make_url(""))) as league:  # the default: no retries
        seen.clear()
        with pytest.raises(SchemaError, match="503"):
            await league.checkpoint()
    assert len(seen) == 1


async def test_a_long_retry_after_is_answered_at_once(aiohttp_server: Any) -> None:
    """A 429 asking to wait past MAX_RETRY_WAIT (an allowance resetting at midnight) is the
    problem at once, not a sleep; a 503 that never clears gives up after MAX_RETRIES."""
    app = web.Application()
    seen: list[str] = []
    problem = {
        "type": "/problems/allowance-exhausted",
        "title": "Allowance exhausted",
        "status": 429,
        "detail": "come back tomorrow",
        "instance": "/ledger",
    }

    async def tomorrow(request: web.Request) -> web.Response:
        seen.append("ledger")
        return web.json_response(
            problem, status=429, headers={"Retry-After": "36000"}, content_type=PROBLEM_JSON
        )

    async def down(request: web.Request) -> web.Response:
        seen.append("checkpoint")
        return web.Response(status=503, headers={"Retry-After": "0"}, text="down")

    app.router.add_get("/ledger", tomorrow)
    app.router.add_get("/mint/checkpoint", down)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url("")), retries=MAX_RETRIES) as league:
        with pytest.raises(LeagueProblem) as caught:
            await league.census()
        assert caught.value.slug == "allowance-exhausted"
        with pytest.raises(SchemaError, match="503"):
            await league.checkpoint()
    assert seen == ["ledger"] + ["checkpoint"] * (MAX_RETRIES + 1)


@pytest.mark.parametrize(
    "serial", ["CZ-TALLY-0001/../../tables/events", "CZ-TALLY-0001?x=1", "CZ%2F..", "", "é"]
)
async def test_a_path_segment_never_names_another_resource(
    aiohttp_server: Any, serial: str
) -> None:
    """A serial, address or table id the client puts in a URL path is one segment of serial
    characters: a ``/``, ``..``, ``?`` or ``%`` in it (a user's typing, or a table id from a
    forged answer) is refused before any request, so it never reaches another endpoint."""
    asked: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        asked.append(request.path_qs)
        return web.json_response({})

    app = web.Application()
    app.router.add_route("*", "/{path:.*}", anything)
    server = await aiohttp_server(app)
    async with LeagueClient(str(server.make_url(""))) as league:
        with pytest.raises(SchemaError, match="is not a serial"):
            await league.provenance(serial)
        with pytest.raises(SchemaError, match="is not a table id"):
            await league.table(serial)
        with pytest.raises(SchemaError, match="is not a table id"):
            await league.table_events(serial)
        with pytest.raises(SchemaError, match="is not an address"):
            await league.owner(serial)
    assert asked == []
