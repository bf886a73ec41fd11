"""Endpoint declarations: one list per service is both its routes and its OpenAPI document.

A handler receives the request and, when the endpoint declares them, the parsed ``body`` and
``query`` models; it returns the declared response model (rendered as JSON), a ``str`` for a
``text/plain`` endpoint, or a ready :class:`aiohttp.web.StreamResponse`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from ledger.errors import LedgerError
from services.http.bodies import read_json_body, read_query
from services.http.pages import Page, add_search, render_page, wants_html
from services.http.problems import BODY_REFUSALS, EVERY_ENDPOINT, QUERY_REFUSALS

EndpointHandler = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route of a service and everything its OpenAPI operation says."""

    method: str
    path: str
    summary: str
    handler: EndpointHandler
    response: type[BaseModel] | type[str]
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    #: The refusals this endpoint answers beyond those of every endpoint and of its body and
    #: query parsing (which :attr:`refusals` adds).
    problems: tuple[type[LedgerError], ...] = ()
    description: str = ""
    #: Largest body accepted, in bytes (the app's client_max_size bounds it too).
    max_body: int | None = None
    #: The answer as a page for people, to a request preferring HTML (services.http.pages).
    page: Page | None = None

    @property
    def operation_id(self) -> str:
        return self.handler.__name__

    @property
    def refusals(self) -> tuple[type[LedgerError], ...]:
        """Every refusal class this endpoint can answer with."""
        found = EVERY_ENDPOINT + self.problems
        if self.body is not None:
            found += BODY_REFUSALS
        if self.query is not None:
            found += QUERY_REFUSALS
        return tuple(dict.fromkeys(found))


def _render(endpoint: Endpoint, result: Any) -> web.StreamResponse:
    if isinstance(result, web.StreamResponse):
        return result
    if endpoint.response is str:
        return web.Response(text=result, content_type="text/plain")
    # ``response`` is a model class here, so the second test only tells mypy so.
    if not isinstance(result, endpoint.response) or not isinstance(result, BaseModel):
        raise TypeError(f"{endpoint.operation_id} returned {type(result).__name__}")
    return web.Response(text=result.model_dump_json(), content_type="application/json")


def _route_handler(endpoint: Endpoint) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def answer(request: web.Request) -> Any:
        kwargs: dict[str, Any] = {}
        if endpoint.body is not None:
            kwargs["body"] = await read_json_body(request, endpoint.body, limit=endpoint.max_body)
        if endpoint.query is not None:
            kwargs["query"] = read_query(request, endpoint.query)
        return await endpoint.handler(request, **kwargs)

    page = endpoint.page

    async def handle(request: web.Request) -> web.StreamResponse:
        if page is None:
            return _render(endpoint, await answer(request))
        # Negotiated: a page to a browser, the JSON to everyone else (Vary says so to caches).
        response: web.StreamResponse
        if wants_html(request):
            response = await render_page(request, page, lambda: answer(request))
        else:
            response = _render(endpoint, await answer(request))
        response.headers["Vary"] = "Accept"
        return response

    handle.__name__ = endpoint.operation_id
    return handle


def add_endpoints(app: web.Application, endpoints: Iterable[Endpoint]) -> None:
    """Register each endpoint's route on ``app``; every GET answers HEAD too."""
    for endpoint in endpoints:
        if endpoint.method == "GET":
            app.router.add_get(endpoint.path, _route_handler(endpoint), allow_head=True)
            if endpoint.page is not None:
                add_search(app, endpoint.path, endpoint.page)
        else:
            app.router.add_route(endpoint.method, endpoint.path, _route_handler(endpoint))
