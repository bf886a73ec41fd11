"""Strict parsing of request bodies and query strings into pydantic models.

A body must be ``application/json``, within the app's size limit, valid UTF-8 JSON with no
duplicate keys and no NaN or Infinity; the parsed value must then validate against the
endpoint's model. Each failure is a typed error: malformed JSON is
:class:`~ledger.errors.DecodeError` (``malformed``), a wrong shape is
:class:`~ledger.errors.SchemaError` (``invalid-object``).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from ledger.errors import DecodeError, LedgerError, SchemaError, SizeLimitError

M = TypeVar("M", bound=BaseModel)

#: How many validation errors a problem's detail names before it says "and N more".
MAX_REPORTED_ERRORS = 3
MAX_ERROR_TEXT = 160


class UnsupportedMediaType(LedgerError):
    """A request body that is not declared as JSON (Content-Type application/json)."""

    problem_type = "unsupported-media-type"
    http_status = 415


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DecodeError(f"JSON object has the key {key!r} twice")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    raise DecodeError(f"JSON may not contain {name}")


def parse_json(raw: bytes) -> Any:
    """Parse UTF-8 JSON strictly: duplicate keys, NaN and Infinity are refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("request body is not UTF-8") from None
    try:
        return json.loads(
            text, object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant
        )
    except json.JSONDecodeError as exc:
        raise DecodeError(f"request body is not JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}") from None
    except RecursionError:
        raise DecodeError("request body nests too deeply") from None


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
    return validate(model, parse_json(raw))


def read_query(request: web.Request, model: type[M]) -> M:
    """The query string as ``model``; a repeated parameter is refused, never merged."""
    values: dict[str, str] = {}
    for key in request.query:
        found = request.query.getall(key)
        if len(found) > 1:
            raise SchemaError(f"query parameter {key!r} is given {len(found)} times")
        values[key] = found[0]
    return validate(model, values)
