"""C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint@v1.0.0) and Ed25519 cosignatures.

A checkpoint is a signed note whose text is exactly::

    <origin>
    <tree size, decimal, no leading zero>
    <base64 RFC 6962 root hash>
    [<extension line>...]

signed by the log under the key name = origin. :class:`Checkpoint` parses one strictly,
:func:`sign_checkpoint` makes one, :meth:`Checkpoint.verify` checks it against known keys and
requires the log's own signature (a cosignature alone never makes a checkpoint).
Witnesses add tlog-cosignature v1 lines (type 0x04): :class:`Cosigner` makes them and
:class:`CosignatureVerifier` checks them (the timestamp is returned, not judged).
:class:`AddCheckpoint` is the tlog-witness request body a log sends to a witness.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.encoding import decode_b64, encode_b64
from ledger.errors import (
    BadSignatureError,
    DecodeError,
    KeyFormatError,
    SchemaError,
    SizeLimitError,
    VerificationError,
)
from ledger.keys import PublicKey, SigningKey
from ledger.merkle import HASH_SIZE, verify_consistency
from ledger.signed_note import (
    COSIGNATURE_V1,
    ED25519,
    MAX_NOTE_BYTES,
    Note,
    NoteSignature,
    NoteSigner,
    NoteVerifier,
    check_key_name,
    key_id,
    parse_note,
    parse_vkey,
    verify_note,
)

MAX_TREE_SIZE = 2**63 - 1
MAX_TIMESTAMP = 2**63 - 1
MAX_EXTENSIONS = 16
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")
_COSIGNATURE_HEADER = "cosignature/v1\n"
_TIMESTAMP = struct.Struct(">Q")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A parsed checkpoint: origin, tree size, root hash, extensions, and its whole note."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...]
    note: Note

    @property
    def text(self) -> str:
        """The checkpoint body (the note text every signature covers)."""
        return self.note.text

    def __str__(self) -> str:
        return str(self.note)

    @classmethod
    def from_note(cls, data: str | bytes | Note) -> Checkpoint:
        """Parse a signed checkpoint strictly; signatures are not checked here (see verify)."""
        note = data if isinstance(data, Note) else parse_note(data)
        origin, size, root, extensions = parse_body(note.text)
        return cls(origin, size, root, extensions, note)

    def verify(self, verifiers: Sequence[NoteVerifier]) -> list[NoteVerifier]:
        """The known keys that signed this checkpoint, the log's own among them.

        The log's signature is required: an Ed25519 verifier whose key name is the origin
        line must be among ``verifiers`` and must have signed. Cosignatures (and any other
        known key) only add to it; the note policy of :func:`verify_note` applies to all.
        """
        logs = [v for v in verifiers if v.sig_type == ED25519 and v.name == self.origin]
        if not logs:
            raise VerificationError(f"no log key for the checkpoint's origin {self.origin!r}")
        verified = verify_note(self.note, verifiers)
        if not any(v in logs for v in verified):
            raise VerificationError(
                f"the checkpoint carries no signature by its log {self.origin!r}"
            )
        return verified

    def with_signature(self, signature: NoteSignature) -> Checkpoint:
        return Checkpoint(
            self.origin, self.size, self.root, self.extensions, self.note.with_signature(signature)
        )


def format_body(origin: str, size: int, root: bytes, extensions: Sequence[str] = ()) -> str:
    """The checkpoint note text for these values (validated as strictly as a parse)."""
    text = "".join(f"{line}\n" for line in (origin, str(size), encode_b64(root), *extensions))
    parse_body(text)
    return text


def parse_body(text: str) -> tuple[str, int, bytes, tuple[str, ...]]:
    """Split checkpoint note text into origin, size, root hash and extension lines."""
    if not text.endswith("\n"):
        raise SchemaError("checkpoint text must end with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise SchemaError("a checkpoint has an origin, a tree size and a root hash line")
    origin, size_text, root_text, *extensions = lines
    if not origin:
        raise SchemaError("checkpoint origin line is empty")
    if not _SIZE.fullmatch(size_text) or int(size_text) > MAX_TREE_SIZE:
        raise SchemaError(f"checkpoint tree size {size_text!r} is not a canonical decimal")
    try:
        root = decode_b64(root_text, length=HASH_SIZE, what="checkpoint root hash")
    except DecodeError as exc:
        raise SchemaError(exc.diagnostics()) from exc
    if len(extensions) > MAX_EXTENSIONS:
        raise SchemaError(f"a checkpoint carries at most {MAX_EXTENSIONS} extension lines")
    if any(not line for line in extensions):
        raise SchemaError("checkpoint extension lines must not be empty")
    return origin, int(size_text), root, tuple(extensions)


def sign_checkpoint(
    origin: str, size: int, root: bytes, key: SigningKey, extensions: Sequence[str] = ()
) -> Checkpoint:
    """A checkpoint signed by the log's key under the key name = origin."""
    text = format_body(origin, size, root, extensions)
    signature = NoteSigner(origin, key).sign(text)
    return Checkpoint.from_note(Note(text, (signature,)))


def log_verifier(origin: str, public_key: PublicKey) -> NoteVerifier:
    """The verifier of a log's own checkpoint signature (name = origin, Ed25519)."""
    return NoteVerifier(origin, public_key)


def _cosigned_message(text: str, timestamp: int) -> bytes:
    return f"{_COSIGNATURE_HEADER}time {timestamp}\n{text}".encode()


class CosignatureVerifier(NoteVerifier):
    """A witness's Ed25519 cosignature key (tlog-cosignature v1, type 0x04)."""

    sig_type = COSIGNATURE_V1

    def verify(self, text: str, signature: NoteSignature) -> None:
        self.timestamp(text, signature)

    def timestamp(self, text: str, signature: NoteSignature) -> int:
        """Verify the cosignature over ``text`` and return the time it states."""
        raw = self._raw(signature)
        if len(raw) != _TIMESTAMP.size + 64:
            raise BadSignatureError(f"cosignature by {self.name} is not 8 + 64 bytes")
        timestamp: int  # ">Q" unpacks to one unsigned int
        (timestamp,) = _TIMESTAMP.unpack(raw[: _TIMESTAMP.size])
        if timestamp > MAX_TIMESTAMP:
            raise BadSignatureError(f"cosignature by {self.name} has a timestamp beyond 2**63")
        try:
            self.public_key.verify_raw(_cosigned_message(text, timestamp), raw[_TIMESTAMP.size :])
        except BadSignatureError as exc:
            raise BadSignatureError(f"cosignature by {self.name} does not verify") from exc
        return timestamp


def parse_witness_vkey(text: str) -> CosignatureVerifier:
    """A witness's cosignature verifier key (type 0x04) from its vkey text."""
    verifier = parse_vkey(text, CosignatureVerifier)
    if not isinstance(verifier, CosignatureVerifier):
        raise KeyFormatError("not a witness cosignature key")
    return verifier


class Cosigner:
    """A witness key that cosigns checkpoints it has checked (tlog-cosignature v1)."""

    def __init__(self, name: str, key: SigningKey) -> None:
        self.name = check_key_name(name)
        self.key = key
        self.key_id = key_id(name, COSIGNATURE_V1, key.public.raw)

    def cosign(self, checkpoint: Checkpoint, timestamp: int) -> NoteSignature:
        """The cosignature line for ``checkpoint`` at POSIX time ``timestamp``.

        The caller has already checked that the checkpoint consistently extends what it saw.
        """
        if not 0 <= timestamp <= MAX_TIMESTAMP:
            raise ValueError("a cosignature timestamp is between 0 and 2**63 - 1")
        signature = self.key.sign_raw(_cosigned_message(checkpoint.text, timestamp))
        return NoteSignature.of(self.name, self.key_id, _TIMESTAMP.pack(timestamp) + signature)

    def verifier(self) -> CosignatureVerifier:
        return CosignatureVerifier(self.name, self.key.public)


MAX_WITNESS_PROOF_LINES = 63
#: 63 proof lines of 45 bytes, the old-size line, and a note at its own limit.
MAX_ADD_CHECKPOINT_BYTES = MAX_NOTE_BYTES + 64 * 45 + 32
_OLD_SIZE = re.compile(r"old (0|[1-9][0-9]{0,18})")


@dataclass(frozen=True, slots=True)
class AddCheckpoint:
    """A tlog-witness ``add-checkpoint`` request body: the size the witness last cosigned,
    a consistency proof from it, and the new checkpoint."""

    old_size: int
    proof: tuple[bytes, ...]
    checkpoint: Checkpoint

    def __str__(self) -> str:
        lines = [f"old {self.old_size}", *(encode_b64(h) for h in self.proof)]
        return "".join(f"{line}\n" for line in lines) + "\n" + str(self.checkpoint)

    @classmethod
    def parse(cls, data: str | bytes) -> AddCheckpoint:
        """Parse a request body strictly (the checkpoint's signatures are not checked here)."""
        if len(data) > MAX_ADD_CHECKPOINT_BYTES:
            raise SizeLimitError(
                f"an add-checkpoint body is at most {MAX_ADD_CHECKPOINT_BYTES} bytes"
            )
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DecodeError("add-checkpoint body is not valid UTF-8") from exc
        head, sep, note = data.partition("\n\n")
        if not sep:
            raise DecodeError("add-checkpoint body has no blank line before the checkpoint")
        old_line, *proof_lines = head.split("\n")
        match = _OLD_SIZE.fullmatch(old_line)
        if match is None or int(match.group(1)) > MAX_TREE_SIZE:
            raise DecodeError("add-checkpoint body must start with 'old <size>'")
        if len(proof_lines) > MAX_WITNESS_PROOF_LINES:
            raise DecodeError(f"at most {MAX_WITNESS_PROOF_LINES} consistency proof lines")
        proof = tuple(
            decode_b64(line, length=HASH_SIZE, what="consistency proof hash")
            for line in proof_lines
        )
        return cls(int(match.group(1)), proof, Checkpoint.from_note(note))

    def verify_extension(self, old_root: bytes) -> None:
        """Raise :class:`ProofError` unless the checkpoint consistently extends the tree of
        ``old_size`` leaves with root ``old_root`` (the empty root when ``old_size`` is 0)."""
        verify_consistency(
            self.old_size, self.checkpoint.size, old_root, self.checkpoint.root, self.proof
        )
