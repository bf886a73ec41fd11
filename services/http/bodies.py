"""Strict parsing of request bodies and query strings into pydantic models.

A body must be ``application/json``, within the app's size limit, arrive within the body
read timeout (else 408), be UTF-8 without a byte order mark (RFC 8259 §8.1: a BOM, UTF-16 or
UTF-32 is ``malformed``), and be JSON with no duplicate keys and no NaN or Infinity
(``ledger.wire.parse_json``); a number of more digits than Python converts is ``too-large``.
The parsed value must then validate against the endpoint's model (a protocol object through
its own ``from_wire``). Each failure is a typed error: malformed JSON is
:class:`~ledger.errors.DecodeError` (``malformed``), a wrong shape is
:class:`~ledger.errors.SchemaError` (``invalid-object``).

A query integer is canonical decimal: digits with no leading zero, an optional leading minus,
at most 19 digits (``+1``, `` 1``, ``1_0``, ``01`` are refused, though ``int()`` takes them).
"""

from __future__ import annotations

import asyncio
import re
import types
from typing import Any, TypeVar, Union, get_args, get_origin

from aiohttp import web
from pydantic import BaseModel, ValidationError

from ledger.errors import DecodeError, SchemaError, SizeLimitError, UnsupportedMediaType
from ledger.wire import WireModel, parse_json
from services.http.limits import limits_of

M = TypeVar("M", bound=BaseModel)

#: How many validation errors a problem's detail names before it says "and N more".
MAX_REPORTED_ERRORS = 3
MAX_ERROR_TEXT = 160

#: A query integer as the OpenAPI documents write it: canonical decimal, within 64 bits' digits.
CANONICAL_INTEGER = re.compile(r"(?:0|-?[1-9][0-9]{0,18})")
#: A UTF-8 byte order mark, which RFC 8259 §8.1 forbids a JSON text to begin with.
UTF8_BOM = b"\xef\xbb\xbf"


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
    timeout = limits_of(request.app).body_timeout
    try:
        async with asyncio.timeout(timeout):
            raw = await request.read()
    except TimeoutError:
        raise web.HTTPRequestTimeout(
            text=f"the request body did not arrive within {timeout:g} seconds"
        ) from None
    if limit is not None and len(raw) > limit:
        raise SizeLimitError(f"request body is larger than {limit} bytes")
    return validate(model, parse_body(raw))


def parse_body(raw: bytes) -> Any:
    """A JSON body's value: UTF-8 without a BOM, strict JSON, numbers Python can convert."""
    if raw.startswith(UTF8_BOM):
        raise DecodeError("request body begins with a byte order mark: send UTF-8 without one")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("request body is not UTF-8 (JSON is UTF-8, RFC 8259)") from None
    try:
        return parse_json(text, what="request body")
    except DecodeError as exc:
        cause = exc.__cause__
        if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
            raise SizeLimitError("a number in the request body has too many digits") from None
        raise


def read_query(request: web.Request, model: type[M]) -> M:
    """The query string as ``model``; a repeated parameter is refused, never merged, and an
    integer parameter must be canonical decimal."""
    values: dict[str, str] = {}
    for key in request.query:
        found = request.query.getall(key)
        if len(found) > 1:
            raise SchemaError(f"query parameter {key!r} is given {len(found)} times")
        field = model.model_fields.get(key)
        if (
            field is not None
            and _is_integer(field.annotation)
            and not CANONICAL_INTEGER.fullmatch(found[0])
        ):
            raise SchemaError(
                f"query parameter {key!r} must be a decimal integer: digits with no leading "
                "zero and an optional leading minus"
            )
        values[key] = found[0]
    return validate(model, values)


def _is_integer(annotation: Any) -> bool:
    """Whether a field holds an int (or an optional one)."""
    if annotation is int:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return int in get_args(annotation)
    return False
