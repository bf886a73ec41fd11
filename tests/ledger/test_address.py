"""Addresses CZ-XXXX-XXXX-XXXX (docs/architecture.md §3, Book V.2): derivation, lenient reading,
check."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.address import ALPHABET, address_matches, address_of, parse_address
from ledger.errors import AddressError
from ledger.keys import SigningKey

SAMPLE = [SigningKey(hashlib.sha256(bytes([n])).digest()).public for n in range(48)]


def _symbols(address: str) -> list[str]:
    return list(address[3:].replace("-", ""))


def _spell(symbols: list[str]) -> str:
    body = "".join(symbols)
    return f"CZ-{body[0:4]}-{body[4:8]}-{body[8:12]}"


def test_address_is_first_50_bits_of_domain_hash_then_mod_1021_check() -> None:
    """The ten data symbols are SHA-256(b"cz-addr-v1" + key)[:50 bits]; two check symbols
    carry that value mod 1021, all upper-case Crockford base32."""
    key = SAMPLE[0]
    value = int.from_bytes(hashlib.sha256(b"cz-addr-v1" + key.raw).digest(), "big") >> (256 - 50)
    check = value % 1021
    digits = [(value >> (5 * (9 - i))) & 31 for i in range(10)] + [check >> 5, check & 31]
    assert _symbols(address_of(key)) == [ALPHABET[d] for d in digits]
    assert address_of(key).startswith("CZ-")
    assert len(address_of(key)) == 17


def test_crockford_alphabet_excludes_i_l_o_u() -> None:
    """The alphabet is Crockford's: 32 symbols, none of I, L, O, U."""
    assert len(set(ALPHABET)) == 32
    assert not set("ILOU") & set(ALPHABET)


def test_every_single_symbol_substitution_is_caught() -> None:
    """Over a sample of keys, every one of the 12 symbols replaced by each of the 31 other
    symbols is refused: the check catches every single-symbol error."""
    for key in SAMPLE:
        symbols = _symbols(address_of(key))
        for position in range(12):
            for other in ALPHABET:
                if other == symbols[position]:
                    continue
                typo = symbols.copy()
                typo[position] = other
                with pytest.raises(AddressError):
                    parse_address(_spell(typo))


def test_every_adjacent_swap_is_caught() -> None:
    """Over a sample of keys, swapping any two adjacent differing symbols (across the hyphens
    too, data and check alike) is refused."""
    swaps = 0
    for key in SAMPLE:
        symbols = _symbols(address_of(key))
        for position in range(11):
            if symbols[position] == symbols[position + 1]:
                continue
            typo = symbols.copy()
            typo[position], typo[position + 1] = typo[position + 1], typo[position]
            swaps += 1
            with pytest.raises(AddressError):
                parse_address(_spell(typo))
    assert swaps > 400


def test_lenient_reading_case_hyphens_and_confusable_letters() -> None:
    """Lower case, missing or extra hyphens, I/L for 1, O for 0 and surrounding whitespace all
    read as the same canonical address."""
    key = next(k for k in SAMPLE if set(address_of(k)) & {"0", "1"})
    canonical = address_of(key)
    assert parse_address(canonical.lower()) == canonical
    assert parse_address(canonical.replace("-", "")) == canonical
    assert parse_address("-".join(canonical.replace("-", ""))) == canonical
    assert parse_address(canonical.replace("1", "l").replace("0", "o")) == canonical
    assert parse_address(canonical.replace("1", "I").replace("0", "O")) == canonical
    assert parse_address(f"  {canonical}\n") == canonical
    assert address_matches(canonical.lower(), key)
    assert not address_matches(canonical, SAMPLE[1] if key != SAMPLE[1] else SAMPLE[2])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("XZ-0000-0000-0000", "starts with CZ-"),
        ("CZ-0000-0000-000", "12 symbols"),
        ("CZ-0000-0000-00000", "12 symbols"),
        ("CZ-0000-0000-000U", "not a symbol"),
        ("CZ-0000-0000-00 0", "not a symbol"),
        ("CZ-" + "0" * 80, "at most 64"),
    ],
)
def test_malformed_addresses_are_refused_with_a_reason(text: str, message: str) -> None:
    """Wrong prefix, wrong length, non-Crockford symbols and overlong text are AddressErrors
    whose message says which."""
    with pytest.raises(AddressError, match=message):
        parse_address(text)


def test_check_value_out_of_range_is_refused() -> None:
    """Check symbols encode 0..1020; the values 1021..1023 can never be valid."""
    symbols = _symbols(address_of(SAMPLE[0]))
    symbols[10:12] = ["Z", "Z"]  # 1023
    with pytest.raises(AddressError, match="check"):
        parse_address(_spell(symbols))


def test_non_text_is_refused() -> None:
    """An address that is not text is an AddressError, not a TypeError."""
    with pytest.raises(AddressError):
        parse_address(b"CZ-0000-0000-0000")  # type: ignore[arg-type]


@given(st.binary(min_size=32, max_size=32))
def test_address_round_trips_through_its_own_parser(seed: bytes) -> None:
    """Every key's address parses back to itself, in any case."""
    address = address_of(SigningKey(seed).public)
    assert parse_address(address) == address
    assert parse_address(address.lower()) == address


def test_check_catches_every_error_for_every_address_by_arithmetic() -> None:
    """The general argument, checked for all cases rather than a sample: a substitution at data
    position k changes the value by d·32^k (0 < |d| < 32), an adjacent data swap by
    d·31·32^k; neither is ever 0 mod 1021. A swap of the last data symbol with the first check
    symbol goes undetected only if 33·c ≡ 33·d (mod 1021), i.e. c = d: no swap at all."""
    for k in range(10):
        for d in range(1, 32):
            assert (d * 32**k) % 1021 != 0
            if k < 9:
                assert (d * 31 * 32**k) % 1021 != 0
    for c in range(32):
        for d in range(32):
            assert ((33 * c - 33 * d) % 1021 == 0) == (c == d)


def _address_starting(symbols: str) -> str:
    """A well-formed address (check symbols right) whose data symbols begin with ``symbols``."""
    data = 0
    for char in symbols.ljust(10, "0"):
        data = (data << 5) | ALPHABET.index(char)
    check = data % 1021
    return _spell([*symbols.ljust(10, "0"), ALPHABET[check >> 5], ALPHABET[check & 31]])


#: Non-ASCII letters whose str.upper() is ASCII: ſ→S, ı→I, ß→SS and the Latin ligatures.
UPPER_CASE_TO_ASCII = ["\u017f", "\u0131", "\u00df", *map(chr, range(0xFB00, 0xFB07))]
#: Everything str.strip() drops: 29 characters, 19 of them non-ASCII.
WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
#: What surrounding an address may be dropped: space, tab and line ends, nothing else.
SURROUNDING = {" ", "\t", "\r", "\n"}


# Regression: str.upper() read ſ as S, ı as 1, ß as SS and ligatures as their letters.
@pytest.mark.parametrize("char", UPPER_CASE_TO_ASCII)
def test_letters_whose_upper_case_is_ascii_are_not_address_symbols(char: str) -> None:
    """A non-ASCII letter standing where its upper case would spell valid symbols (``ſ`` for S,
    ``ﬃ`` for FF1...) is refused: addresses are ASCII, and leniency is for ASCII only."""
    reading = char.upper().replace("I", "1").replace("L", "1")
    canonical = _address_starting(reading)
    spelled = "CZ" + char + canonical.replace("-", "")[2 + len(reading) :]
    assert spelled.upper().replace("I", "1").replace("L", "1") == canonical.replace("-", "")
    with pytest.raises(AddressError, match="ASCII"):
        parse_address(spelled)


def test_whitespace_set_is_the_one_the_issue_counts() -> None:
    """The space list below is complete: the 29 characters Python's str.strip() drops."""
    assert len(WHITESPACE) == 29
    assert SURROUNDING.issubset(WHITESPACE)


# Regression: str.strip() dropped 29 kinds of space, 25 of which are not ours.
@pytest.mark.parametrize("space", WHITESPACE, ids=[f"U+{ord(c):04X}" for c in WHITESPACE])
def test_only_ascii_space_tab_and_line_ends_surround_an_address(space: str) -> None:
    """Space, tab, CR and LF around an address are dropped; every other space (NBSP, EM SPACE,
    IDEOGRAPHIC SPACE, the ASCII separators 0x1C-0x1F, VT, FF, NEL...) is refused, and no
    space at all is allowed inside."""
    canonical = address_of(SAMPLE[0])
    for text in (space + canonical, canonical + space):
        if space in SURROUNDING:
            assert parse_address(text) == canonical
        else:
            with pytest.raises(AddressError):
                parse_address(text)
    with pytest.raises(AddressError):
        parse_address(canonical[:8] + space + canonical[8:])
