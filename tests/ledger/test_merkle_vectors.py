"""RFC 6962 conformance against the transparency-dev/merkle vectors in tests/data/rfc6962."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ledger.errors import ProofError
from ledger.merkle import (
    LeafHashes,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "rfc6962"

#: Leaf data of the RFC 6962 reference tree the numbered vectors are drawn from.
REFERENCE_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    bytes(range(0x50, 0x58)),
    bytes(range(0x60, 0x70)),
]

#: Our outcome for each `additional/` case (True = accepted), see docs/eventlog.md.
#: Only one differs from the vector's own ``wantErr``: see ADDITIONAL_DISAGREEMENTS.
ADDITIONAL_POLICY: dict[str, bool] = {
    "consistency/additional/consistency-check-on-empty-tree-size1-is-zero-is-useless.json": False,
    "consistency/additional/roots-do-not-match-and-sizes-are-zero.json": False,
    "consistency/additional/roots-do-not-not-match-and-sizes-are-one.json": False,
    "consistency/additional/size1-is-greater-than-size2-again.json": False,
    "consistency/additional/size1-is-greater-than-size2.json": False,
    "consistency/additional/size1-is-zero-and-does-not-equal-size2.json": False,
    "consistency/additional/size1-is-zero-and-size2-is-not-zero.json": False,
    "consistency/additional/sizes-are-equal-one-and-proof-is-empty.json": False,
    "consistency/additional/sizes-are-equal-one-but-roots-are-not.json": False,
    "consistency/additional/sizes-are-equal-zero-and-proof-is-empty.json": False,
    "consistency/additional/sizes-are-equal-zero-but-roots-are-not.json": False,
    "consistency/additional/sizes-do-not-watch-and-proof-is-empty.json": False,
    "consistency/additional/sizes-match-but-proof-is-not-empty-and-sizes-are-one.json": False,
    "consistency/additional/sizes-match-but-proof-is-not-empty-and-sizes-are-zero.json": False,
}
#: The vector accepts 12-byte "roots" ("don't care 2") for equal sizes; we refuse any root
#: that is not a 32-byte hash before comparing anything.
ADDITIONAL_DISAGREEMENTS = {
    "consistency/additional/sizes-are-equal-one-and-proof-is-empty.json",
}


def _files(kind: str) -> list[str]:
    return sorted(str(p.relative_to(VECTORS)) for p in (VECTORS / kind).rglob("*.json"))


def _load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / name).read_text())


def _b64(text: str) -> bytes:
    return base64.b64decode(text)


def _accepts_inclusion(v: dict[str, Any]) -> bool:
    try:
        verify_inclusion(
            v["leafIdx"],
            v["treeSize"],
            _b64(v["leafHash"]),
            [_b64(p) for p in v["proof"] or []],
            _b64(v["root"]),
        )
    except ProofError:
        return False
    return True


def _accepts_consistency(v: dict[str, Any]) -> bool:
    try:
        verify_consistency(
            v["size1"],
            v["size2"],
            _b64(v["root1"]),
            _b64(v["root2"]),
            [_b64(p) for p in v["proof"] or []],
        )
    except ProofError:
        return False
    return True


def _expected(name: str, v: dict[str, Any]) -> bool:
    if "/additional/" in name and name.startswith("consistency"):
        return ADDITIONAL_POLICY[name]
    return not v["wantErr"]


@pytest.mark.parametrize("name", _files("inclusion"))
def test_inclusion_vector(name: str) -> None:
    """Every published inclusion vector is accepted or refused exactly as it says."""
    v = _load(name)
    assert _accepts_inclusion(v) is _expected(name, v), v["desc"]


@pytest.mark.parametrize("name", _files("consistency"))
def test_consistency_vector(name: str) -> None:
    """Every consistency vector meets its wantErr, or our written policy for additional/."""
    v = _load(name)
    assert _accepts_consistency(v) is _expected(name, v), v["desc"]


def test_policy_table_covers_every_additional_case() -> None:
    """The policy table names every additional/ consistency file, and lists disagreements."""
    names = {n for n in _files("consistency") if "/additional/" in n}
    assert names == set(ADDITIONAL_POLICY)
    disagreements = {n for n in names if ADDITIONAL_POLICY[n] is _load(n)["wantErr"]}
    assert disagreements == ADDITIONAL_DISAGREEMENTS


def test_vector_count() -> None:
    """The copied vector set is complete (so a lost file cannot silently shrink the suite)."""
    assert len(_files("inclusion")) == 98
    assert len(_files("consistency")) == 98


@pytest.mark.parametrize("name", [n for n in _files("inclusion") if n.endswith("happy-path.json")])
def test_generated_inclusion_proof_equals_vector(name: str) -> None:
    """Our proof generator reproduces each published happy-path inclusion proof byte for byte."""
    v = _load(name)
    size = v["treeSize"]
    tree = LeafHashes([leaf_hash(d) for d in REFERENCE_LEAVES[:size]])
    assert tree.root() == _b64(v["root"])
    assert tree(0, v["leafIdx"]) == _b64(v["leafHash"])
    expected = [_b64(p) for p in v["proof"] or []]
    assert inclusion_proof(v["leafIdx"], size, tree) == expected


@pytest.mark.parametrize(
    "name", [n for n in _files("consistency") if n.endswith("happy-path.json")]
)
def test_generated_consistency_proof_equals_vector(name: str) -> None:
    """Our generator reproduces each published happy-path consistency proof byte for byte."""
    v = _load(name)
    tree = LeafHashes([leaf_hash(d) for d in REFERENCE_LEAVES[: v["size2"]]])
    small = LeafHashes([leaf_hash(d) for d in REFERENCE_LEAVES[: v["size1"]]])
    assert small.root() == _b64(v["root1"])
    assert tree.root() == _b64(v["root2"])
    expected = [_b64(p) for p in v["proof"] or []]
    assert consistency_proof(v["size1"], v["size2"], tree) == expected
