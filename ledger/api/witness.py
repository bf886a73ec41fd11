"""What a service's witness serves besides cosignatures: the evidence it kept.

Each league service is a C2SP tlog-witness of the others' logs (docs/eventlog.md,
"Witnesses"). When a checkpoint is submitted that is not a consistent extension of the last
one the witness cosigned, the witness cosigns nothing, and when the pair shows it by itself it
keeps the pair as :class:`Evidence`: both checkpoints as the log signed them, the proofs that
show the conflict and why. ``GET /<service>/evidence`` serves it as an :class:`EvidenceList`.

Evidence needs no trust in the witness: :meth:`Evidence.convicts` checks it offline under the
log's public key alone (from the league manifest). Two checkpoints signed by one log at one
size with two roots, or a checkpoint whose tree shows another root at the size the witness
cosigned (by the log's own consistency proof, or by the log's inclusion proof of the last leaf
of that size), cannot both be honest: that *convicts* the log. Nothing else is evidence. A
proof that merely fails proves nothing about the log: anyone may submit the log's genuine
(public) checkpoint with a garbage proof, so such a pair is never kept.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ledger.checkpoint import Checkpoint
from ledger.encoding import decode_b64
from ledger.errors import DecodeError, ProofError, VerificationError
from ledger.feed import signed_checkpoint
from ledger.keys import PublicKey
from ledger.merkle import HASH_SIZE, node_hash, verify_consistency, verify_inclusion

#: Why a witness kept a pair of checkpoints; each kind convicts the log by itself.
#: ``same-size``: two roots signed at one tree size.
#: ``fork``: the submitted tree shows another root at the cosigned size.
EvidenceKind = Literal["same-size", "fork"]

#: Most evidence records one page answers.
MAX_EVIDENCE_PAGE = 100


class WitnessAnswer(BaseModel):
    """Base of the witness's answers: unknown fields refused when parsed back."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def prefix_root(
    old_size: int, new_size: int, new_root: bytes, proof: Sequence[bytes]
) -> bytes | None:
    """The root at ``old_size`` that ``proof`` shows the tree (``new_size``, ``new_root``)
    to extend, or None when the proof shows none.

    RFC 9162 §2.1.4.2 recomputes both roots from the proof; when ``old_size`` is a power of
    two the old root is not in the proof (it is an input), so nothing is shown. Finding a
    second root a valid proof leads to would need a SHA-256 collision, so a shown root that
    differs from one the log signed at ``old_size`` proves the log forked.
    """
    if not 0 < old_size < new_size or old_size & (old_size - 1) == 0 or not proof:
        return None
    candidate = _old_root(old_size, new_size, proof)
    if candidate is None:
        return None
    try:
        verify_consistency(old_size, new_size, candidate, new_root, proof)
    except ProofError:
        return None
    return candidate


def _old_root(old_size: int, new_size: int, proof: Sequence[bytes]) -> bytes | None:
    """The first root the RFC 9162 verification computes from ``proof`` (or None)."""
    if any(len(h) != HASH_SIZE for h in proof):
        return None
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        fn >>= 1
        sn >>= 1
    return fr


def prefix_from_inclusion(
    index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes
) -> bytes | None:
    """The root of the first ``index + 1`` leaves of the tree (``size``, ``root``), from the
    inclusion proof of its leaf ``index`` (hash ``leaf``); None unless the proof verifies.

    On the audit path of a leaf the siblings to its left are exactly the complete subtrees
    before it, so folding those alone (as RFC 9162's verification folds them all) gives the
    prefix's root: any size's, powers of two included.
    """
    try:
        verify_inclusion(index, size, leaf, path, root)
    except ProofError:
        return None
    fn, sn, prefix = index, size - 1, leaf
    for c in path:
        if fn & 1 or fn == sn:
            prefix = node_hash(c, prefix)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        fn >>= 1
        sn >>= 1
    return prefix


class Evidence(WitnessAnswer):
    """Two checkpoints one log signed that are not one append-only history."""

    id: int = Field(ge=1, description="Ascending; pass as ?after= to read on")
    origin: str = Field(description="The log's origin line (the league's <league>/<service>)")
    recorded_at: str = Field(
        description="When the witness kept it, UTC, microseconds: 2026-12-02T15:51:34.123456Z"
    )
    kind: EvidenceKind
    reason: str = Field(description="One sentence: why the pair is inconsistent")
    cosigned: str = Field(
        description="The checkpoint the witness cosigned last, with the log's signature (and "
        "the witness's cosignature)"
    )
    submitted: str = Field(
        description="The checkpoint the log then submitted, with the log's signature"
    )
    old_size: int = Field(ge=0, description="The submission's old size line")
    proof: list[str] = Field(
        max_length=63, description="The submission's consistency proof, standard base64"
    )
    prefix_root: str | None = Field(
        default=None,
        description="The root at the cosigned size that the submitted tree shows, when it "
        "shows one (base64)",
    )
    leaf_hash: str | None = Field(
        default=None,
        description="The leaf hash at index cosigned size - 1 that the log served (base64), "
        "with inclusion_proof",
    )
    inclusion_proof: list[str] | None = Field(
        default=None,
        max_length=64,
        description="The log's inclusion proof of that leaf in the submitted tree, fetched by "
        "the witness when the submitted consistency proof showed no root (base64)",
    )

    def checkpoints(self) -> tuple[Checkpoint, Checkpoint]:
        """The cosigned and the submitted checkpoint, parsed (signatures not yet checked)."""
        return Checkpoint.from_note(self.cosigned), Checkpoint.from_note(self.submitted)

    def proof_hashes(self) -> tuple[bytes, ...]:
        return tuple(
            decode_b64(h, length=HASH_SIZE, what="consistency proof hash") for h in self.proof
        )

    def _shown_roots(self, cosigned: Checkpoint, submitted: Checkpoint) -> list[bytes]:
        """The roots at the cosigned size that the submitted tree is shown to have."""
        shown = [prefix_root(cosigned.size, submitted.size, submitted.root, self.proof_hashes())]
        if self.leaf_hash is not None and self.inclusion_proof is not None and cosigned.size:
            leaf = decode_b64(self.leaf_hash, length=HASH_SIZE, what="leaf hash")
            path = [
                decode_b64(h, length=HASH_SIZE, what="inclusion proof hash")
                for h in self.inclusion_proof
            ]
            shown.append(
                prefix_from_inclusion(cosigned.size - 1, submitted.size, leaf, path, submitted.root)
            )
        return [root for root in shown if root is not None]

    def convicts(self, log_key: PublicKey) -> bool:
        """Check this evidence offline under the log's key.

        True when it proves the log signed two views that cannot both be true (``same-size``
        or ``fork``). Raises :class:`VerificationError` when it is no evidence against this
        log: a checkpoint without the log's valid signature, two origins, or a conviction
        that the checkpoints and the proofs do not bear out (a proof that merely fails
        included: it proves nothing about the log).
        """
        cosigned, submitted = self.checkpoints()
        for checkpoint in (cosigned, submitted):
            signed_checkpoint(checkpoint, self.origin, log_key)
        if cosigned.size == submitted.size:
            if hmac.compare_digest(cosigned.root, submitted.root):
                raise VerificationError("the two checkpoints agree: no evidence")
            return True
        if self.old_size != cosigned.size:
            raise VerificationError("the evidence's old size is not the cosigned checkpoint's")
        if cosigned.size < submitted.size:
            try:
                shown = self._shown_roots(cosigned, submitted)
                proof = self.proof_hashes()
            except DecodeError as exc:
                raise VerificationError(f"the evidence's proofs: {exc.diagnostics()}") from None
            if any(not hmac.compare_digest(root, cosigned.root) for root in shown):
                return True
            try:
                verify_consistency(
                    cosigned.size, submitted.size, cosigned.root, submitted.root, proof
                )
            except ProofError:
                pass
            else:
                raise VerificationError("the proof shows the two checkpoints consistent")
        raise VerificationError(f"the evidence does not show the {self.kind} it claims")


class EvidenceList(WitnessAnswer):
    """A page of the evidence a witness kept, oldest first."""

    witness: str = Field(description="The witness's name (its own log's origin)")
    evidence: list[Evidence] = Field(max_length=MAX_EVIDENCE_PAGE)
    next_after: int = Field(description="Pass as ?after= to read the following page")
