"""Known-answer vectors for the signed formats (docs/formats.md, docs/architecture.md §3).

The expected signing bytes are written out by hand from the documented format (domain tag, then
RFC 8785 JSON: keys sorted, no spaces), and checked with hashlib and PyNaCl directly rather than
through ledger/: a change of tag, field name, key order or encoding breaks these tests, and
another implementation can check itself against the same values.
"""

from __future__ import annotations

import base64
import hashlib

import nacl.signing

from ledger.address import address_of
from ledger.certificates import PrintCertificate
from ledger.endorsements import Endorsement
from ledger.keys import SigningKey

MINT = SigningKey(bytes([2]) * 32)
ALICE = SigningKey(bytes([10]) * 32)
BOB = SigningKey(bytes([11]) * 32)
ALICE_KEY = "Q6cucUQBdi32a2jCbfvfJoKq7J8kdOykYT5CSg-6_Tw"
BOB_KEY = "Zr5-Myx6RTMyvZ0Kf32wVfXF7xoGraZtmLOftoEMRzo"
MANIFEST = "A" * 43  # 32 zero bytes

PRINT_BYTES = (
    b"CZ1/print\n"
    b'{"event":7,"finish":"standard","issue":1,"issued_to":"' + ALICE_KEY.encode() + b'",'
    b'"kind":"print","manifest":"' + MANIFEST.encode() + b'","serial":"CZ-MODEL-A-0042",'
    b'"set":"begotten","title":"Model-A"}'
)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _certificate() -> PrintCertificate:
    return PrintCertificate.sign(
        MINT,
        serial="CZ-MODEL-A-0042",
        title="Model-A",
        set="begotten",
        finish="standard",
        issued_to=ALICE_KEY,
        issue=1,
        event=7,
        manifest=MANIFEST,
    )


def test_keys_travel_as_unpadded_base64url() -> None:
    """The fixed seeds' public keys, as they appear on the wire."""
    assert ALICE.public.to_text() == ALICE_KEY
    assert BOB.public.to_text() == BOB_KEY


def test_address_vectors() -> None:
    """Addresses of fixed keys (the all-zero seed and seed 0x0a repeated)."""
    assert address_of(SigningKey(bytes(32)).public) == "CZ-XKCE-J14N-5NBB"
    assert address_of(ALICE.public) == "CZ-M4R7-4YD8-ASHY"


def test_print_certificate_signs_the_documented_bytes() -> None:
    """A print certificate's signature is Ed25519 over b"CZ1/print\\n" + JCS(body), checked
    with PyNaCl directly; its hash is SHA-256 of those bytes; the signature is deterministic."""
    certificate = _certificate()
    assert certificate.signing_bytes == PRINT_BYTES
    nacl.signing.VerifyKey(MINT.public.raw).verify(PRINT_BYTES, _unb64url(certificate.sig))
    assert certificate.hash() == hashlib.sha256(PRINT_BYTES).digest()
    assert certificate.sig == (
        "WIXQj1SRrmHKod8XI6H2W6dWo6MJBaRORZ56L6gFzKYxAyJGmZcj82bNliBFBi0qWNeq9tj4YSWsVbiHCh1bCQ"
    )


def test_endorsement_signs_the_documented_bytes_and_links_by_hash() -> None:
    """Hop 1's prev is the base64url SHA-256 of the certificate's signing bytes; the
    endorsement signs b"CZ1/endorsement\\n" + JCS(body) with `from` spelled as on the wire."""
    prev = _b64url(hashlib.sha256(PRINT_BYTES).digest())
    assert prev == "Nuu6LmNKurA6uQmM-LP7llf6IWQmOs2vpVPloaz-H1w"
    expected = (
        b"CZ1/endorsement\n"
        b'{"from":"' + ALICE_KEY.encode() + b'","hop":1,"kind":"endorsement",'
        b'"prev":"' + prev.encode() + b'","serial":"CZ-MODEL-A-0042","time":1700000000,'
        b'"to":"' + BOB_KEY.encode() + b'"}'
    )
    endorsement = Endorsement.sign(
        ALICE,
        serial="CZ-MODEL-A-0042",
        hop=1,
        prev=prev,
        to=BOB_KEY,
        time=1_700_000_000,
        **{"from": ALICE_KEY},
    )
    assert endorsement.signing_bytes == expected
    nacl.signing.VerifyKey(ALICE.public.raw).verify(expected, _unb64url(endorsement.sig))
    assert endorsement.sig == (
        "XxAD2S4oQ5B8kYQBOzs_hLE63Gk2IjXgQ4Wewy30FYmS7WAFS1aUHtXFNb3OXv7y-9zKzdH9hgpSuiKSZ3FiDw"
    )


def test_keys_module_verifies_the_same_signature() -> None:
    """ledger.keys' verify over the wire object (sig excluded) agrees with the model's."""
    certificate = _certificate()
    MINT.public.verify("print", certificate.to_wire(), certificate.sig)
