"""C2SP tlog checkpoints and cosignatures: the specs' examples, round trips, strict parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.checkpoint import (
    AddCheckpoint,
    Checkpoint,
    CosignatureVerifier,
    Cosigner,
    format_body,
    log_verifier,
    parse_witness_vkey,
    sign_checkpoint,
)
from ledger.errors import (
    BadSignatureError,
    DecodeError,
    ProofError,
    SizeLimitError,
    VerificationError,
)
from ledger.keys import SigningKey
from ledger.merkle import EMPTY_ROOT, LeafHashes, consistency_proof, leaf_hash
from ledger.signed_note import (
    Note,
    NoteSigner,
    key_id,
    sign_note,
)

# c2sp.org/tlog-cosignature example: a checkpoint with a log signature and a cosignature.
SPEC_COSIGNED = (
    "example.com/behind-the-sofa\n"
    "20852163\n"
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    "\n"
    "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcy"
    "v2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2"
    "oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
)

KEY = SigningKey(bytes(range(32)))
ROOT = bytes(range(32))


def test_the_cosignature_example_parses_into_checkpoint_and_cosignature() -> None:
    """The tlog-cosignature example parses: checkpoint fields, a log line, a 72-byte cosig."""
    checkpoint = Checkpoint.from_note(SPEC_COSIGNED)
    assert (checkpoint.origin, checkpoint.size) == ("example.com/behind-the-sofa", 20852163)
    assert len(checkpoint.root) == 32
    log_line, witness_line = checkpoint.note.signatures
    assert log_line.name == "example.com/behind-the-sofa"
    assert len(log_line.signature) == 64
    assert witness_line.name == "witness.example.com/w1"
    assert len(witness_line.signature) == 8 + 64
    with pytest.raises(VerificationError, match="no signature from a known key"):
        checkpoint.verify([log_verifier(checkpoint.origin, KEY.public)])


def test_checkpoint_sign_parse_verify_round_trip() -> None:
    """A signed checkpoint prints as the C2SP text and parses back to the same values."""
    checkpoint = sign_checkpoint("league.test/mint", 42, ROOT, KEY, ["ext line"])
    text = str(checkpoint)
    assert text.startswith("league.test/mint\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n")
    assert text.split("\n")[3] == "ext line"
    parsed = Checkpoint.from_note(text)
    assert parsed == checkpoint
    assert parsed.extensions == ("ext line",)
    verifier = log_verifier("league.test/mint", KEY.public)
    assert parsed.verify([verifier]) == [verifier]
    assert verifier.key_id == key_id("league.test/mint", 0x01, KEY.public.raw)


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")),
        min_size=1,
        max_size=40,
    ).filter(lambda s: "+" not in s and not any(c.isspace() for c in s)),
    st.integers(0, 2**63 - 1),
    st.binary(min_size=32, max_size=32),
)
def test_any_checkpoint_round_trips(origin: str, size: int, root: bytes) -> None:
    """For any valid origin, size and root, sign -> text -> parse -> verify holds."""
    checkpoint = sign_checkpoint(origin, size, root, KEY)
    parsed = Checkpoint.from_note(str(checkpoint).encode())
    assert (parsed.origin, parsed.size, parsed.root) == (origin, size, root)
    parsed.verify([log_verifier(origin, KEY.public)])


def test_flipping_any_byte_of_a_signed_checkpoint_fails() -> None:
    """Changing any single character of a signed checkpoint fails parsing or verification."""
    text = str(sign_checkpoint("league.test/mint", 7, ROOT, KEY))
    verifier = log_verifier("league.test/mint", KEY.public)
    for i, ch in enumerate(text):
        replacement = "A" if ch != "A" else "B"
        altered = text[:i] + replacement + text[i + 1 :]
        with pytest.raises((DecodeError, VerificationError)):
            Checkpoint.from_note(altered).verify([verifier])


@pytest.mark.parametrize(
    "body",
    [
        "origin\n42\n",
        "\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
        "origin\n042\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
        "origin\n-1\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
        "origin\n9223372036854775808\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
        "origin\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==\n",
        "origin\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n\nsig\n",
        "origin\n42\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n",
    ],
)
def test_malformed_checkpoint_bodies_are_refused(body: str) -> None:
    """Missing lines, non-canonical sizes, short or unpadded roots, empty extensions: refused."""
    signed = sign_note(body, [NoteSigner("origin", KEY)]) if body.endswith("\n") else None
    with pytest.raises(DecodeError):
        Checkpoint.from_note(str(signed))


def test_cosignatures_verify_and_return_their_time() -> None:
    """A witness cosignature (type 0x04) verifies with its time and fails on another body."""
    witness = Cosigner("witness.test/w1", SigningKey(bytes([5] * 32)))
    checkpoint = sign_checkpoint("league.test/mint", 3, ROOT, KEY)
    line = witness.cosign(checkpoint, 1679315147)
    cosigned = Checkpoint.from_note(str(checkpoint.with_signature(line)))
    verifier = parse_witness_vkey(witness.verifier().vkey())
    assert verifier.key_id == key_id("witness.test/w1", 0x04, witness.key.public.raw)
    assert verifier.timestamp(cosigned.text, cosigned.note.signatures[1]) == 1679315147
    log = log_verifier("league.test/mint", KEY.public)
    assert cosigned.verify([log, verifier]) == [log, verifier]
    other = sign_checkpoint("league.test/mint", 4, ROOT, KEY).with_signature(line)
    with pytest.raises(BadSignatureError, match="cosignature"):
        other.verify([log, verifier])
    assert format_body("o", 0, EMPTY_ROOT) == "o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"


# c2sp.org/tlog-witness, the add-checkpoint example request body.
SPEC_ADD_CHECKPOINT = (
    "old 20852014\n"
    "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
    "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"
    "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"
    "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n"
    "\n"
    "example.com/behind-the-sofa\n"
    "20852163\n"
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    "\n"
    "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcy"
    "v2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    "— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6"
    "267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
)


def test_the_witness_request_example_parses_and_prints_back() -> None:
    """The tlog-witness example body parses into old size, four proof hashes and a checkpoint."""
    request = AddCheckpoint.parse(SPEC_ADD_CHECKPOINT.encode())
    assert request.old_size == 20852014
    assert len(request.proof) == 4
    assert (request.checkpoint.size, len(request.checkpoint.note.signatures)) == (20852163, 2)
    assert str(request) == SPEC_ADD_CHECKPOINT


def test_a_witness_request_proves_the_extension_or_fails() -> None:
    """A request built from real proofs verifies; a wrong old root or size does not."""
    leaves = LeafHashes([leaf_hash(bytes([i])) for i in range(11)])
    old = LeafHashes([leaf_hash(bytes([i])) for i in range(6)])
    checkpoint = sign_checkpoint("league.test/mint", 11, leaves.root(), KEY)
    request = AddCheckpoint(6, tuple(consistency_proof(6, 11, leaves)), checkpoint)
    AddCheckpoint.parse(str(request)).verify_extension(old.root())
    with pytest.raises(ProofError):
        request.verify_extension(leaves.root())
    first = AddCheckpoint(0, (), checkpoint)
    first.verify_extension(EMPTY_ROOT)
    with pytest.raises(ProofError):
        AddCheckpoint(0, request.proof, checkpoint).verify_extension(EMPTY_ROOT)


@pytest.mark.parametrize(
    "body",
    [
        "old 01\n\nx",
        "old -1\n\nx",
        "new 5\n\nx",
        "old 5\nnot-base64\n\nx",
        "old 5\nAAAA\n\nx",
        "old 5\n" + "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n" * 64 + "\nx",
        "old 5\n",
        "old 5\n\nno checkpoint here\n",
    ],
)
def test_malformed_witness_requests_are_typed_errors(body: str) -> None:
    """Bad old-size lines, bad or too many proof lines, a missing checkpoint: DecodeError."""
    with pytest.raises(DecodeError):
        AddCheckpoint.parse(body)


def test_an_oversized_witness_request_is_refused_before_parsing() -> None:
    """A body larger than any valid request is a SizeLimitError, whatever it holds."""
    with pytest.raises(SizeLimitError):
        AddCheckpoint.parse(b"old 5\n" + b"A" * 100_000)


WITNESS = Cosigner("witness.test/w1", SigningKey(bytes([5] * 32)))


# Regression: verify accepted a checkpoint whose only signature was a cosignature.
def test_a_checkpoint_needs_its_logs_own_signature() -> None:
    """Given [log, witness] verifiers, a checkpoint carrying only the witness's cosignature is
    refused: the log's signature (Ed25519 under the key name = origin) is required, and
    cosignatures only add to it."""
    signed = sign_checkpoint("league.test/mint", 3, ROOT, KEY)
    cosignature = WITNESS.cosign(signed, 1679315147)
    only_witness = Checkpoint.from_note(Note(signed.text, (cosignature,)))
    log, witness = log_verifier("league.test/mint", KEY.public), WITNESS.verifier()
    with pytest.raises(VerificationError, match="no signature by its log"):
        only_witness.verify([log, witness])
    assert signed.with_signature(cosignature).verify([log, witness]) == [log, witness]
    assert signed.verify([log, witness]) == [log]


def test_a_checkpoint_is_refused_without_a_verifier_for_its_origin() -> None:
    """Verifiers that hold no Ed25519 key named as the origin cannot accept a checkpoint, even
    when one of them signed it: the log's key is tied to the origin line."""
    signed = sign_checkpoint("league.test/mint", 3, ROOT, KEY)
    cosigned = signed.with_signature(WITNESS.cosign(signed, 1679315147))
    renamed = NoteSigner("league.test/other", KEY)
    under_other_name = Checkpoint.from_note(sign_note(signed.text, [renamed]))
    for checkpoint, verifiers in (
        (cosigned, [WITNESS.verifier()]),
        (under_other_name, [renamed.verifier()]),
        (signed, [CosignatureVerifier("league.test/mint", KEY.public)]),
    ):
        with pytest.raises(VerificationError, match=r"league\.test/mint"):
            checkpoint.verify(verifiers)
