"""C2SP signed-note (c2sp.org/signed-note@v1.0.0): text signed by one or more keys.

A note is UTF-8 text ending in a newline, a blank line, then signature lines
``— <name> base64(key id || signature)``. The note's shape is parsed strictly: a control
character other than newline, a line not of that shape (a name with a space or ``+``, a
signature field that is not base64 text) is a typed error. What a line holds is read only when
a known key is named (docs/formats.md, "Signed notes", is the policy):

- the key id a line names is the 32 bits its first six base64 characters encode;
- a line whose name and key id are no known key's is ignored, whatever its base64 holds
  (non-canonical, short, unpadded): anyone may add lines, and Go's sumdb/note ignores them;
- a known key has signed when one of its lines is canonical base64 and verifies; its other
  lines are then ignored. A known key none of whose lines verifies rejects the whole note;
- at least one known key must have signed.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ledger.encoding import decode_b64, encode_b64
from ledger.errors import (
    BadSignatureError,
    DecodeError,
    KeyFormatError,
    SizeLimitError,
    VerificationError,
)
from ledger.keys import PublicKey, SigningKey

#: Signature type bytes assigned by the spec that we implement.
ED25519 = 0x01
COSIGNATURE_V1 = 0x04

#: A note larger than this, or with more signature lines, is refused (the spec asks >= 16).
MAX_NOTE_BYTES = 64 * 1024
MAX_SIGNATURES = 64

_EM_DASH = "\u2014"
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")
_NAME = re.compile(r"[^\s+]+")
#: A lone surrogate is not a character: text holding one has no UTF-8 form.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A signature field: base64 text, canonical or not (padding only at the end).
_SIGNATURE_TEXT = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_B64_DIGITS = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64_DIGITS)}


def key_id(name: str, sig_type: int, public_key: bytes) -> bytes:
    """SHA-256(name || 0x0A || type || public key)[:4], the spec's key id."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([sig_type]) + public_key).digest()[:4]


def check_key_name(name: str) -> str:
    """A key name is non-empty UTF-8 text and holds no Unicode space, control or ``+``."""
    if (
        not isinstance(name, str)
        or not _NAME.fullmatch(name)
        or _CONTROL.search(name)
        or _SURROGATE.search(name)
    ):
        raise DecodeError(f"not a valid note key name: {name!r:.64}")
    return name


@dataclass(frozen=True, slots=True)
class NoteSignature:
    """One signature line: the key name and its base64 field exactly as written.

    The field is decoded only for a known key (see the module policy): ``key_id`` reads the
    first six characters alone, ``signature`` requires the whole field to be canonical.
    """

    name: str
    encoded: str

    @classmethod
    def of(cls, name: str, key_id: bytes, signature: bytes) -> NoteSignature:
        """The line a signer writes: canonical base64 of the key id and the signature."""
        return cls(name, encode_b64(key_id + signature))

    @property
    def key_id(self) -> bytes:
        """The 4-byte key id the line names, or ``b""`` when its first six characters are not
        base64 digits (such a line names no key)."""
        head = self.encoded[:6]
        if len(head) < 6 or any(c not in _B64_VALUE for c in head):
            return b""
        bits = 0
        for char in head:
            bits = (bits << 6) | _B64_VALUE[char]
        return (bits >> 4).to_bytes(4, "big")

    @property
    def signature(self) -> bytes:
        """The signature bytes after the key id; a DecodeError unless the field is canonical
        base64 of more than four bytes."""
        raw = decode_b64(self.encoded, what=f"note signature by {self.name}")
        if len(raw) < 5:
            raise DecodeError("a note signature holds a 4-byte key id and a signature")
        return raw[4:]

    def line(self) -> str:
        return f"{_EM_DASH} {self.name} {self.encoded}\n"


@dataclass(frozen=True, slots=True)
class Note:
    """A parsed note: its text (with the final newline) and its signature lines."""

    text: str
    signatures: tuple[NoteSignature, ...]

    def __str__(self) -> str:
        return self.text + "\n" + "".join(s.line() for s in self.signatures)

    def with_signature(self, signature: NoteSignature) -> Note:
        """This note with one more signature line (a cosignature, say)."""
        return Note(self.text, (*self.signatures, signature))


def check_text(text: str) -> str:
    """Note text: UTF-8, ends in a newline, no control character but newline."""
    if not isinstance(text, str) or not text.endswith("\n"):
        raise DecodeError("note text must end with a newline")
    if _CONTROL.search(text):
        raise DecodeError("note text must not contain control characters other than newline")
    return text


def parse_note(data: str | bytes) -> Note:
    """Parse a signed note strictly; it need not be verified yet (see :func:`verify_note`)."""
    if isinstance(data, bytes):
        if len(data) > MAX_NOTE_BYTES:
            raise SizeLimitError(f"a note is at most {MAX_NOTE_BYTES} bytes")
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError("note is not valid UTF-8") from exc
    if not isinstance(data, str):
        raise DecodeError("note must be text")
    if len(data.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        raise SizeLimitError(f"a note is at most {MAX_NOTE_BYTES} bytes")
    if _CONTROL.search(data):
        raise DecodeError("note must not contain control characters other than newline")
    try:
        data.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DecodeError("note is not valid UTF-8") from exc
    split = data.rfind("\n\n")
    if split < 0:
        raise DecodeError("note has no blank line before its signatures")
    text, block = data[: split + 1], data[split + 2 :]
    if not block.endswith("\n"):
        raise DecodeError("note must end with a newline after its last signature")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise SizeLimitError(f"a note carries at most {MAX_SIGNATURES} signatures")
    return Note(check_text(text), tuple(_parse_signature(line) for line in lines))


def _parse_signature(line: str) -> NoteSignature:
    """A line of the shape ``— <key name> <base64 text>``; its content is not read here."""
    prefix = _EM_DASH + " "
    if not line.startswith(prefix):
        raise DecodeError("a note signature line must start with an em dash and a space")
    parts = line[len(prefix) :].split(" ")
    if len(parts) != 2:
        raise DecodeError("a note signature line is '— <name> <base64 signature>'")
    name, encoded = parts
    check_key_name(name)
    if not _SIGNATURE_TEXT.fullmatch(encoded):
        raise DecodeError(f"the signature by {name} is not base64 text")
    return NoteSignature(name, encoded)


class NoteVerifier:
    """A known key: a name, a signature type, a public key. Ed25519 over the text by default."""

    sig_type = ED25519

    def __init__(self, name: str, public_key: PublicKey) -> None:
        self.name = check_key_name(name)
        self.public_key = public_key
        self.key_id = key_id(name, self.sig_type, public_key.raw)

    def matches(self, signature: NoteSignature) -> bool:
        """Whether the line names this key: its name and its key id."""
        return signature.name == self.name and hmac.compare_digest(signature.key_id, self.key_id)

    def verify(self, text: str, signature: NoteSignature) -> None:
        """Raise :class:`BadSignatureError` unless ``signature`` signs ``text``."""
        try:
            self.public_key.verify_raw(text.encode("utf-8"), self._raw(signature))
        except BadSignatureError as exc:
            raise BadSignatureError(f"signature by {self.name} does not verify") from exc

    def _raw(self, signature: NoteSignature) -> bytes:
        """The line's signature bytes; a field that is not canonical base64 does not verify."""
        try:
            return signature.signature
        except DecodeError as exc:
            raise BadSignatureError(f"signature by {self.name}: {exc.diagnostics()}") from None

    def vkey(self) -> str:
        """The spec's verifier key text: ``name+hex(key id)+base64(type || public key)``."""
        material = bytes([self.sig_type]) + self.public_key.raw
        return f"{self.name}+{self.key_id.hex()}+{encode_b64(material)}"


class NoteSigner:
    """A signing key under a note key name (Ed25519, type 0x01)."""

    def __init__(self, name: str, key: SigningKey) -> None:
        self.name = check_key_name(name)
        self.key = key
        self.key_id = key_id(name, ED25519, key.public.raw)

    def sign(self, text: str) -> NoteSignature:
        check_text(text)
        return NoteSignature.of(self.name, self.key_id, self.key.sign_raw(text.encode("utf-8")))

    def verifier(self) -> NoteVerifier:
        return NoteVerifier(self.name, self.key.public)


def parse_vkey(text: str, kind: type[NoteVerifier] = NoteVerifier) -> NoteVerifier:
    """Parse a verifier key ``name+hex(key id)+base64(type || 32-byte key)`` of ``kind``'s
    signature type (Ed25519, 0x01, by default); any other type or a wrong id fails."""
    parts = text.split("+") if isinstance(text, str) else []
    if len(parts) != 3:
        raise KeyFormatError("a verifier key is '<name>+<hex key id>+<base64 key>'")
    name, hex_id, material_b64 = parts
    try:
        check_key_name(name)
    except DecodeError as exc:
        raise KeyFormatError(exc.diagnostics()) from None
    material = decode_b64(material_b64, what="verifier key")
    if len(material) != 33 or material[0] != kind.sig_type:
        raise KeyFormatError(
            f"expected a verifier key of type 0x{kind.sig_type:02x} with a 32-byte key"
        )
    verifier = kind(name, PublicKey(material[1:]))
    if hex_id != verifier.key_id.hex():
        raise KeyFormatError(f"verifier key id {hex_id} does not match its name and key")
    return verifier


def sign_note(text: str, signers: Iterable[NoteSigner]) -> Note:
    """A note of ``text`` signed by every signer, in order."""
    check_text(text)
    note = Note(text, tuple(s.sign(text) for s in signers))
    if not note.signatures:
        raise ValueError("a signed note needs at least one signer")
    return note


def verify_note(note: Note, verifiers: Sequence[NoteVerifier]) -> list[NoteVerifier]:
    """The known keys that signed ``note``, in the order of their first verifying line.

    Lines naming no known key are ignored; a known key has signed when one of its lines
    verifies (its other lines are then ignored); a known key none of whose lines verifies
    rejects the note with its :class:`BadSignatureError`; no known signature at all is a
    :class:`VerificationError`.
    """
    verified: list[NoteVerifier] = []
    failed: dict[NoteVerifier, BadSignatureError] = {}
    for signature in note.signatures:
        verifier = next((v for v in verifiers if v.matches(signature)), None)
        if verifier is None or verifier in verified:
            continue
        try:
            verifier.verify(note.text, signature)
        except BadSignatureError as exc:
            failed.setdefault(verifier, exc)
            continue
        failed.pop(verifier, None)
        verified.append(verifier)
    if failed:
        raise next(iter(failed.values()))
    if not verified:
        raise VerificationError("the note carries no signature from a known key")
    return verified
