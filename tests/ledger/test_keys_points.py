"""Public keys are checked as curve points where they are read (DESIGN §3 keys)."""

from __future__ import annotations

import pytest

from ledger.encoding import encode_b64url
from ledger.errors import KeyFormatError
from ledger.keys import PublicKey, SigningKey

#: The identity point and a point of order 8: valid encodings, worthless as keys.
SMALL_ORDER = [
    bytes([1]) + bytes(31),
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
]


@pytest.mark.parametrize("raw", SMALL_ORDER)
def test_small_order_points_are_refused(raw: bytes) -> None:
    """A small-order point can never be a public key: it is refused with KeyFormatError."""
    with pytest.raises(KeyFormatError, match="prime order"):
        PublicKey.from_text(encode_b64url(raw))


def test_real_keys_are_accepted() -> None:
    """Every generated key round-trips through its text form."""
    key = SigningKey.generate().public
    assert PublicKey.from_text(key.to_text()) == key
