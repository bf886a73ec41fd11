"""Canonical bytes: RFC 8785 (JCS) behind a domain tag per kind.

A signature is always over ``DOMAIN[kind] + JCS(object without "sig")``. The tag makes a
signature of one kind worthless as any other kind; JCS makes the bytes independent of key
order and number formatting. The hash of an object is SHA-256 of the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785

from ledger.errors import SchemaError, UnknownKindError

#: Every kind of signed object, and the tag its canonical bytes start with.
DOMAIN_TAGS: dict[str, bytes] = {
    kind: f"CZ1/{kind}\n".encode("ascii")
    for kind in (
        "print",
        "note",
        "manifest",
        "endorsement",
        "event",
        "stamp-request",
        "claim-request",
        "buy-request",
        "mint-order",
        "receipt",
        "ledger-card",
        "note-set",
    )
}


def domain_tag(kind: str) -> bytes:
    """The domain tag of ``kind``; an unknown kind is refused, never defaulted."""
    try:
        return DOMAIN_TAGS[kind]
    except KeyError:
        raise UnknownKindError(f"unknown object kind {kind!r}") from None


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``.

    The protocol is integral: the wire models refuse floats before anything is signed.
    """
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise SchemaError(f"object cannot be canonicalized: {exc}") from exc


def signing_bytes(kind: str, obj: Mapping[str, Any]) -> bytes:
    """The bytes a signature of ``kind`` covers: the tag, then JCS of ``obj`` minus ``sig``."""
    body = {k: v for k, v in obj.items() if k != "sig"}
    return domain_tag(kind) + jcs(body)


def object_hash(kind: str, obj: Mapping[str, Any]) -> bytes:
    """SHA-256 of the signing bytes: the id that ``prev`` links and fraud proofs name."""
    return hashlib.sha256(signing_bytes(kind, obj)).digest()
