"""Strict base64 (ledger/encoding.py): every byte string has exactly one text form. The quick
check of the canonical form of 32 and 64 bytes (keys, hashes, signatures) accepts exactly what
the decode and its encoding back accept, and the decode through it gives the same bytes."""

from __future__ import annotations

import base64
import binascii

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.encoding import decode_b64url, encode_b64url, is_canonical_b64url
from ledger.errors import DecodeError

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def slow(text: str, length: int) -> bytes | None:
    """What the long way (decode, encode back, compare, count) makes of ``text``."""
    try:
        data = base64url_decoded(text)
    except ValueError:
        return None
    if encode_b64url(data) != text or len(data) != length:
        return None
    return data


def base64url_decoded(text: str) -> bytes:
    """The standard library's strict base64url decode, padding added."""
    if not text.isascii() or "=" in text:
        raise ValueError(text)
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except binascii.Error as exc:
        raise ValueError(text) from exc


def near(length: int) -> st.SearchStrategy[str]:
    """Texts around the canonical form of ``length`` bytes: canonical ones, ones with the
    last character (or any) changed, a length off by one, a padding or a foreign letter."""
    size = -(-length * 4 // 3)
    canonical = st.binary(min_size=length, max_size=length).map(encode_b64url)
    changed = st.tuples(
        canonical, st.integers(0, size - 1), st.sampled_from(ALPHABET + "=+/é\n")
    ).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :])
    last = st.tuples(canonical, st.sampled_from(ALPHABET)).map(lambda t: t[0][:-1] + t[1])
    other = st.text(alphabet=ALPHABET + "=", min_size=size - 1, max_size=size + 1)
    return st.one_of(canonical, changed, last, other)


@pytest.mark.parametrize("length", [32, 64])
@given(data=st.data())
def test_the_quick_check_is_the_decode(length: int, data: st.DataObject) -> None:
    text = data.draw(near(length))
    expected = slow(text, length)
    assert is_canonical_b64url(text, length) == (expected is not None)
    if expected is None:
        with pytest.raises(DecodeError):
            decode_b64url(text, length=length)
    else:
        assert decode_b64url(text, length=length) == expected


def test_every_last_character_is_tried() -> None:
    """The last character decides the unused bits: exactly 16 of 64 end 32 bytes, 4 end 64."""
    for length, ends in ((32, 16), (64, 4)):
        base = encode_b64url(bytes(length))[:-1]
        assert sum(is_canonical_b64url(base + c, length) for c in ALPHABET) == ends
        assert sum(slow(base + c, length) is not None for c in ALPHABET) == ends
