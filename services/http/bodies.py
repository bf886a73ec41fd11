"""Strict parsing of request bodies and query strings into pydantic models.

A body must be ``application/json``, within the app's size limit, and JSON with no duplicate
keys and no NaN or Infinity (``ledger.wire.parse_json``); the parsed value must then validate
against the endpoint's model (a protocol object through its own ``from_wire``). Each failure
is a typed error: malformed JSON is :class:`~ledger.errors.DecodeError` (``malformed``), a
wrong shape is :class:`~ledger.errors.SchemaError` (``invalid-object``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from ledger.errors import SchemaError, SizeLimitError, UnsupportedMediaType
from ledger.wire import WireModel, parse_json

M = TypeVar("M", bound=BaseModel)

#: How many validation errors a problem's detail names before it says "and N more".
MAX_REPORTED_ERRORS = 3
MAX_ERROR_TEXT = 160


def describe_validation(exc: ValidationError) -> str:
    """A one-line summary of a pydantic error: the first few fields and what is wrong."""
    parts = []
    for error in exc.errors()[:MAX_REPORTED_ERRORS]:
        where = ".".join(str(p) for p in error["loc"]) or "body"
        message = error["msg"]
        if len(message) > MAX_ERROR_TEXT:
            message = message[: MAX_ERROR_TEXT - 1] + "…"
        parts.append(f"{where}: {message}")
    more = exc.error_count() - MAX_REPORTED_ERRORS
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def validate(model: type[M], value: Any) -> M:
    """Validate an already-parsed value, raising :class:`SchemaError` with a readable detail."""
    if issubclass(model, WireModel):
        return model.from_wire(value)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise SchemaError(describe_validation(exc)) from None


async def read_json_body(request: web.Request, model: type[M], *, limit: int | None = None) -> M:
    """The request body as ``model``; the app's ``client_max_size`` bounds what is read,
    ``limit`` (when given) bounds it further."""
    if request.content_type != "application/json":
        raise UnsupportedMediaType(
            f"send the body as application/json, not {request.content_type or 'nothing'}"
        )
    if limit is not None and (request.content_length or 0) > limit:
        raise SizeLimitError(f"request body is larger than {limit} bytes")
    raw = await request.read()
    if limit is not None and len(raw) > limit:
        raise SizeLimitError(f"request body is larger than {limit} bytes")
    return validate(model, parse_json(raw, what="request body"))


def read_query(request: web.Request, model: type[M]) -> M:
    """The query string as ``model``; a repeated parameter is refused, never merged."""
    values: dict[str, str] = {}
    for key in request.query:
        found = request.query.getall(key)
        if len(found) > 1:
            raise SchemaError(f"query parameter {key!r} is given {len(found)} times")
        values[key] = found[0]
    return validate(model, values)
