"""Strict RFC 7468 armor, read the way age reads it (docs/architecture.md §3).

A block is ``-----BEGIN <label>-----``, then padded standard base64 in lines of exactly 64
columns (the last line 1 to 64), then ``-----END <label>-----``. Like age, the reader allows
whitespace before and after the block and LF or CRLF line ends (one kind per block), and
refuses everything else: text outside the block, non-canonical base64, other line lengths,
labels it does not know, a label other than the one asked for, a BEGIN and END that disagree,
and input larger than the label's published limit. Each refusal is a typed error whose message
says what is wrong, because players paste these blocks by hand.
"""

from __future__ import annotations

import re

from ledger.encoding import decode_b64, encode_b64
from ledger.errors import ArmorError, DecodeError, SizeLimitError, UnknownKindError
from ledger.limits import MAX_ARMOR_BYTES

SLIP = "CZ SLIP"
LEDGER_CARD = "CZ LEDGER CARD"
SAVE_CODE = "CZ SAVE CODE"
KEY = "CZ KEY"
#: Every label the protocol knows.
LABELS = frozenset(MAX_ARMOR_BYTES)
COLUMNS = 64

# RFC 7468 §3: label = labelchar *( ["-" / SP] labelchar ), labelchar = %x21-2C / %x2E-7E
_LABEL = r"(?P<label>[\x21-\x2c\x2e-\x7e]+(?:[- ][\x21-\x2c\x2e-\x7e]+)*)"
_BEGIN = re.compile(rf"-----BEGIN {_LABEL}-----")
_END = re.compile(rf"-----END {_LABEL}-----")
_SURROUNDING_WHITESPACE = " \t\r\n"


def armor(label: str, data: bytes) -> str:
    """Armor ``data`` under ``label``; the text ends with a newline."""
    _known(label)
    if not data:
        raise ArmorError("an armored block holds at least one byte")
    encoded = encode_b64(data)
    lines = [encoded[i : i + COLUMNS] for i in range(0, len(encoded), COLUMNS)]
    text = "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----", ""])
    if len(text) > MAX_ARMOR_BYTES[label]:
        raise SizeLimitError(
            f"this {label} would be {len(text)} bytes; the limit is {MAX_ARMOR_BYTES[label]}"
        )
    return text


def dearmor(text: str, label: str) -> bytes:
    """The bytes inside a strict ``label`` block; a typed error for anything else."""
    _known(label)
    if not isinstance(text, str):
        raise ArmorError(f"a {label} is text")
    limit = MAX_ARMOR_BYTES[label]
    if len(text) > limit:
        raise SizeLimitError(f"this {label} is {len(text)} characters; the limit is {limit}")
    if not text.isascii():
        raise ArmorError(f"a {label} is plain ASCII text; this one holds other characters")
    lines = _lines(text.strip(_SURROUNDING_WHITESPACE), label)
    found = _begin_label(lines, label)
    _check_end(lines, found)
    return _decode_body(lines[1:-1], label)


def _known(label: str) -> None:
    if label not in LABELS:
        raise UnknownKindError(f"{label!r} is not an armor label this protocol knows")


def _lines(block: str, label: str) -> list[str]:
    if not block:
        raise ArmorError(f"no {label} found: the text is empty")
    if "\r" in block:
        if block.count("\r") != block.count("\r\n") or block.count("\n") != block.count("\r\n"):
            raise ArmorError("line ends mix LF and CRLF, or a stray carriage return is present")
        block = block.replace("\r\n", "\n")
    return block.split("\n")


def _begin_label(lines: list[str], expected: str) -> str:
    begin = _BEGIN.fullmatch(lines[0])
    if begin is None:
        if lines[0].startswith("-----BEGIN"):
            raise ArmorError(f"the BEGIN line is malformed (stray spaces?): {lines[0][:80]!r}")
        if any("-----BEGIN " in line for line in lines):
            raise ArmorError("there is text before the -----BEGIN line; paste only the block")
        raise ArmorError(f"no -----BEGIN {expected}----- line: this is not a {expected}")
    found = begin["label"]
    if found not in LABELS:
        raise UnknownKindError(f"{found!r} is not an armor label this protocol knows")
    if found != expected:
        raise ArmorError(f"expected a {expected}, but this is a {found}")
    return found


def _check_end(lines: list[str], label: str) -> None:
    end = _END.fullmatch(lines[-1]) if len(lines) > 1 else None
    if end is None:
        if len(lines) > 1 and lines[-1].startswith("-----END"):
            raise ArmorError(f"the END line is malformed (stray spaces?): {lines[-1][:80]!r}")
        if any("-----END " in line for line in lines[1:]):
            raise ArmorError("there is text after the -----END line; paste only the block")
        raise ArmorError(f"no -----END {label}----- line: the block is cut short")
    if end["label"] != label:
        raise ArmorError(f"the block begins as {label} but ends as {end['label']}")


def _decode_body(body: list[str], label: str) -> bytes:
    if not body:
        raise ArmorError(f"the {label} holds no data")
    for number, line in enumerate(body[:-1], start=2):
        if len(line) != COLUMNS:
            raise ArmorError(
                f"line {number} of the {label} has {len(line)} columns; "
                f"every line but the last has exactly {COLUMNS}"
            )
    if not 1 <= len(body[-1]) <= COLUMNS:
        raise ArmorError(
            f"the last data line of the {label} has {len(body[-1])} columns; it has 1 to {COLUMNS}"
        )
    try:
        return decode_b64("".join(body), what=f"the {label} data")
    except DecodeError as exc:
        raise ArmorError(exc.diagnostics()) from None
