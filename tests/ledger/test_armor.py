"""Strict RFC 7468 armor as age reads it (docs/architecture.md §3): one text per payload,
everything else refused with a typed error a person can act on."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.armor import KEY, LABELS, LEDGER_CARD, SAVE_CODE, SLIP, armor, dearmor
from ledger.errors import ArmorError, SizeLimitError, UnknownKindError
from ledger.limits import MAX_ARMOR_BYTES

DATA = bytes(range(256)) * 2  # 512 bytes: eleven lines, the last one shorter
BLOCK = armor(SLIP, DATA)


def test_armor_layout_is_begin_64_columns_end() -> None:
    """BEGIN line, padded standard base64 in 64-column lines (the last shorter), END line,
    one trailing newline."""
    lines = BLOCK.split("\n")
    assert lines[0] == "-----BEGIN CZ SLIP-----"
    assert lines[-2] == "-----END CZ SLIP-----"
    assert lines[-1] == ""
    body = lines[1:-2]
    assert all(len(line) == 64 for line in body[:-1])
    assert 0 < len(body[-1]) < 64
    assert base64.b64decode("".join(body)) == DATA


def test_labels_are_the_four_kinds() -> None:
    """The protocol knows exactly CZ SLIP, CZ LEDGER CARD, CZ SAVE CODE and CZ KEY."""
    assert {SLIP, LEDGER_CARD, SAVE_CODE, KEY} == LABELS


def test_whitespace_around_the_block_and_crlf_are_accepted() -> None:
    """As age allows: whitespace before and after the block, and CRLF line ends."""
    assert dearmor(f"\n\n  {BLOCK}\n\t \n", SLIP) == DATA
    assert dearmor(BLOCK.replace("\n", "\r\n"), SLIP) == DATA


def test_a_full_last_line_is_fine() -> None:
    """48·k bytes fill the last line to exactly 64 columns, which is allowed."""
    assert dearmor(armor(KEY, bytes(96)), KEY) == bytes(96)


def _body_lines(block: str) -> list[str]:
    return block.split("\n")[1:-2]


def _with_body(lines: list[str], label: str = SLIP) -> str:
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----", ""])


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("hello " + BLOCK, ArmorError, "text before"),
        ("note:\n" + BLOCK, ArmorError, "text before"),
        (BLOCK + "thanks!\n", ArmorError, "text after"),
        (BLOCK.replace("-----END CZ SLIP-----\n", ""), ArmorError, "cut short"),
        (BLOCK[: len(BLOCK) // 2], ArmorError, "cut short"),
        ("", ArmorError, "empty"),
        ("just some words", ArmorError, "not a CZ SLIP"),
        (BLOCK.replace("CZ SLIP", "CZ KEY"), ArmorError, "expected a CZ SLIP"),
        (BLOCK.replace("BEGIN CZ SLIP", "BEGIN CZ SAVE CODE"), ArmorError, "expected a CZ SLIP"),
        (BLOCK.replace("END CZ SLIP", "END CZ KEY"), ArmorError, "ends as CZ KEY"),
        (BLOCK.replace("CZ SLIP", "PGP MESSAGE"), UnknownKindError, "not an armor label"),
        (BLOCK.replace("CZ SLIP", "cz slip"), UnknownKindError, "not an armor label"),
        (BLOCK.replace("-----BEGIN", "----BEGIN"), ArmorError, "not a CZ SLIP"),
        (BLOCK.replace("CZ SLIP-----\n", "CZ SLIP----- \n", 1), ArmorError, "BEGIN line is malf"),
        (BLOCK.replace("-----END CZ SLIP-----", "-----END CZ SLIP-----x"), ArmorError, "END line"),
        (BLOCK.replace("\n", "\r\n", 3), ArmorError, "mix LF and CRLF"),
        (BLOCK.replace("\n", "\r", 1), ArmorError, "stray carriage return"),
        (BLOCK.replace("A", "é", 1), ArmorError, "ASCII"),
        (_with_body([*_body_lines(BLOCK)[:1], "", *_body_lines(BLOCK)[1:]]), ArmorError, "columns"),
        (_with_body([line + "\n" for line in _body_lines(BLOCK)]), ArmorError, "columns"),
        (_with_body(["".join(_body_lines(BLOCK))]), ArmorError, "columns"),
        (_with_body([*_body_lines(BLOCK)[:-1], _body_lines(BLOCK)[-1][:-1]]), ArmorError, "base64"),
        (_with_body([]), ArmorError, "holds no data"),
        (_with_body(["AAB="]), ArmorError, "canonical"),  # non-zero trailing bits
        (_with_body(["AB=="]), ArmorError, "canonical"),  # non-zero trailing bits
        (_with_body(["AA"]), ArmorError, "base64"),  # missing padding
        (_with_body(["AA==", "AAAA"]), ArmorError, "columns"),
        (_with_body(["AA-_"]), ArmorError, "base64"),  # base64url alphabet
        (_with_body(["A A="]), ArmorError, "base64"),
        (
            _with_body([" " + _body_lines(BLOCK)[0][1:], *_body_lines(BLOCK)[1:]]),
            ArmorError,
            "base64",
        ),
    ],
)
def test_every_deviation_is_refused_with_its_reason(
    text: str, error: type[Exception], message: str
) -> None:
    """Text outside the block, wrong or unknown or mismatched labels, stray whitespace inside,
    mixed line ends, non-ASCII, wrong line lengths and non-canonical base64 are each refused
    with a typed error whose message says what is wrong."""
    with pytest.raises(error, match=message):
        dearmor(text, SLIP)


def test_oversized_input_is_refused_before_reading() -> None:
    """Input larger than the label's published limit is a SizeLimitError, unparsed."""
    limit = MAX_ARMOR_BYTES[LEDGER_CARD]
    with pytest.raises(SizeLimitError, match="limit"):
        dearmor(" " * (limit + 1), LEDGER_CARD)
    with pytest.raises(SizeLimitError):
        armor(LEDGER_CARD, bytes(limit))


def test_unknown_labels_and_non_text_are_refused() -> None:
    """Asking for an unknown label, or passing bytes, is refused with a typed error."""
    with pytest.raises(UnknownKindError):
        armor("CZ NOTE", b"x")
    with pytest.raises(UnknownKindError):
        dearmor(BLOCK, "CZ NOTE")
    with pytest.raises(ArmorError):
        dearmor(BLOCK.encode(), SLIP)  # type: ignore[arg-type]
    with pytest.raises(ArmorError, match="at least one byte"):
        armor(SLIP, b"")


@given(st.binary(min_size=1, max_size=2000), st.sampled_from(sorted(LABELS)))
def test_armor_round_trip(data: bytes, label: str) -> None:
    """Any bytes armor and dearmor back under any label, and the armor is unique: armoring
    the decoded bytes gives the same text."""
    text = armor(label, data)
    assert dearmor(text, label) == data
    assert armor(label, dearmor(text, label)) == text


@given(st.binary(min_size=1, max_size=300), st.data())
def test_any_changed_character_is_refused_or_changes_the_bytes(
    data: bytes, draw: st.DataObject
) -> None:
    """Changing one character of a block never yields the same bytes from different text:
    it is refused or it decodes to different data (no malleability)."""
    text = armor(SLIP, data)
    position = draw.draw(st.integers(0, len(text) - 2))
    replacement = draw.draw(st.characters(codec="ascii").filter(lambda c: c != text[position]))
    changed = text[:position] + replacement + text[position + 1 :]
    try:
        decoded = dearmor(changed, SLIP)
    except (ArmorError, UnknownKindError):
        return
    assert decoded != data or changed.strip() == text.strip()
