"""The wire base: strict, frozen pydantic models with one JSON form, and signed objects.

Every protocol object is a :class:`WireModel`: ``to_wire()`` gives the JSON object that travels,
``from_wire()`` parses one (a mapping, or JSON text) and raises a typed :class:`LedgerError`,
never a pydantic traceback. A :class:`SignedModel` carries ``kind`` and ``sig``; its signature
covers the domain tag of its kind and the RFC 8785 bytes of everything else (ledger/canonical).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache, cached_property
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    model_serializer,
)

from ledger.armor import armor, dearmor
from ledger.canonical import jcs, signing_bytes
from ledger.encoding import decode_b64url, encode_b64url, is_canonical_b64url
from ledger.errors import DecodeError, KeyFormatError, LedgerError, SchemaError, UnknownKindError
from ledger.keys import SIGNATURE_SIZE, PublicKey, SigningKey

HASH_SIZE = 32
#: The largest integer RFC 8785 can canonicalize (I-JSON: exact in a binary64 float).
MAX_SAFE_INTEGER = 2**53 - 1


def _check_key(text: str, info: ValidationInfo) -> str:
    try:
        PublicKey.from_text(text)  # remembered once valid (ledger.keys)
    except LedgerError as exc:
        raise KeyFormatError(f"{info.field_name}: {exc.diagnostics()}") from None
    return text


def _check_signature(text: str, info: ValidationInfo) -> str:
    if not is_canonical_b64url(text, SIGNATURE_SIZE):  # the decode names what is wrong
        decode_b64url(text, length=SIGNATURE_SIZE, what=f"{info.field_name} (a signature)")
    return text


def _check_hash(text: str, info: ValidationInfo) -> str:
    if not is_canonical_b64url(text, HASH_SIZE):  # the decode names what is wrong
        decode_b64url(text, length=HASH_SIZE, what=f"{info.field_name} (a SHA-256 hash)")
    return text


# Validators raise our own typed errors, which pydantic passes through untouched. The schema
# patterns only document the shape (an OpenAPI reader sees it); the validators decide, with
# their own error (a wrong key is `bad-key`, not a pattern mismatch).
_B64URL_32 = {"pattern": "^[A-Za-z0-9_-]{43}$"}
_B64URL_64 = {"pattern": "^[A-Za-z0-9_-]{86}$"}
#: A public key on the wire: canonical unpadded base64url of 32 bytes (an Ed25519 key).
KeyText = Annotated[
    str, Field(max_length=64, json_schema_extra=_B64URL_32), AfterValidator(_check_key)
]
#: A signature on the wire: canonical unpadded base64url of 64 bytes.
SignatureText = Annotated[
    str, Field(max_length=128, json_schema_extra=_B64URL_64), AfterValidator(_check_signature)
]
#: A SHA-256 hash on the wire: canonical unpadded base64url of 32 bytes.
HashText = Annotated[
    str, Field(max_length=64, json_schema_extra=_B64URL_32), AfterValidator(_check_hash)
]
#: A placeholder signature (64 zero bytes) for validating fields before they are signed.
_UNSIGNED = encode_b64url(bytes(SIGNATURE_SIZE))
#: A list on the wire, held as a tuple (JSON arrays validate; the items stay strict).
WireTuple = Field(strict=False)


def hash_text(digest: bytes) -> str:
    """The wire form of a SHA-256 digest."""
    return encode_b64url(digest)


def _refuse_constant(name: str) -> Any:
    raise DecodeError(f"JSON constant {name} is not allowed")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DecodeError(f"JSON object repeats the key {_short(key)}")
        result[key] = value
    return result


def parse_json(text: str | bytes, *, what: str = "object") -> Any:
    """Parse untrusted JSON text: duplicate keys, NaN and Infinity refused, errors typed."""
    try:
        return json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse_constant
        )
    except DecodeError:
        raise
    except (ValueError, RecursionError, TypeError) as exc:
        raise DecodeError(f"{what} is not valid JSON: {exc}") from exc


def _short(value: object, limit: int = 40) -> str:
    """A bounded repr of an untrusted value, for messages (input can be megabytes)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    message = first["msg"].removeprefix("Value error, ")[:200]
    where = ".".join(_short(part) if isinstance(part, str) else str(part) for part in first["loc"])
    where = where.replace("'", "")
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return f"{where}: {message}{tail}" if where else f"{message}{tail}"


class WireModel(BaseModel):
    """A protocol object: strict types, no unknown fields, immutable once built."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        validate_by_name=False,  # the wire has one spelling per field: ``from``, never ``from_``
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    #: What a person calls this object, for error messages.
    WHAT: ClassVar[str] = "object"

    def to_wire(self) -> dict[str, Any]:
        """The JSON object that travels."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | str | bytes) -> Self:
        """Parse an untrusted JSON object (or its text); a typed error on any defect."""
        if isinstance(data, str | bytes):
            data = parse_json(data, what=cls.WHAT)
        if not isinstance(data, Mapping):
            raise SchemaError(f"a {cls.WHAT} is a JSON object")
        cls._check_kind(data)
        for name in _absent_when_none(cls):
            if name in data and data[name] is None:
                raise SchemaError(
                    f"bad {cls.WHAT}: {name} is absent when there is none, never null (a null "
                    "member would change the bytes its signature covers)"
                )
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise SchemaError(f"bad {cls.WHAT}: {_describe(exc)}") from None
        except RecursionError:
            raise SchemaError(f"bad {cls.WHAT}: nested too deeply") from None

    @classmethod
    def _check_kind(cls, data: Mapping[str, Any]) -> None:
        """Refuse an object of another kind before reading it (kinds are checked first)."""


@cache
def _absent_when_none(model: type[BaseModel]) -> frozenset[str]:
    """The wire names of ``model``'s optional members that travel only when set (``None`` is
    left out of the wire and of the signed bytes): one wire form each, so never ``null``."""
    return frozenset(
        field.alias or name
        for name, field in model.model_fields.items()
        if field.exclude_if is not None and field.default is None
    )


class KindedModel(WireModel):
    """A wire object that names its kind in a ``kind`` field."""

    KIND: ClassVar[str]

    @classmethod
    def _check_kind(cls, data: Mapping[str, Any]) -> None:
        kind = data.get("kind")
        if kind != cls.KIND:
            raise UnknownKindError(
                f"expected a {cls.WHAT} (kind {cls.KIND!r}), got kind {_short(kind)}"
            )


class SignedModel(KindedModel):
    """A kinded object with a signature over its domain-tagged canonical bytes."""

    sig: SignatureText

    @model_serializer(mode="wrap")
    def _sig_last(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``sig`` goes last on the wire, for a reader's eye (signing ignores key order)."""
        data: dict[str, Any] = handler(self)  # a model serializes to a dict, in either mode
        if "sig" in data:
            data["sig"] = data.pop("sig")
        return data

    def body(self) -> dict[str, Any]:
        """The signed part: the wire object without ``sig``."""
        return self.model_dump(mode="json", by_alias=True, exclude={"sig"})

    @cached_property
    def signing_bytes(self) -> bytes:
        """Domain tag + JCS of the body: what the signature covers and the hash is of.

        Computed once per (immutable) object: a chain verifier hashes and verifies every link.
        """
        return signing_bytes(self.KIND, self.body())

    def hash(self) -> bytes:
        """SHA-256 of the signing bytes: the id that ``prev`` links and fraud proofs name."""
        return hashlib.sha256(self.signing_bytes).digest()

    def verify(self, key: PublicKey) -> None:
        """Raise :class:`BadSignatureError` unless ``key`` signed this object as its kind."""
        # ``sig`` was checked to be canonical base64url of 64 bytes when the object was built.
        key.verify_raw(self.signing_bytes, decode_b64url(self.sig, length=SIGNATURE_SIZE))

    @classmethod
    def sign(cls, key: SigningKey, **fields: Any) -> Self:
        """Build the object from wire-form ``fields`` (``kind`` is filled in) and sign it.

        The fields are validated once, before signing, so nothing malformed is ever signed;
        the signature (well-formed by construction) is then set without validating again.
        """
        unsigned = cls.from_wire({**fields, "kind": cls.KIND, "sig": _UNSIGNED})
        sig = encode_b64url(key.sign_raw(unsigned.signing_bytes))
        return unsigned.model_copy(update={"sig": sig})


class ArmoredModel(KindedModel):
    """A kinded object that travels as an armored block of its canonical JSON."""

    LABEL: ClassVar[str]

    def to_armor(self) -> str:
        """The armored text: RFC 8785 JSON of the wire object inside a ``LABEL`` block."""
        return armor(self.LABEL, jcs(self.to_wire()))

    @classmethod
    def from_armor(cls, text: str) -> Self:
        """Parse an armored block; its JSON must be canonical (one text per object)."""
        data = dearmor(text, cls.LABEL)
        obj = parse_json(data, what=cls.WHAT)
        if jcs(obj) != data:
            raise DecodeError(f"the {cls.LABEL} does not hold canonical JSON (RFC 8785)")
        return cls.from_wire(obj)
