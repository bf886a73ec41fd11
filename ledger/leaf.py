"""The exact bytes of an event leaf: what the service signs and the Merkle tree hashes.

Pure (no IO) so an auditor can recompute a leaf offline from an event as the feed serves it::

    leaf  = b"CZ1/event\\n" + JCS({"body", "recorded_at", "seq", "stream", "stream_version",
                                  "type"})
    leaf_hash = SHA-256(0x00 || leaf)          # RFC 6962 leaf hash
    signature = Ed25519(service key, leaf)

``recorded_at`` is UTC with exactly six fractional digits: ``2026-12-02T15:51:34.123456Z``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from ledger.canonical import signing_bytes
from ledger.errors import SchemaError, SizeLimitError
from ledger.merkle import leaf_hash

#: Published limits on what one event may hold.
MAX_STREAM_LENGTH = 200
MAX_TYPE_LENGTH = 100
MAX_LEAF_BYTES = 64 * 1024
MAX_DEPTH = 32

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_TIME_PATTERN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@lru_cache(maxsize=256)
def format_time(moment: datetime) -> str:
    """The canonical text of a timestamp: UTC, microseconds, a ``Z`` suffix.

    Cached: every event of one transaction shares its time.
    """
    if moment.tzinfo is None:
        raise SchemaError("event times must carry a time zone")
    return moment.astimezone(UTC).strftime(_TIME_FORMAT)


def parse_time(text: str) -> datetime:
    """Inverse of :func:`format_time`; any other spelling is refused."""
    if not isinstance(text, str) or not _TIME_PATTERN.fullmatch(text):
        raise SchemaError(f"not a canonical event time: {text!r}")
    try:
        return datetime.strptime(text, _TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise SchemaError(f"not a valid event time: {text!r}") from exc


def _check_text(value: object, what: str, limit: int) -> None:
    if not isinstance(value, str) or not value:
        raise SchemaError(f"event {what} must be a non-empty string")
    if len(value) > limit:
        raise SizeLimitError(f"event {what} is longer than {limit} characters")
    if "\x00" in value:
        raise SchemaError(f"event {what} must not contain NUL")


def _check_json(value: object, depth: int = 0) -> None:
    """Integral JSON only: a float or a NUL would not survive the jsonb round trip exactly."""
    if depth > MAX_DEPTH:
        raise SchemaError(f"event body is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or "\x00" in key:
                raise SchemaError("event body keys must be strings without NUL")
            _check_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
    elif isinstance(value, str):
        if "\x00" in value:
            raise SchemaError("event body strings must not contain NUL")
    elif value is not None and not isinstance(value, int):
        raise SchemaError(f"event body values must be integral JSON, not {type(value).__name__}")


def canonical_leaf(
    *,
    seq: int,
    stream: str,
    stream_version: int,
    type: str,
    body: Mapping[str, Any],
    recorded_at: datetime,
) -> bytes:
    """The canonical leaf bytes of one event: the definition auditors recompute."""
    return signing_bytes(
        "event",
        {
            "seq": seq,
            "stream": stream,
            "stream_version": stream_version,
            "type": type,
            "body": body,
            "recorded_at": format_time(recorded_at),
        },
    )


def event_leaf(
    *,
    seq: int,
    stream: str,
    stream_version: int,
    type: str,
    body: Mapping[str, Any],
    recorded_at: datetime,
) -> bytes:
    """The leaf bytes of a new event, after checking it against the published limits."""
    _check_text(stream, "stream", MAX_STREAM_LENGTH)
    _check_text(type, "type", MAX_TYPE_LENGTH)
    if not isinstance(body, Mapping):
        raise SchemaError("event body must be a JSON object")
    _check_json(dict(body))
    leaf = canonical_leaf(
        seq=seq,
        stream=stream,
        stream_version=stream_version,
        type=type,
        body=body,
        recorded_at=recorded_at,
    )
    if len(leaf) > MAX_LEAF_BYTES:
        raise SizeLimitError(f"event is {len(leaf)} bytes; the limit is {MAX_LEAF_BYTES}")
    return leaf


@dataclass(frozen=True, slots=True)
class Event:
    """One recorded event: its place in the log, its content and the service's signature."""

    seq: int
    stream: str
    stream_version: int
    type: str
    body: dict[str, Any]
    recorded_at: datetime
    leaf_hash: bytes
    signature: bytes

    def leaf(self) -> bytes:
        """Recompute the canonical leaf bytes from the content (never from ``leaf_hash``)."""
        return canonical_leaf(
            seq=self.seq,
            stream=self.stream,
            stream_version=self.stream_version,
            type=self.type,
            body=self.body,
            recorded_at=self.recorded_at,
        )

    def computed_leaf_hash(self) -> bytes:
        return leaf_hash(self.leaf())


@dataclass(frozen=True, slots=True)
class NewEvent:
    """What a caller appends: the stream, the version it expects the stream to be at now."""

    stream: str
    expected_version: int
    type: str
    body: Mapping[str, Any]
