"""The shared HTTP layer over a real aiohttp server: problem+json, body and query parsing."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from ledger.errors import LedgerError
from services.http.apps import PROBLEM_TYPES, catalog_of, new_app
from services.http.problems import PROBLEMS, problem_of
from tests.harness.endpoints import ENDPOINTS, problem


@pytest.fixture
async def client(aiohttp_client: Any) -> TestClient:
    return await aiohttp_client(new_app(ENDPOINTS, max_body=1000))


async def test_valid_body_is_answered(client: TestClient) -> None:
    """A well-formed body reaches the handler as its model and the answer is JSON."""
    response = await client.post("/echo", json={"word": "ab", "count": 2})
    assert response.status == 200
    assert await response.json() == {"said": "abab"}


async def test_ledger_error_becomes_its_problem(client: TestClient) -> None:
    """A LedgerError answers with its own problem type, status and diagnostics."""
    response = await client.post("/echo", json={"word": "forged", "count": 1})
    body = await problem(response, 422, "bad-signature")
    assert body["detail"] == "signature does not verify"
    assert body["instance"] == "/echo"
    assert body["title"] == "Bad signature"


async def test_service_defined_error_is_a_problem_too(client: TestClient) -> None:
    """A subclass the table does not name answers as its nearest ancestor that it does."""
    response = await client.post("/echo", json={"word": "teapot", "count": 1})
    body = await problem(response, 422, "verification-failed")
    assert body["detail"] == "short and stout"


async def test_crash_hides_the_cause(client: TestClient) -> None:
    """An unexpected exception is a 500 problem that never carries its message."""
    response = await client.post("/echo", json={"word": "crash", "count": 1})
    body = await problem(response, 500, "internal")
    assert "secret" not in await response.text()
    assert "Traceback" not in body["detail"]


@pytest.mark.parametrize(
    "raw",
    [b"{", b'{"word": "a", "count": NaN}', b'{"word": "a", "word": "b", "count": 1}', b"\xff"],
)
async def test_malformed_json_is_refused(client: TestClient, raw: bytes) -> None:
    """Broken JSON, NaN, duplicate keys and non-UTF-8 bytes are each `malformed` (400)."""
    response = await client.post("/echo", data=raw, headers={"Content-Type": "application/json"})
    await problem(response, 400, "malformed")


async def test_wrong_shape_is_invalid_object(client: TestClient) -> None:
    """JSON of the wrong shape is 422 `invalid-object` naming the field."""
    response = await client.post("/echo", json={"word": "a", "count": "many"})
    body = await problem(response, 422, "invalid-object")
    assert body["detail"].startswith("count:")


async def test_extra_field_is_refused(client: TestClient) -> None:
    """A field the model does not define is refused, never ignored."""
    response = await client.post("/echo", json={"word": "a", "count": 1, "admin": True})
    body = await problem(response, 422, "invalid-object")
    assert "admin" in body["detail"]


async def test_endpoint_body_limit(client: TestClient) -> None:
    """A body over the endpoint's own limit is 413 `too-large`."""
    response = await client.post("/echo", json={"word": "a" * 300, "count": 1})
    await problem(response, 413, "too-large")


async def test_app_body_limit(client: TestClient) -> None:
    """A body over the app's client_max_size is 413 `too-large`, sent chunked or not."""

    async def chunks() -> Any:
        for _ in range(20):
            yield b"x" * 100

    response = await client.post(
        "/echo", data=chunks(), headers={"Content-Type": "application/json"}
    )
    await problem(response, 413, "too-large")


async def test_body_must_be_declared_json(client: TestClient) -> None:
    """A form-encoded body is 415 `unsupported-media-type`."""
    response = await client.post("/echo", data={"word": "a"})
    await problem(response, 415, "unsupported-media-type")


async def test_unknown_path_and_method(client: TestClient) -> None:
    """Routing failures are problems too: 404 `not-found`, 405 `method-not-allowed`."""
    await problem(await client.get("/nowhere"), 404, "not-found")
    await problem(await client.get("/echo"), 405, "method-not-allowed")


async def test_query_is_parsed_strictly(client: TestClient) -> None:
    """Query parameters validate against the model; repeats and unknown names are refused."""
    response = await client.get("/page", params={"after": "7"})
    assert await response.json() == {"said": "7"}
    await problem(await client.get("/page?after=1&after=2"), 422, "invalid-object")
    await problem(await client.get("/page?after=-1"), 422, "invalid-object")
    await problem(await client.get("/page?before=1"), 422, "invalid-object")


async def test_plain_text_endpoint(client: TestClient) -> None:
    """A str endpoint answers text/plain."""
    response = await client.get("/plain")
    assert response.content_type == "text/plain"
    assert await response.text() == "hello\n"


async def test_problem_types_are_served(client: TestClient) -> None:
    """Every problem type URI dereferences to its description; unknown ones are 404."""
    response = await client.get("/problems/bad-signature")
    assert response.status == 200
    described = await response.json()
    assert described["status"] == 422
    assert "signature" in described["description"].lower()
    await problem(await client.get("/problems/no-such-thing"), 404, "not-found")


def test_catalog_is_what_the_endpoints_answer() -> None:
    """An app's catalog holds its endpoints' refusals and the plain HTTP problems, nothing
    else: a body endpoint brings the parsing refusals, and nothing brings `run-exhausted`."""
    catalog = catalog_of(ENDPOINTS)
    assert catalog["malformed"].status == 400
    assert catalog["too-large"].status == 413
    assert catalog["bad-signature"].status == 422
    assert catalog["not-found"].status == 404
    assert "run-exhausted" not in catalog
    assert "illegal-action" not in catalog


async def test_unlisted_problem_type_is_not_served(client: TestClient) -> None:
    """`/problems/<slug>` serves only the app's own catalog."""
    assert "stale-request" in {spec.slug for spec in PROBLEMS.values()}
    await problem(await client.get("/problems/stale-request"), 404, "not-found")
    assert set(client.app[PROBLEM_TYPES]) == set(catalog_of(ENDPOINTS))


def test_every_table_entry_is_a_ledger_error_with_a_unique_slug() -> None:
    """The table maps refusal classes only, each slug to one status, every status an error."""
    statuses: dict[str, int] = {}
    for error, spec in PROBLEMS.items():
        assert issubclass(error, LedgerError)
        assert 400 <= spec.status < 600
        assert statuses.setdefault(spec.slug, spec.status) == spec.status
        assert problem_of(error) == spec
