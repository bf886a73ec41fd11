"""Bad input gets the right answer: encodings, query integers, huge numbers, methods, HEAD,
and the store's failures mapped to the right problems."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from services.eventlog.errors import StoreUnavailable, StoreValueRefused
from services.eventlog.store import _wrapped
from services.http.apps import new_app
from services.http.endpoints import Endpoint
from services.http.problems import problem_of
from tests.harness.endpoints import ENDPOINTS, Echo, Said, problem


async def unavailable(request: web.Request) -> Said:
    async with _wrapped():
        raise asyncpg.InternalClientError("cannot switch to state 15")


async def roomy(request: web.Request, body: Echo) -> Said:
    return Said(said=body.word)


WITH_STORE = (
    *ENDPOINTS,
    Endpoint("GET", "/stamping", "Fails", unavailable, Said),
    Endpoint("POST", "/roomy", "Room for big numbers", roomy, Said, body=Echo, max_body=20_000),
)


@pytest.fixture
async def client(aiohttp_client: Any) -> TestClient:
    return await aiohttp_client(new_app(WITH_STORE, max_body=20_000))


@pytest.mark.parametrize(
    "raw",
    [
        b'\xef\xbb\xbf{"word": "a", "count": 1}',
        '{"word": "a", "count": 1}'.encode("utf-16"),
        '{"word": "a", "count": 1}'.encode("utf-16-le"),
        '{"word": "a", "count": 1}'.encode("utf-16-be"),
        '{"word": "a", "count": 1}'.encode("utf-32"),
        b'{"word": "\xed\xa0\x80", "count": 1}',
    ],
    ids=["utf8-bom", "utf16-bom", "utf16-le", "utf16-be", "utf32", "encoded-surrogate"],
)
async def test_a_body_must_be_utf8_without_bom(client: TestClient, raw: bytes) -> None:
    """A body with a UTF-8 byte order mark, in UTF-16 or UTF-32, or with an encoded
    surrogate, is 400 `malformed` (RFC 8259 §8.1: UTF-8 without a BOM)."""
    # Regression: a body with a UTF-8 BOM or sent as UTF-16 was accepted and stamped
    response = await client.post("/echo", data=raw, headers={"Content-Type": "application/json"})
    await problem(response, 400, "malformed")


@pytest.mark.parametrize("value", ["+1", " 1", "1 ", "1_0", "01", "0x1", "1.0", "١", ""])
async def test_query_integers_are_canonical_decimal(client: TestClient, value: str) -> None:
    """A query integer is digits with no leading zero (and an optional minus): `+1`, ` 1`,
    `1_0` (which int() reads as 10), `01`, Arabic-Indic digits are `invalid-object`."""
    # Regression: query integers accepted +1, " 1" and 1_0 (= 10)
    response = await client.get("/page", params={"after": value})
    body = await problem(response, 422, "invalid-object")
    assert "after" in body["detail"]


async def test_a_canonical_query_integer_is_read(client: TestClient) -> None:
    """`0` and `10` read as themselves."""
    # Only canonical decimal digits
    for value in ("0", "10"):
        response = await client.get("/page", params={"after": value})
        assert await response.json() == {"said": value}


async def test_a_huge_integer_is_a_clean_refusal(client: TestClient) -> None:
    """An integer of more than 4,300 digits is `too-large` in a body and `invalid-object` in
    a query, never Python's set_int_max_str_digits hint."""
    # Regression: an integer of over 4,300 digits answered with Python's hint
    digits = "9" * 5000
    response = await client.post(
        "/roomy",
        data=f'{{"word": "a", "count": {digits}}}',
        headers={"Content-Type": "application/json"},
    )
    body = await problem(response, 413, "too-large")
    assert "int_max_str_digits" not in body["detail"]
    response = await client.get(f"/page?after={digits}")
    body = await problem(response, 422, "invalid-object")
    assert "int_max_str_digits" not in body["detail"]


async def test_405_names_the_allowed_methods(client: TestClient) -> None:
    """A 405 carries an `Allow` header listing the methods the path answers."""
    # Regression: 405 without an Allow header
    response = await client.put("/echo", json={})
    await problem(response, 405, "method-not-allowed")
    assert response.headers["Allow"] == "POST"
    response = await client.post("/plain", json={})
    await problem(response, 405, "method-not-allowed")
    assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD"}


async def test_head_is_answered_on_every_get_endpoint(client: TestClient) -> None:
    """HEAD works wherever GET does: the same status and headers, no body."""
    # Regression: HEAD refused on /ledger but allowed on /health
    for path in ("/plain", "/page?after=1", "/problems/malformed"):
        get = await client.get(path)
        head = await client.head(path)
        assert (
            (head.status, head.content_type)
            == (get.status, get.content_type)
            == (200, get.content_type)
        )
        assert await head.read() == b""


async def test_a_driver_in_a_broken_state_is_503_with_retry_after(client: TestClient) -> None:
    """asyncpg's InternalClientError (PostgreSQL killed mid-transaction) is 503
    `store-unavailable` with Retry-After, and its detail names nothing internal."""
    # Regression: PostgreSQL killed during stamping gave 500 (InternalClientError)
    response = await client.get("/stamping")
    body = await problem(response, 503, "store-unavailable")
    assert int(response.headers["Retry-After"]) >= 1
    assert "state 15" not in body["detail"]
    assert "InternalClientError" not in body["detail"]
    assert "unavailable" in body["detail"]


@pytest.mark.parametrize(
    ("failure", "refusal"),
    [
        (asyncpg.exceptions._base.DataError("value out of int64 range"), StoreValueRefused),
        (asyncpg.DataError("numeric field overflow"), StoreValueRefused),
        (asyncpg.InternalClientError("cannot switch to state 15"), StoreUnavailable),
        (asyncpg.ConnectionDoesNotExistError("connection was closed"), StoreUnavailable),
        (asyncpg.InterfaceError("pool is closed"), StoreUnavailable),
        (FileNotFoundError(2, "No such file or directory"), StoreUnavailable),
        (ConnectionRefusedError(111, "Connection refused"), StoreUnavailable),
    ],
)
async def test_driver_failures_become_store_errors(
    failure: Exception, refusal: type[Exception]
) -> None:
    """Each driver failure leaves the store as its store error: a value the database cannot
    hold is a 422-class refusal, a lost or broken connection is StoreUnavailable (503 with
    Retry-After); neither message names the driver's exception."""
    # Regression: after=9223372036854775808 gave 503 naming DataError; 503 details named
    # FileNotFoundError: [Errno 2]
    with pytest.raises(refusal) as caught:
        async with _wrapped():
            raise failure
    message = str(caught.value)
    assert type(failure).__name__ not in message
    assert "Errno" not in message
    assert str(failure) not in message
    status = problem_of(type(caught.value)).status
    assert status == (422 if refusal is StoreValueRefused else 503)
