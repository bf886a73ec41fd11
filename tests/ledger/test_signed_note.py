"""C2SP signed notes: the spec's worked example, known and unknown keys, strict parsing."""

from __future__ import annotations

import pytest

from ledger.checkpoint import parse_witness_vkey
from ledger.encoding import decode_b64, encode_b64
from ledger.errors import (
    BadSignatureError,
    DecodeError,
    KeyFormatError,
    SizeLimitError,
    VerificationError,
)
from ledger.keys import SigningKey
from ledger.signed_note import (
    NoteSigner,
    check_key_name,
    parse_note,
    parse_vkey,
    sign_note,
    verify_note,
)

# c2sp.org/signed-note, "Verifier keys" example.
SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
SPEC_NOTE = (
    "This is an example message.\n"
    "\n"
    "— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3"
    "mFXmRKuwHjG1Yu72IneyaQM=\n"
)
KEY = SigningKey(bytes(range(32)))


def test_the_signed_note_worked_example_verifies() -> None:
    """The spec's example note verifies under the spec's verifier key, and only under it."""
    verifier = parse_vkey(SPEC_VKEY)
    assert verifier.key_id.hex() == "530d903a"
    assert verifier.vkey() == SPEC_VKEY
    note = parse_note(SPEC_NOTE)
    assert note.text == "This is an example message.\n"
    assert str(note) == SPEC_NOTE
    assert verify_note(note, [verifier]) == [verifier]
    altered = parse_note(SPEC_NOTE.replace("example message", "example massage"))
    with pytest.raises(BadSignatureError, match=r"example\.com/foo"):
        verify_note(altered, [verifier])


def test_unknown_signers_are_ignored_but_one_known_signature_is_required() -> None:
    """Signatures with an unknown name or id are skipped; a note with none known is refused."""
    other = SigningKey(bytes([9] * 32))
    note = sign_note("hello\n", [NoteSigner("a.example/x", other), NoteSigner("a.example/k", KEY)])
    known = NoteSigner("a.example/k", KEY).verifier()
    assert verify_note(note, [known]) == [known]
    same_name_other_key = NoteSigner("a.example/x", KEY).verifier()
    assert verify_note(note, [same_name_other_key, known]) == [known]
    with pytest.raises(VerificationError):
        verify_note(note, [same_name_other_key])


def test_a_known_key_with_a_bad_signature_rejects_the_note() -> None:
    """When the name and key id match a known key, a failing signature rejects the whole note."""
    signer = NoteSigner("a.example/k", KEY)
    good = sign_note("one\n", [signer])
    forged = parse_note(str(good).replace("one\n\n", "two\n\n"))
    with pytest.raises(BadSignatureError):
        verify_note(forged, [signer.verifier()])


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no blank line\n— a/b AAAAAAAA\n", DecodeError),
        ("text\n\n— a/b AAAAAAAA", DecodeError),
        ("text\n\n- a/b AAAAAAAA\n", DecodeError),
        ("text\n\n— a b AAAAAAAA\n", DecodeError),
        ("text\n\n— a+b AAAAAAAA\n", DecodeError),
        ("text\n\n— a/b AAAA AAAA\n", DecodeError),
        ("text\n\n— a/b AA=AAAAA\n", DecodeError),
        ("text\n\n— a/b AAAAAAA!\n", DecodeError),
        ("text\n\n— a/b \n", DecodeError),
        ("text\n\n—  AAAAAAAA\n", DecodeError),
        ("text\n\n— a/b AAAAAAAA\n\n", DecodeError),
        ("te\txt\n\n— a/b AAAAAAAA\n", DecodeError),
        ("text\r\n\n— a/b AAAAAAAA\n", DecodeError),
        ("text\n\n" + "— a/b AAAAAAAA\n" * 65, SizeLimitError),
        (b"text\xff\n\n\xe2\x80\x94 a/b AAAAAAAA\n", DecodeError),
    ],
)
def test_malformed_notes_are_typed_errors(text: str | bytes, error: type[Exception]) -> None:
    """Every malformation of the note format raises a typed error, never a partial note: a
    signature line must have the shape '— <key name> <base64 text>' (docs/formats.md)."""
    with pytest.raises(error):
        parse_note(text)


def test_malformed_verifier_keys_are_refused() -> None:
    """A vkey with a wrong id, a wrong type byte or a wrong shape is a KeyFormatError."""
    name, _, material = SPEC_VKEY.split("+")
    witness_type = "BA" + material[2:]  # the same key material under type 0x04
    for bad in (
        f"{name}+530d903b+{material}",
        f"{name}+{material}",
        "x+00000000+AQ==",
        f"{name}+530d903a+{witness_type}",
    ):
        with pytest.raises((KeyFormatError, DecodeError)):
            parse_vkey(bad)


def _vkey_material(sig_type: int) -> str:
    """base64(type || the spec example's key): it holds no '+', which would split the vkey."""
    material = bytes([sig_type]) + decode_b64(SPEC_VKEY.split("+")[2])[1:]
    assert "+" not in encode_b64(material)
    return encode_b64(material)


# Regression: a lone surrogate in a key name reached name.encode() untyped.
@pytest.mark.parametrize("name", ["a\udcff", "\ud800", "x\udfffy"])
def test_a_key_name_with_a_lone_surrogate_is_a_typed_error(name: str) -> None:
    """A vkey whose name holds a lone surrogate (not UTF-8) is a KeyFormatError, for the
    Ed25519 and the cosignature parsers alike, never a UnicodeEncodeError."""
    with pytest.raises(KeyFormatError, match="key name"):
        parse_vkey(f"{name}+00000000+{_vkey_material(0x01)}")
    with pytest.raises(KeyFormatError, match="key name"):
        parse_witness_vkey(f"{name}+00000000+{_vkey_material(0x04)}")
    with pytest.raises(DecodeError, match="key name"):
        check_key_name(name)


SIGNER = NoteSigner("a.example/k", KEY)
GOOD = sign_note("one\n", [SIGNER])
GOOD_LINE = GOOD.signatures[0].line()


def _corrupted(line: str, at: int = 40) -> str:
    """``line`` with one base64 character of its signature (not of its key id) changed."""
    prefix = len("— a.example/k ")
    assert at > prefix + 6
    return line[:at] + ("B" if line[at] != "B" else "C") + line[at + 1 :]


# Regression: a line from an unknown key that did not decode canonically failed the
# whole note, so a relay could block it; the policy is in docs/formats.md, "Signed notes".
@pytest.mark.parametrize(
    "line",
    [
        "— other.example/w AAAAAAB=\n",  # non-zero trailing bits
        "— other.example/w AAAAAAA\n",  # missing padding
        "— other.example/w AAAA\n",  # too short to hold a key id and a signature
        "— other.example/w A\n",
        "— other.example/w ////////////////////////////////////==\n",
        "— a.example/k AAAAAAAAAAAA\n",  # a known name, another key id
    ],
)
def test_unknown_key_lines_are_ignored_whatever_they_hold(line: str) -> None:
    """A signature line of the right shape whose (name, key id) is no known key's is ignored,
    even when its base64 is not canonical or too short: the note verifies by its known key,
    and prints back with the line exactly as it came, in place."""
    for lines in ((line, GOOD_LINE), (GOOD_LINE, line)):
        text = "one\n\n" + "".join(lines)
        note = parse_note(text)
        assert str(note) == text
        assert [v.name for v in verify_note(note, [SIGNER.verifier()])] == ["a.example/k"]


def test_a_note_of_only_unreadable_unknown_lines_has_no_known_signature() -> None:
    """Ignored lines never count: a note holding only them is refused as unsigned."""
    note = parse_note("one\n\n— other.example/w AAAAAAB=\n")
    with pytest.raises(VerificationError, match="no signature from a known key"):
        verify_note(note, [SIGNER.verifier()])


# Regression: a corrupted duplicate of a known key's line failed the whole note.
@pytest.mark.parametrize("order", ["corrupted-first", "corrupted-last"])
def test_a_known_key_has_signed_when_one_of_its_lines_verifies(order: str) -> None:
    """Duplicate lines of one known key: the key has signed when any one of them verifies (in
    any order); its other lines are then ignored, whatever they hold."""
    bad = _corrupted(GOOD_LINE)
    lines = [bad, GOOD_LINE] if order == "corrupted-first" else [GOOD_LINE, bad, bad]
    note = parse_note("one\n\n" + "".join(lines))
    verifier = SIGNER.verifier()
    assert verify_note(note, [verifier]) == [verifier]
    twice = parse_note("one\n\n" + GOOD_LINE + GOOD_LINE)
    assert verify_note(twice, [verifier]) == [verifier]


@pytest.mark.parametrize(
    "lines",
    [
        [_corrupted(GOOD_LINE)],
        [_corrupted(GOOD_LINE, 40), _corrupted(GOOD_LINE, 50)],
        [GOOD_LINE[:-3] + "\n"],  # the key id is the known key's; the rest does not decode
    ],
)
def test_a_known_key_none_of_whose_lines_verifies_rejects_the_note(lines: list[str]) -> None:
    """When every line naming a known key (name and key id) fails, the whole note is refused
    with BadSignatureError naming the key, even if another known key signed it."""
    other = NoteSigner("b.example/k", SigningKey(bytes([7] * 32)))
    other_line = other.sign("one\n").line()
    note = parse_note("one\n\n" + other_line + "".join(lines))
    known = other.verifier()
    with pytest.raises(BadSignatureError, match=r"a\.example/k"):
        verify_note(note, [known, SIGNER.verifier()])
    assert verify_note(note, [known]) == [known]
