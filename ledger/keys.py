"""Ed25519 keys (PyNaCl) and signatures over canonical bytes.

Acceptance policy (docs/formats.md, "Ed25519 acceptance"): a public key is refused where it is
read unless it is a canonical encoding of a point of the prime-order subgroup (no small-order,
no mixed-order key); a signature verifies only under libsodium's cofactorless
``crypto_sign_open``, which refuses S ≥ L, a small-order R, and (comparing R's bytes) any R
that is not the canonical encoding of [S]B − [h]A. tests/ledger/test_keys_points.py builds a
case of each class and pins that the bundled libsodium refuses it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import nacl.bindings
import nacl.exceptions
import nacl.signing

from ledger.canonical import signing_bytes
from ledger.encoding import decode_b64url, encode_b64url
from ledger.errors import BadSignatureError, KeyFormatError

PUBLIC_KEY_SIZE = 32
SEED_SIZE = 32
SIGNATURE_SIZE = 64


class PublicKey:
    """An Ed25519 verify key; travels as unpadded base64url of its 32 bytes."""

    __slots__ = ("_raw", "_verify_key")

    def __init__(self, raw: bytes) -> None:
        if not isinstance(raw, bytes) or len(raw) != PUBLIC_KEY_SIZE:
            raise KeyFormatError("an Ed25519 public key is exactly 32 bytes")
        # Refuse non-canonical encodings and small-order points up front, so a bad key is
        # named where it is read, not later as a mysterious signature failure.
        if not nacl.bindings.crypto_core_ed25519_is_valid_point(raw):
            raise KeyFormatError("not a valid Ed25519 public key (not a point of prime order)")
        try:
            self._verify_key = nacl.signing.VerifyKey(raw)
        except (nacl.exceptions.CryptoError, ValueError, TypeError) as exc:
            raise KeyFormatError("not a valid Ed25519 public key") from exc
        self._raw = raw

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        """Parse the wire form; anything but canonical 32-byte base64url is refused.

        Valid keys are remembered (:func:`_parse_public_key`): the point check costs more than
        a signature, and a chain or a page of a feed names the same few keys again and again.
        """
        return _parse_public_key(text)

    @property
    def raw(self) -> bytes:
        return self._raw

    def to_text(self) -> str:
        return encode_b64url(self._raw)

    def verify_raw(self, message: bytes, signature: bytes) -> None:
        """Raise :class:`BadSignatureError` unless ``signature`` signs ``message``."""
        if len(signature) != SIGNATURE_SIZE:
            raise BadSignatureError("a signature is exactly 64 bytes")
        try:
            self._verify_key.verify(message, signature)
        except nacl.exceptions.BadSignatureError as exc:
            raise BadSignatureError("signature does not verify") from exc

    def verify(self, kind: str, obj: Mapping[str, Any], signature: str) -> None:
        """Verify a base64url ``signature`` of ``kind`` over ``obj``'s canonical bytes."""
        try:
            sig = decode_b64url(signature, length=SIGNATURE_SIZE, what="signature")
        except Exception as exc:
            raise BadSignatureError(f"malformed signature: {exc}") from exc
        self.verify_raw(signing_bytes(kind, obj), sig)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicKey) and hmac.compare_digest(self._raw, other._raw)

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"PublicKey({self.to_text()})"


@lru_cache(maxsize=4096)
def _parse_public_key(text: str) -> PublicKey:
    """The one parser of a key's wire form. A key is immutable, so the same object is handed
    to every caller; refusals are never cached (``lru_cache`` keeps no exception), and a
    script cycling a thousand fresh keys only evicts, it never grows the cache."""
    try:
        raw = decode_b64url(text, length=PUBLIC_KEY_SIZE, what="public key")
    except KeyFormatError:
        raise
    except Exception as exc:
        raise KeyFormatError(f"bad public key: {exc}") from exc
    return PublicKey(raw)


class SigningKey:
    """An Ed25519 private key. Its repr never shows the secret."""

    __slots__ = ("_signing_key", "public")

    def __init__(self, seed: bytes) -> None:
        if not isinstance(seed, bytes) or len(seed) != SEED_SIZE:
            raise KeyFormatError("an Ed25519 seed is exactly 32 bytes")
        self._signing_key = nacl.signing.SigningKey(seed)
        self.public = PublicKey(bytes(self._signing_key.verify_key))

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(bytes(nacl.signing.SigningKey.generate()))

    @property
    def seed(self) -> bytes:
        """The 32-byte secret seed: only for writing to a 0600 file or a save code."""
        return bytes(self._signing_key)

    def sign_raw(self, message: bytes) -> bytes:
        return self._signing_key.sign(message).signature

    def sign(self, kind: str, obj: Mapping[str, Any]) -> str:
        """Base64url signature of ``kind`` over ``obj``'s canonical bytes (``sig`` excluded)."""
        return encode_b64url(self.sign_raw(signing_bytes(kind, obj)))

    def __repr__(self) -> str:
        return f"SigningKey(public={self.public.to_text()})"
