"""ledger.canonical: the fast path of jcs writes RFC 8785's bytes, or leaves the value to it."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from ledger.canonical import jcs, object_hash, signing_bytes
from ledger.errors import SchemaError

SAFE = 2**53 - 1

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-SAFE, max_value=SAFE)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None), max_size=12)
    | st.text(st.characters(categories=["Cs", "Cc", "Zl", "Zp", "Co", "So"]), max_size=6)
    | st.text(st.characters(max_codepoint=127), max_size=12)
)
keys = st.text(st.characters(max_codepoint=127), max_size=6) | st.text(
    st.characters(min_codepoint=0xD000), max_size=3
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


def reference(value: Any) -> bytes | type[Exception]:
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError):
        return SchemaError


def ours(value: Any) -> bytes | type[Exception]:
    try:
        return jcs(value)
    except SchemaError:
        return SchemaError


@given(values)
def test_jcs_is_rfc8785_on_any_json_value(value: Any) -> None:
    """docs/architecture.md §3 (canonical bytes are RFC 8785): same bytes, or refused by both."""
    assert ours(value) == reference(value)


@pytest.mark.parametrize(
    "value",
    [
        {"text": "".join(chr(n) for n in range(128))},  # every C0 control, '"', '\\', DEL
        {"b": 1, "a": [True, False, None], "A": {"z": "", "_": -SAFE}},
        {"big": SAFE, "small": -SAFE},
        {"big": SAFE + 1},  # outside ECMAScript's exact integers: the package decides
        {"k": 1.0},  # a float: the package writes 1, the standard library 1.0
        {"é": "ü", "\U0001f600": "\ue000"},  # UTF-16 order differs from code points here
        {"lone": "\ud800"},  # a lone surrogate: refused by the package
        {"text": "— \u2028\u2029 \U0001f600 \x7f é"},  # non-ASCII text is written as itself
        {"\ue000": 1, "\U0001f600": 2},  # code points and UTF-16 order these keys apart
        {"tuple": (1, 2)},
        {1: "int key"},
    ],
)
def test_edge_values_match_the_package(value: Any) -> None:
    assert ours(value) == reference(value)


def nested(depth: int) -> Any:
    value: Any = {"leaf": "x"}
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [254, 255, 256, 300, 600])
def test_nesting_past_the_fast_paths_limit_is_still_rfc8785(depth: int) -> None:
    """orjson (the fast path) refuses more than 255 levels; the package writes them."""
    assert jcs(nested(depth)) == rfc8785.dumps(nested(depth))


def test_deep_nesting_is_a_schema_error() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(SchemaError, match="nested too deeply"):
        jcs(deep)


def test_signing_bytes_carry_the_tag_and_drop_the_signature() -> None:
    body = {"serial": "CZ-TALLY-0001", "sig": "x"}
    assert signing_bytes("print", body) == b'CZ1/print\n{"serial":"CZ-TALLY-0001"}'
    assert object_hash("print", body) != object_hash("note", body)
