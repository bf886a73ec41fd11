"""What a service's witness serves besides cosignatures: the evidence it kept.

Each league service is a C2SP tlog-witness of the others' logs (docs/eventlog.md,
"Witnesses"). When a log submits a checkpoint that is not a consistent extension of the last
one the witness cosigned, the witness cosigns nothing and keeps the pair as
:class:`Evidence`: both checkpoints as the log signed them, the consistency proof the log sent
and why they conflict. ``GET /<service>/evidence`` serves it as an :class:`EvidenceList`.

Evidence needs no trust in the witness: :meth:`Evidence.convicts` checks it offline under the
log's public key alone (from the league manifest). Two checkpoints signed by one log at one
size with two roots, or a checkpoint whose own consistency proof shows another root at the
size the witness cosigned, cannot both be honest: that *convicts* the log. A proof that merely
fails is kept too (``unproven``): the log can answer it only with a valid consistency proof
between the two checkpoints it signed, which a forked log cannot give.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ledger.checkpoint import Checkpoint, log_verifier
from ledger.encoding import decode_b64
from ledger.errors import DecodeError, ProofError, VerificationError
from ledger.keys import PublicKey
from ledger.merkle import HASH_SIZE, node_hash, verify_consistency

#: Why a witness kept a pair of checkpoints.
#: ``same-size``: two roots signed at one tree size (convicts).
#: ``fork``: the submitted checkpoint's proof shows another root at the cosigned size (convicts).
#: ``unproven``: the proof fails against the cosigned root and shows no root of its own.
EvidenceKind = Literal["same-size", "fork", "unproven"]

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
        description="The root at the cosigned size that the proof shows the submitted tree "
        "to extend, when it shows one (base64)",
    )

    def checkpoints(self) -> tuple[Checkpoint, Checkpoint]:
        """The cosigned and the submitted checkpoint, parsed (signatures not yet checked)."""
        return Checkpoint.from_note(self.cosigned), Checkpoint.from_note(self.submitted)

    def proof_hashes(self) -> tuple[bytes, ...]:
        return tuple(
            decode_b64(h, length=HASH_SIZE, what="consistency proof hash") for h in self.proof
        )

    def convicts(self, log_key: PublicKey) -> bool:
        """Check this evidence offline under the log's key.

        True when it proves the log signed two views that cannot both be true (``same-size``
        or ``fork``); False when it only records a proof that failed (``unproven``). Raises
        :class:`VerificationError` when it is no evidence against this log at all: a
        checkpoint without the log's valid signature, two origins, or a conviction that
        the checkpoints and the proof do not bear out.
        """
        cosigned, submitted = self.checkpoints()
        if cosigned.origin != self.origin or submitted.origin != self.origin:
            raise VerificationError(f"the evidence's checkpoints are not both of {self.origin}")
        verifier = log_verifier(self.origin, log_key)
        cosigned.verify([verifier])
        submitted.verify([verifier])
        try:
            proof = self.proof_hashes()
        except DecodeError as exc:
            raise VerificationError(f"the evidence's proof: {exc.diagnostics()}") from None
        if cosigned.size == submitted.size:
            if hmac.compare_digest(cosigned.root, submitted.root):
                raise VerificationError("the two checkpoints agree: no evidence")
            return True
        if self.old_size != cosigned.size:
            raise VerificationError("the evidence's old size is not the cosigned checkpoint's")
        if cosigned.size < submitted.size:
            shown = prefix_root(cosigned.size, submitted.size, submitted.root, proof)
            if shown is not None and not hmac.compare_digest(shown, cosigned.root):
                return True
            try:
                verify_consistency(
                    cosigned.size, submitted.size, cosigned.root, submitted.root, proof
                )
            except ProofError:
                pass
            else:
                raise VerificationError("the proof shows the two checkpoints consistent")
        if self.kind != "unproven":
            raise VerificationError(f"the evidence does not show the {self.kind} it claims")
        return False


class EvidenceList(WitnessAnswer):
    """A page of the evidence a witness kept, oldest first."""

    witness: str = Field(description="The witness's name (its own log's origin)")
    evidence: list[Evidence] = Field(max_length=MAX_EVIDENCE_PAGE)
    next_after: int = Field(description="Pass as ?after= to read the following page")
