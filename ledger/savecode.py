"""Save codes and passphrase-armored keys (docs/architecture.md §3, Book V.2 and V.3).

One envelope serves both: argon2id (libsodium, through PyNaCl) turns the passphrase into a key,
XSalsa20-Poly1305 (``nacl.secret.SecretBox``) seals the JSON inside. The envelope is binary and
strict, armored as ``CZ SAVE CODE`` or ``CZ KEY``::

    magic "CZS1" (4) | opslimit u32 BE | memlimit u32 BE (bytes) | salt (16) | nonce (24) | box

The KDF parameters travel in the header so a code written with today's cost opens tomorrow,
and they are capped on read (:data:`MAX_KDF`: opslimit 4, memlimit 512 MiB), before anything is
derived. The costliest header a client accepts therefore costs at most 512 MiB and a few
seconds per open attempt: measured on the development machine (2 cores, libsodium bundled with
PyNaCl 1.6.2) at 1.5-2.2 s and a peak RSS of 527 MiB, against 0.5-0.9 s and 270 MiB for the
default cost (3 passes, 256 MiB); the former cap (10 passes, 1 GiB) cost 9-13 s. The header
is bound to the box by the key it derives: change any byte and the box does not open. The
sealed JSON names its kind (``save-code`` or ``key``) so one can never be read as the other.

A box that does not open is reported as a wrong passphrase: without the passphrase a changed
byte and a wrong passphrase look the same, and the message says so.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nacl.exceptions
import nacl.pwhash
import nacl.secret
import nacl.utils

from ledger.armor import KEY, SAVE_CODE, armor, dearmor
from ledger.encoding import decode_b64url, encode_b64url
from ledger.errors import (
    DecodeError,
    SchemaError,
    SizeLimitError,
    UnknownKindError,
    WrongPassphraseError,
)
from ledger.keys import SEED_SIZE, SigningKey
from ledger.limits import MIB
from ledger.wire import parse_json

_argon2id = nacl.pwhash.argon2id
MAGIC = b"CZS1"
_HEADER = struct.Struct(">4sII16s")
NONCE_SIZE = nacl.secret.SecretBox.NONCE_SIZE
MAC_SIZE = nacl.secret.SecretBox.MACBYTES
MAX_PASSPHRASE_CHARS = 1024
#: The costliest argon2id parameters a header may ask for (see the module docstring for what
#: they cost). Part of the format: a code written above them is refused everywhere.
MAX_KDF_OPSLIMIT = 4
MAX_KDF_MEMLIMIT = 512 * MIB


@dataclass(frozen=True, slots=True)
class KdfParams:
    """Argon2id cost: operations and memory in bytes."""

    opslimit: int
    memlimit: int

    def check(self) -> None:
        """Refuse parameters outside [libsodium's minimum, the published cap]."""
        if not _argon2id.OPSLIMIT_MIN <= self.opslimit <= MAX_KDF_OPSLIMIT:
            raise SizeLimitError(
                f"argon2id opslimit {self.opslimit} is outside "
                f"{_argon2id.OPSLIMIT_MIN}..{MAX_KDF_OPSLIMIT}"
            )
        if not _argon2id.MEMLIMIT_MIN <= self.memlimit <= MAX_KDF_MEMLIMIT:
            raise SizeLimitError(
                f"argon2id memlimit {self.memlimit} bytes is outside "
                f"{_argon2id.MEMLIMIT_MIN}..{MAX_KDF_MEMLIMIT}"
            )
        # argon2id counts memory in KiB: 8193 and 8192 bytes would derive the same key, so two
        # headers would open one box. Whole KiB keep one header per key.
        if self.memlimit % 1024:
            raise DecodeError(f"argon2id memlimit {self.memlimit} is not a whole number of KiB")


#: What codes are written with: libsodium's "moderate" (3 passes, 256 MiB; under a second).
DEFAULT_KDF = KdfParams(_argon2id.OPSLIMIT_MODERATE, _argon2id.MEMLIMIT_MODERATE)
#: The costliest header accepted: the caps themselves.
MAX_KDF = KdfParams(MAX_KDF_OPSLIMIT, MAX_KDF_MEMLIMIT)
#: The cheapest parameters libsodium allows: for tests only.
MINIMUM_KDF = KdfParams(_argon2id.OPSLIMIT_MIN, _argon2id.MEMLIMIT_MIN)


@dataclass(frozen=True, slots=True)
class Envelope:
    """The binary envelope: KDF parameters, salt and the sealed box (nonce first)."""

    kdf: KdfParams
    salt: bytes
    box: bytes

    def to_bytes(self) -> bytes:
        return _HEADER.pack(MAGIC, self.kdf.opslimit, self.kdf.memlimit, self.salt) + self.box

    @classmethod
    def from_bytes(cls, data: bytes) -> Envelope:
        """Parse strictly; the KDF parameters are checked against the caps before use."""
        if len(data) < _HEADER.size + NONCE_SIZE + MAC_SIZE:
            raise DecodeError("the sealed data is cut short: not even a whole header")
        magic, opslimit, memlimit, salt = _HEADER.unpack_from(data)
        if magic != MAGIC:
            raise UnknownKindError("this is not a CZS1 sealed envelope (unknown format or version)")
        kdf = KdfParams(opslimit, memlimit)
        kdf.check()
        return cls(kdf, salt, data[_HEADER.size :])


def _passphrase_bytes(passphrase: str) -> bytes:
    if not isinstance(passphrase, str) or not passphrase:
        raise SchemaError("a passphrase is non-empty text")
    if len(passphrase) > MAX_PASSPHRASE_CHARS:
        raise SizeLimitError(f"a passphrase is at most {MAX_PASSPHRASE_CHARS} characters")
    # NFC: the same passphrase typed on two keyboards gives the same bytes.
    return unicodedata.normalize("NFC", passphrase).encode("utf-8")


def _derive(passphrase: str, kdf: KdfParams, salt: bytes) -> nacl.secret.SecretBox:
    key = _argon2id.kdf(
        nacl.secret.SecretBox.KEY_SIZE,
        _passphrase_bytes(passphrase),
        salt,
        opslimit=kdf.opslimit,
        memlimit=kdf.memlimit,
    )
    return nacl.secret.SecretBox(key)


def _seal(
    label: str, kind: str, content: Mapping[str, Any], passphrase: str, kdf: KdfParams
) -> str:
    kdf.check()
    salt = nacl.utils.random(_argon2id.SALTBYTES)
    plaintext = _json_bytes({"kind": kind, **content})
    box = bytes(_derive(passphrase, kdf, salt).encrypt(plaintext))
    return armor(label, Envelope(kdf, salt, box).to_bytes())


def _open(label: str, kind: str, text: str, passphrase: str) -> dict[str, Any]:
    envelope = Envelope.from_bytes(dearmor(text, label))
    _passphrase_bytes(passphrase)
    try:
        plaintext = _derive(passphrase, envelope.kdf, envelope.salt).decrypt(envelope.box)
    except nacl.exceptions.CryptoError:
        raise WrongPassphraseError(
            f"the {label} does not open with this passphrase "
            "(a wrong passphrase, or the code was altered)"
        ) from None
    content = parse_json(plaintext, what=f"the sealed {label}")
    if not isinstance(content, dict) or content.get("kind") != kind:
        raise UnknownKindError(f"the sealed content is not a {kind}")
    del content["kind"]
    return content


def _json_bytes(value: Mapping[str, Any]) -> bytes:
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"the content cannot be written as JSON: {exc}") from exc


def seal_save_code(
    payload: Mapping[str, Any], passphrase: str, kdf: KdfParams = DEFAULT_KDF
) -> str:
    """Seal a wallet's JSON payload (progress, collection, notes, seen-registry, key)."""
    if not isinstance(payload, Mapping):
        raise SchemaError("a save code payload is a JSON object")
    return _seal(SAVE_CODE, "save-code", {"payload": payload}, passphrase, kdf)


def open_save_code(text: str, passphrase: str) -> dict[str, Any]:
    """The payload of a save code; the wallet validates its schema."""
    content = _open(SAVE_CODE, "save-code", text, passphrase)
    payload = content.get("payload")
    if set(content) != {"payload"} or not isinstance(payload, dict):
        raise SchemaError("the sealed save code does not hold exactly one payload object")
    return payload


def seal_private_key(key: SigningKey, passphrase: str, kdf: KdfParams = DEFAULT_KDF) -> str:
    """Armor a private key under a passphrase (``CZ KEY``)."""
    return _seal(KEY, "key", {"seed": encode_b64url(key.seed)}, passphrase, kdf)


def open_private_key(text: str, passphrase: str) -> SigningKey:
    """The private key inside a ``CZ KEY`` block."""
    content = _open(KEY, "key", text, passphrase)
    seed = content.get("seed")
    if set(content) != {"seed"} or not isinstance(seed, str):
        raise SchemaError("the sealed key does not hold exactly one seed")
    return SigningKey(decode_b64url(seed, length=SEED_SIZE, what="the sealed seed"))
