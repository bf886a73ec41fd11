"""Strict binary-to-text encodings.

Only canonical encodings decode: ``decode_b64url`` refuses padding, ``decode_b64`` requires it,
and both refuse non-zero trailing bits, so every byte string has exactly one text form and a
signature over text can never be re-encoded into a second valid form.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from ledger.errors import DecodeError

# base64's urlsafe functions, without their per-call set-up (keys, signatures and hashes are
# read and written on every request): the same alphabets, the same strict decoding.
_TO_URL = bytes.maketrans(b"+/", b"-_")
_FROM_URL = bytes.maketrans(b"-_", b"+/")


#: The one text form of 32 and of 64 bytes in unpadded base64url (keys and hashes; signatures):
#: every character of the alphabet, the last one's unused low bits zero (2 of 32 bytes' 258
#: bits, 4 of 64 bytes' 516). A text that either matches is canonical; checked this way it costs
#: a tenth of a decode and its encoding back.
_CANONICAL_B64URL = {
    32: re.compile(r"[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]"),
    64: re.compile(r"[A-Za-z0-9_-]{85}[AQgw]"),
}


def is_canonical_b64url(text: object, length: int) -> bool:
    """Whether ``text`` is the canonical unpadded base64url of ``length`` bytes (32 or 64),
    exactly as :func:`decode_b64url` with that ``length`` accepts it, without decoding."""
    return type(text) is str and _CANONICAL_B64URL[length].fullmatch(text) is not None


def encode_b64url(data: bytes) -> str:
    """Base64url without padding (RFC 4648 §5), the form keys and signatures travel in."""
    return binascii.b2a_base64(data, newline=False).translate(_TO_URL).rstrip(b"=").decode("ascii")


def decode_b64url(text: str, *, length: int | None = None, what: str = "value") -> bytes:
    """Decode canonical unpadded base64url; ``length`` pins the decoded size."""
    if length in _CANONICAL_B64URL and is_canonical_b64url(text, length):
        return _a2b_url(text)  # canonical, so nothing to encode back and compare
    if not isinstance(text, str) or not text.isascii():
        raise DecodeError(f"{what} is not base64url text")
    if "=" in text:
        raise DecodeError(f"{what} must be base64url without padding")
    return _decoded(text, _a2b_url, encode_b64url, "base64url", length, what)


def _a2b_url(text: str) -> bytes:
    # base64.b64decode(..., altchars=b"-_", validate=True), as binascii does it
    return binascii.a2b_base64(
        text.encode("ascii").translate(_FROM_URL) + b"=" * (-len(text) % 4), strict_mode=True
    )


def encode_b64(data: bytes) -> str:
    """Standard padded base64 (RFC 4648 §4), as used by checkpoints and armor."""
    return base64.b64encode(data).decode("ascii")


def decode_b64(text: str, *, length: int | None = None, what: str = "value") -> bytes:
    """Decode canonical padded standard base64; ``length`` pins the decoded size."""
    if not isinstance(text, str) or not text.isascii():
        raise DecodeError(f"{what} is not base64 text")
    return _decoded(text, _a2b, encode_b64, "base64", length, what)


def _a2b(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def _decoded(
    text: str,
    decode: Callable[[str], bytes],
    encode: Callable[[bytes], str],
    name: str,
    length: int | None,
    what: str,
) -> bytes:
    """``text`` decoded, refused unless it is the one text form of what it decodes to."""
    try:
        data = decode(text)
    except (binascii.Error, ValueError) as exc:
        raise DecodeError(f"{what} is not valid {name}") from exc
    if encode(data) != text:
        raise DecodeError(f"{what} is not canonical {name}")
    if length is not None and len(data) != length:
        raise DecodeError(f"{what} must decode to {length} bytes, not {len(data)}")
    return data
