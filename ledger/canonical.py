"""Canonical bytes: RFC 8785 (JCS) behind a domain tag per kind.

A signature is always over ``DOMAIN[kind] + JCS(object without "sig")``. The tag makes a
signature of one kind worthless as any other kind; JCS makes the bytes independent of key
order and number formatting. The hash of an object is SHA-256 of the same bytes.

RFC 8785 is the maintained ``rfc8785`` package, in pure Python. Every object this protocol
signs is JSON of strings, safe integers, booleans and nulls under ASCII keys, and for those
JCS is exactly what orjson writes with sorted keys (``OPT_SORT_KEYS``; it writes no spaces
and no ``\\u`` escapes of non-ASCII text): ASCII keys sort the same by UTF-16 code unit and
by code point, both escape '"', '\\' and the C0 controls alike (the short forms, else
``\\u00xx`` in lower case) and write every other character as itself in UTF-8, and an
integer is its decimal digits. :func:`jcs` takes that path when a walk of the value finds
nothing else (a float, an integer outside ±(2**53 − 1), a key that is not an ASCII string,
any other type, a subclass of a JSON type) and orjson writes it (a lone surrogate is not
UTF-8: orjson refuses it); everything else goes to the package, which decides or refuses.
``tests/ledger/test_canonical.py`` holds the two to the same bytes over generated values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson
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
        "table-open",
        "table-seed",
        "table-join",
        "table-move",
        "misprint-award",
        "reward-order",
    )
}


def domain_tag(kind: str) -> bytes:
    """The domain tag of ``kind``; an unknown kind is refused, never defaulted."""
    try:
        return DOMAIN_TAGS[kind]
    except KeyError:
        raise UnknownKindError(f"unknown object kind {kind!r}") from None


#: JavaScript's safe integers: RFC 8785 writes numbers as ECMAScript does, exact only here.
_SAFE = 2**53
#: orjson's options for the fast path: keys sorted, and an integer beyond 53 bits refused
#: (the walk sends none; the option keeps the fast path exact even if it did).
_FAST = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what the fast path writes exactly as RFC 8785 does."""
    kind = type(value)
    if kind is dict:
        return _plain_object(value)
    if kind is list:
        return _plain_array(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE < value < _SAFE)
    return False


# The walk runs over every object signed or hashed: its members are tested inline (a call
# only for a nested object or array), not one call of _plain each.
def _plain_object(value: dict[Any, Any]) -> bool:
    for key, item in value.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_SAFE < item < _SAFE:
                return False
        elif kind is dict:
            if not _plain_object(item):
                return False
        elif kind is not list or not _plain_array(item):
            return False
    return True


def _plain_array(value: list[Any]) -> bool:
    for item in value:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -_SAFE < item < _SAFE:
                return False
        elif kind is dict:
            if not _plain_object(item):
                return False
        elif kind is not list or not _plain_array(item):
            return False
    return True


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value``.

    The protocol is integral: the wire models refuse floats before anything is signed.
    """
    try:
        plain = _plain(value)
    except RecursionError:
        plain = False
    if plain:
        try:
            return orjson.dumps(value, option=_FAST)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate: the package refuses it in its own words
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise SchemaError(f"object cannot be canonicalized: {exc}") from exc
    except RecursionError:
        raise SchemaError("object cannot be canonicalized: nested too deeply") from None


def signing_bytes(kind: str, obj: Mapping[str, Any]) -> bytes:
    """The bytes a signature of ``kind`` covers: the tag, then JCS of ``obj`` minus ``sig``."""
    body = {k: v for k, v in obj.items() if k != "sig"}
    return domain_tag(kind) + jcs(body)


def object_hash(kind: str, obj: Mapping[str, Any]) -> bytes:
    """SHA-256 of the signing bytes: the id that ``prev`` links and fraud proofs name."""
    return hashlib.sha256(signing_bytes(kind, obj)).digest()
