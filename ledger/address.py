"""Addresses ``CZ-XXXX-XXXX-XXXX``: a short, checked id of a public key (docs/architecture.md §3,
Book V.2).

Ten Crockford base32 symbols carry the first 50 bits of SHA-256(``b"cz-addr-v1"`` + key); two
more carry that 50-bit value mod 1021. 1021 is prime and larger than 31, so a single changed
symbol (a multiple d·32^k with 0 < |d| < 32) and a swap of two adjacent symbols (a multiple
d·31·32^k) can never leave the value congruent; a check symbol change is caught directly. An
address is an id like minisign's key id, not a proof of ownership: transfers carry the full key.
"""

from __future__ import annotations

import hashlib
import hmac

from ledger.errors import AddressError
from ledger.keys import PublicKey
from ledger.limits import MAX_ADDRESS_CHARS

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PREFIX = "CZ"
CHECK_MODULUS = 1021
DATA_SYMBOLS = 10
CHECK_SYMBOLS = 2
_DOMAIN = b"cz-addr-v1"
_SYMBOL_VALUE = {c: i for i, c in enumerate(ALPHABET)} | {"I": 1, "L": 1, "O": 0}
#: What may surround a typed or pasted address: space, tab and line ends (ASCII only).
_SURROUNDING = " \t\r\n"


def _symbols(value: int, count: int) -> str:
    return "".join(ALPHABET[(value >> (5 * (count - 1 - i))) & 31] for i in range(count))


def _format(data: int) -> str:
    body = _symbols(data, DATA_SYMBOLS) + _symbols(data % CHECK_MODULUS, CHECK_SYMBOLS)
    return f"{PREFIX}-{body[0:4]}-{body[4:8]}-{body[8:12]}"


def address_of(key: PublicKey) -> str:
    """The canonical address of ``key``: upper case, hyphenated."""
    digest = hashlib.sha256(_DOMAIN + key.raw).digest()
    return _format(int.from_bytes(digest[:7], "big") >> 6)


def parse_address(text: str) -> str:
    """Decode a typed address leniently and return its canonical form.

    Leniency is for ASCII only: case is ignored, hyphens are ignored, I and L read as 1 and O
    as 0, surrounding spaces, tabs and line ends are dropped. Any non-ASCII character is
    refused before anything else, so no Unicode case mapping (``ſ``→S, ``ß``→SS, ``ﬁ``→FI) or
    Unicode space can stand in for a symbol. A non-Crockford symbol, a wrong length or a
    failing check is an :class:`AddressError` too.
    """
    if not isinstance(text, str):
        raise AddressError("an address is text like CZ-XXXX-XXXX-XXXX")
    if len(text) > MAX_ADDRESS_CHARS:
        raise AddressError(f"an address is at most {MAX_ADDRESS_CHARS} characters")
    if not text.isascii():
        char = next(c for c in text if not c.isascii())
        raise AddressError(f"an address is ASCII: {char!r} (U+{ord(char):04X}) is not")
    compact = text.strip(_SURROUNDING).replace("-", "").upper()
    if not compact.startswith(PREFIX):
        raise AddressError(
            f"an address starts with {PREFIX}-, not {text.strip(_SURROUNDING)[:3]!r}"
        )
    symbols = compact[len(PREFIX) :]
    if len(symbols) != DATA_SYMBOLS + CHECK_SYMBOLS:
        raise AddressError(
            f"an address has {DATA_SYMBOLS + CHECK_SYMBOLS} symbols after {PREFIX}-, "
            f"not {len(symbols)}"
        )
    value = 0
    for char in symbols:
        if char not in _SYMBOL_VALUE:
            raise AddressError(f"{char!r} is not a symbol of an address (Crockford base32)")
        value = (value << 5) | _SYMBOL_VALUE[char]
    data, check = value >> 10, value & 1023
    if check != data % CHECK_MODULUS:
        raise AddressError("the address check symbols do not match: a symbol is mistyped")
    return _format(data)


def address_matches(address: str, key: PublicKey) -> bool:
    """Whether ``address`` (any lenient spelling) is the address of ``key``."""
    return hmac.compare_digest(parse_address(address), address_of(key))
