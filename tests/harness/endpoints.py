"""A small catalogue of endpoints (a JSON body, a query, plain text) for testing the shared
HTTP layer, and the check of a problem+json answer."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from ledger.api.problems import PROBLEM_JSON
from ledger.errors import BadSignatureError, VerificationError
from services.http.endpoints import Endpoint


class Echo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    word: str = Field(max_length=10)
    count: int


class Page(BaseModel):
    model_config = ConfigDict(extra="forbid")
    after: int = Field(default=0, ge=0)


class Said(BaseModel):
    said: str


class TeapotError(VerificationError):
    """A refusal defined by a service beside its code, which the table does not name."""


async def echo(request: web.Request, body: Echo) -> Said:
    if body.word == "forged":
        raise BadSignatureError("signature does not verify")
    if body.word == "teapot":
        raise TeapotError("short and stout")
    if body.word == "crash":
        raise RuntimeError("secret-database-password")
    return Said(said=body.word * body.count)


async def page(request: web.Request, query: Page) -> Said:
    return Said(said=str(query.after))


async def plain(request: web.Request) -> str:
    return "hello\n"


ENDPOINTS = (
    Endpoint(
        "POST",
        "/echo",
        "Echo a word",
        echo,
        Said,
        body=Echo,
        max_body=200,
        problems=(BadSignatureError,),
    ),
    Endpoint("GET", "/page", "Read a page", page, Said, query=Page),
    Endpoint("GET", "/plain", "Plain text", plain, str),
)


async def problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    assert response.status == status
    assert response.content_type == PROBLEM_JSON
    body = await response.json(content_type=PROBLEM_JSON)
    assert set(body) == {"type", "title", "status", "detail", "instance"}
    assert body["type"] == f"/problems/{slug}"
    assert body["status"] == status
    return body
