"""Ed25519 acceptance (docs/architecture.md §3 keys; docs/formats.md, "Ed25519 acceptance"): every
class the policy refuses, built by hand from a key whose secret scalar we know.

Keys are checked as curve points where they are read (``PublicKey``: canonical, in the
prime-order subgroup); signatures by ``PublicKey.verify_raw``, which is libsodium's
``crypto_sign_open`` (cofactorless; since libsodium 1.0.16 it refuses S ≥ L and small-order R).
Each signature case is also fed to libsodium directly, so a PyNaCl linked against a libsodium
that accepts any of them fails here, and each construction is checked to satisfy the equation
a laxer verifier would accept, so a refusal is the policy's and not a broken construction's.
"""

from __future__ import annotations

import hashlib

import nacl.bindings
import nacl.exceptions
import pytest

from ledger.encoding import encode_b64url
from ledger.errors import BadSignatureError, KeyFormatError
from ledger.keys import PublicKey, SigningKey

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
#: A point of order 8; its multiples are the eight points of small order (the torsion).
T8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def _torsion() -> list[bytes]:
    points = [T8]
    for _ in range(7):
        points.append(nacl.bindings.crypto_core_ed25519_add(points[-1], T8))
    return points


TORSION = _torsion()
IDENTITY = bytes([1]) + bytes(31)
#: y = 1 and y = -1 with the sign bit set: x = 0 has no negative, so these are non-canonical.
NEGATIVE_ZERO_X = [bytes([1]) + bytes(30) + b"\x80", bytes.fromhex("ec" + "ff" * 30 + "ff")]
#: Every y ≥ p that fits (y = p + k, k < 19), with either sign bit: non-canonical encodings.
NON_CANONICAL = [(P + k | sign << 255).to_bytes(32, "little") for k in range(19) for sign in (0, 1)]

SEED = bytes(range(32))
MESSAGE = b"CZ1/test\nthe message"


def _le(n: int) -> bytes:
    return n.to_bytes(32, "little")


def _h(*parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(b"".join(parts)).digest(), "little") % L


def _secret(seed: bytes) -> tuple[int, bytes]:
    """RFC 8032 §5.1.5: the clamped secret scalar and the nonce prefix of ``seed``."""
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar &= (1 << 254) - 8
    scalar |= 1 << 254
    return scalar, digest[32:]


SCALAR, PREFIX = _secret(SEED)
KEY = SigningKey(SEED).public
A = KEY.raw


def _signature_with_r(r_encoding: bytes, r_log: int) -> bytes:
    """(R, S) with R given as ``r_encoding`` whose discrete log (mod L, its prime-order part)
    is ``r_log``: S = r + H(R ‖ A ‖ M)·a, which satisfies [S]B = [r]B + [h]A."""
    s = (r_log + _h(r_encoding, A, MESSAGE) * SCALAR) % L
    return r_encoding + _le(s)


def _honest() -> bytes:
    r = _h(PREFIX, MESSAGE)
    return _signature_with_r(nacl.bindings.crypto_scalarmult_ed25519_base_noclamp(_le(r)), r)


def _lax_difference(signature: bytes) -> bytes:
    """[S mod L]B − [h]A − R with R decoded leniently: the identity exactly when a verifier that
    reduces S and compares decoded points would accept without a cofactor."""
    r_encoding, s = signature[:32], int.from_bytes(signature[32:], "little") % L
    h = _h(r_encoding, A, MESSAGE)
    s_b = nacl.bindings.crypto_scalarmult_ed25519_base_noclamp(_le(s))
    h_a = nacl.bindings.crypto_scalarmult_ed25519_noclamp(_le(h), A)
    return nacl.bindings.crypto_core_ed25519_sub(
        nacl.bindings.crypto_core_ed25519_sub(s_b, h_a), r_encoding
    )


def _times_8(point: bytes) -> bytes:
    for _ in range(3):
        point = nacl.bindings.crypto_core_ed25519_add(point, point)
    return point


def _refused_everywhere(signature: bytes) -> None:
    """Refused by our verifier (typed) and by libsodium on its own."""
    with pytest.raises(BadSignatureError):
        KEY.verify_raw(MESSAGE, signature)
    with pytest.raises(nacl.exceptions.BadSignatureError):
        nacl.bindings.crypto_sign_open(signature + MESSAGE, A)


def test_the_hand_built_signature_is_the_libsodium_one() -> None:
    """The constructions below are sound: the hand-made honest signature is byte for byte the
    one libsodium makes, and it verifies."""
    assert _honest() == SigningKey(SEED).sign_raw(MESSAGE)
    KEY.verify_raw(MESSAGE, _honest())


# Keys of small order, non-canonical or of mixed order are refused on load.
@pytest.mark.parametrize("raw", TORSION + NEGATIVE_ZERO_X, ids=lambda b: b.hex()[:8])
def test_small_order_points_are_refused(raw: bytes) -> None:
    """Each of the eight small-order points (identity, order 2, 4 and 8), and the two
    sign-bit spellings of x = 0, is refused as a key with KeyFormatError."""
    with pytest.raises(KeyFormatError, match="prime order"):
        PublicKey.from_text(encode_b64url(raw))


@pytest.mark.parametrize("raw", NON_CANONICAL, ids=lambda b: b.hex()[:4] + b.hex()[-2:])
def test_non_canonical_encodings_are_refused(raw: bytes) -> None:
    """An encoding with y ≥ p (38 of them: y = p + k for k < 19, either sign bit) is never
    a key, whatever point it would reduce to."""
    with pytest.raises(KeyFormatError):
        PublicKey(raw)


@pytest.mark.parametrize("torsion", TORSION[:-1], ids=lambda b: b.hex()[:8])
def test_mixed_order_keys_are_refused(torsion: bytes) -> None:
    """A real key plus a small-order point (a mixed-order point, a valid encoding on the curve)
    is refused: keys must lie in the prime-order subgroup, which libsodium's own verify does
    not check (it refuses only small-order keys)."""
    mixed = nacl.bindings.crypto_core_ed25519_add(A, torsion)
    with pytest.raises(KeyFormatError, match="prime order"):
        PublicKey(mixed)


def test_real_keys_are_accepted() -> None:
    """Every generated key round-trips through its text form."""
    key = SigningKey.generate().public
    assert PublicKey.from_text(key.to_text()) == key


# Regression: S ≥ L, small-order or non-canonical R, and what only a
# cofactored verifier would accept are refused.
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
def test_s_not_reduced_mod_l_is_refused(k: int) -> None:
    """S + k·L (every k that still fits in 256 bits) satisfies the same group equation as S,
    so it is a second spelling of one signature: refused (malleability)."""
    r_part, s = _honest()[:32], int.from_bytes(_honest()[32:], "little")
    if s + k * L >= 2**256:
        pytest.skip("does not fit in 32 bytes")
    signature = r_part + _le(s + k * L)
    assert _lax_difference(signature) == IDENTITY
    _refused_everywhere(signature)


@pytest.mark.parametrize("r", TORSION + NEGATIVE_ZERO_X, ids=lambda b: b.hex()[:8])
def test_small_order_r_is_refused(r: bytes) -> None:
    """R of small order with S = H(R‖A‖M)·a: [S]B − [h]A is the identity, so for R = identity
    a cofactorless verifier that allows small-order R accepts (a signature that commits to
    nothing), and for any small-order R a cofactored one does. Refused."""
    signature = _signature_with_r(r, 0)
    assert _times_8(_lax_difference(signature)) == IDENTITY
    if r == IDENTITY:
        assert _lax_difference(signature) == IDENTITY
    _refused_everywhere(signature)


@pytest.mark.parametrize("k", [1, 0], ids=["identity", "order-4"])
def test_non_canonical_r_is_refused(k: int) -> None:
    """R spelled with y = p + k (the identity for k = 1, an order-4 point for k = 0), with S
    built to satisfy the equation once R is decoded: a verifier comparing decoded points would
    accept; libsodium compares R's bytes (and lists these spellings as small order): refused."""
    signature = _signature_with_r(_le(P + k), 0)
    assert _times_8(_lax_difference(signature)) == IDENTITY
    if k == 1:
        assert _lax_difference(signature) == IDENTITY
    _refused_everywhere(signature)


@pytest.mark.parametrize("torsion", TORSION[:-1], ids=lambda b: b.hex()[:8])
def test_verification_is_cofactorless(torsion: bytes) -> None:
    """R' = [r]B + T (T of small order) with S = r + H(R'‖A‖M)·a satisfies the cofactored
    equation [8][S]B = [8]R' + [8][h]A but not [S]B = R' + [h]A: refused, because we verify
    cofactorless (RFC 8032's stricter equation, libsodium's)."""
    r = _h(PREFIX, MESSAGE, b"mixed")
    mixed_r = nacl.bindings.crypto_core_ed25519_add(
        nacl.bindings.crypto_scalarmult_ed25519_base_noclamp(_le(r)), torsion
    )
    signature = _signature_with_r(mixed_r, r)
    assert _lax_difference(signature) != IDENTITY
    assert _times_8(_lax_difference(signature)) == IDENTITY
    _refused_everywhere(signature)


def test_a_valid_key_is_parsed_once_and_a_refusal_is_never_remembered() -> None:
    """The point check runs once per distinct valid key (a chain names the same keys hop after
    hop); a bad key is refused every time it is read, never served from the cache."""
    text = SigningKey(bytes([9] * 32)).public.to_text()
    assert PublicKey.from_text(text) is PublicKey.from_text(text)
    small_order = encode_b64url(T8)
    for _ in range(2):
        with pytest.raises(KeyFormatError):
            PublicKey.from_text(small_order)
