"""The league API client's own behaviour: refusals and failures become typed errors."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from aiohttp import web

from clients.league import LeagueClient, LeagueProblem, LeagueUnreachable
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
