"""What the notary reads and answers (Book V.6, V.7, V.8; docs/architecture.md §4 "one arbiter of
transfers").

``POST /notary/endorsements`` reads a :class:`NotarizeRequest` (an armored slip, or whole
chains) and answers a :class:`NotarizeAnswer`: one :class:`Receipt` per hop of every chain,
each signed by the notary and checkable offline (:meth:`Receipt.check`). A different
endorsement at a recorded hop is a 409 :class:`FraudConflict`: a problem document whose
``conflicts`` carry the prior record and the fraud proof. ``GET /provenance/{serial}``
answers a :class:`Provenance`.
"""

from __future__ import annotations

import hmac
from typing import Annotated, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ledger.api.problems import Problem
from ledger.certificates import (
    EventIndex,
    IssueNumber,
    NoteCertificate,
    PrintCertificate,
    SerialText,
)
from ledger.checkpoint import Checkpoint
from ledger.encoding import decode_b64
from ledger.endorsements import Chain, Endorsement, Hop
from ledger.errors import ProofError
from ledger.feed import signed_checkpoint
from ledger.fraud import FraudProof
from ledger.keys import PublicKey
from ledger.limits import MAX_ARMOR_BYTES, MAX_CHAINS_PER_SLIP
from ledger.merkle import verify_inclusion
from ledger.slips import Slip
from ledger.wire import HashText, KeyText, SignedModel, WireModel, WireTuple, hash_text

#: A Merkle hash as checkpoints and proofs spell it: standard padded base64 of 32 bytes.
MerkleText = Annotated[str, Field(min_length=44, max_length=44)]
#: A signed note (a checkpoint with its signature lines): bounded, never parsed here.
NoteText = Annotated[str, Field(min_length=1, max_length=4096)]
#: An RFC 6962 audit path: at most one hash per level of a 2^63-leaf tree.
ProofPath = Annotated[tuple[MerkleText, ...], WireTuple, Field(max_length=63)]


class NotarizeRequest(WireModel):
    """Chains to notarize: an armored slip as a wallet writes it, or the chains themselves.

    Exactly one of the two. Every chain is whole (certificate and every endorsement since);
    each names its serial once.
    """

    WHAT = "notarize request"

    slip: Annotated[str, Field(max_length=MAX_ARMOR_BYTES["CZ SLIP"])] | None = None
    chains: (
        Annotated[tuple[Chain, ...], WireTuple, Field(min_length=1, max_length=MAX_CHAINS_PER_SLIP)]
        | None
    ) = None

    @model_validator(mode="after")
    def _one_of_two(self) -> Self:
        if (self.slip is None) == (self.chains is None):
            raise ValueError("give either slip (an armored CZ SLIP) or chains, not both")
        if self.chains is not None and len({c.serial for c in self.chains}) != len(self.chains):
            raise ValueError("the chains name each serial once")
        return self

    def all_chains(self) -> tuple[Chain, ...]:
        """The chains to notarize (the slip's, dearmored strictly)."""
        if self.chains is not None:
            return self.chains
        return Slip.from_armor(self.slip or "").chains


class Receipt(SignedModel):
    """The notary's signed word that ``endorsement`` is the one recorded at (serial, issue,
    hop): its event ``index`` in the notary's log, that event's ``leaf_hash``, a checkpoint of
    the notary's log covering it and the inclusion proof of the leaf in that checkpoint."""

    KIND: ClassVar[str] = "receipt"
    WHAT = "receipt"

    kind: Literal["receipt"]
    #: The notary log's checkpoint origin, ``<league>/notary``.
    origin: Annotated[str, Field(min_length=1, max_length=200)]
    serial: SerialText
    issue: IssueNumber
    hop: Hop
    #: The hash of the recorded endorsement (what the next hop's ``prev`` names).
    endorsement: HashText
    #: The holder after this hop.
    to: KeyText
    index: EventIndex
    leaf_hash: MerkleText
    checkpoint: NoteText
    proof: ProofPath

    def check(self, notary: PublicKey, endorsement: Endorsement | None = None) -> Checkpoint:
        """Check everything offline: the notary's signature, the checkpoint's signature under
        the notary key and this origin, and the leaf's inclusion at ``index`` in it (and, when
        given, that ``endorsement`` is the one receipted). Returns the checkpoint."""
        self.verify(notary)
        checkpoint = signed_checkpoint(self.checkpoint, self.origin, notary)
        verify_inclusion(
            self.index,
            checkpoint.size,
            decode_b64(self.leaf_hash, what="leaf hash"),
            [decode_b64(h, what="proof hash") for h in self.proof],
            checkpoint.root,
        )
        if endorsement is not None and (
            (endorsement.serial, endorsement.hop) != (self.serial, self.hop)
            or not hmac.compare_digest(hash_text(endorsement.hash()), self.endorsement)
        ):
            raise ProofError(f"the receipt is not for this endorsement of {self.serial}")
        return checkpoint


class Answer(BaseModel):
    """Base of the notary's answers: plain JSON, unknown fields refused when parsed back."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NotarizeAnswer(Answer):
    """Every hop of every submitted chain, receipted, in the order submitted."""

    receipts: list[Receipt]
    recorded: int = Field(description="Hops this request recorded (the rest were already)")


class Conflict(Answer):
    """One refused hop: the record that was there first, and the proof that convicts."""

    serial: str
    hop: int
    prior: Receipt = Field(description="The receipt of the endorsement recorded first")
    proof: FraudProof = Field(description="first: the recorded endorsement; second: yours")


class FraudConflict(Problem):
    """The 409 ``fraud`` problem of ``POST /notary/endorsements``, with its extension member
    ``conflicts`` (RFC 9457 §3.2): nothing of the request was recorded."""

    conflicts: list[Conflict]


class StampRecord(Answer):
    """A print's stamp as the notary followed it from the mint's feed, with the mint's
    inclusion proof of the stamp's event in the mint checkpoint the notary verified."""

    certificate: PrintCertificate
    index: int = Field(description="The stamp's seq in the mint's log")
    leaf_hash: str
    checkpoint: str = Field(description="The mint's signed checkpoint the proof is against")
    proof: list[str]


class IssueRecord(Answer):
    """One issue of a certificate as the notary followed it from its issuer's feed, with the
    issuer's inclusion proof of the issue's event in the issuer's checkpoint the notary
    verified: each issue of a note (the treasury's ``note-issued``), or a print issued again
    after its return to the mint (the mint's ``print-reissued``, L-20; its stamp, issue 1, is
    the :class:`StampRecord`)."""

    certificate: Annotated[NoteCertificate | PrintCertificate, Field(discriminator="kind")]
    index: int = Field(description="The issuing event's seq in the issuer's log")
    leaf_hash: str
    checkpoint: str = Field(description="The issuer's signed checkpoint the proof is against")
    proof: list[str]


class ReturnRecord(Answer):
    """A certificate handed back to its issuer: a note paid to the treasury, a print returned
    to the mint for an upgrade (L-20). The chain of ``issue`` is history from then on."""

    issue: int
    index: int = Field(description="The returning event's seq in the issuer's log")
    notarized: int = Field(description="The seq of the notary's record of the hop back")
    purchase_id: str


class HopRecord(Answer):
    """One recorded hop and its receipt."""

    endorsement: Endorsement
    receipt: Receipt


class ConflictRecord(Answer):
    """One conflict the notary refused, as its log records it."""

    index: int = Field(description="The conflict-refused event's seq in the notary's log")
    issue: int = Field(default=1, description="The issue of the certificate the chain is of")
    hop: int
    proof: FraudProof


class Provenance(Answer):
    """``GET /provenance/{serial}``: one certificate's whole life (Book V.8): a print's stamp,
    or a note's issues and returns, and every hop and conflict of either."""

    serial: str
    standing: Literal["stamped", "issued", "in-reserve", "outside-runs"]
    remark: str = Field(description="One sentence for a person")
    stamp: StampRecord | None
    issues: list[IssueRecord] = Field(
        default_factory=list,
        description="A note's issues, or a print's issues after its stamp, oldest first",
    )
    returns: list[ReturnRecord] = Field(
        default_factory=list, description="Returns to the issuer, oldest first"
    )
    hops: list[HopRecord]
    conflicts: list[ConflictRecord]
    holder: str | None = Field(description="The current holder's key, as far as the notary knows")
    holder_address: str | None


#: Most rows one page of ``GET /notary/holders`` answers.
MAX_HOLDERS_PAGE = 1000


class HolderRow(Answer):
    """Who holds one item as far as the notary's projection knows: the latest recorded hop."""

    serial: str
    issue: int = Field(ge=0, description="The issue of the certificate its latest hop is of")
    hops: int = Field(ge=0, description="Hops recorded of that issue")
    holder: str = Field(description="The key the latest recorded hop moved it to")


class Holders(Answer):
    """``GET /notary/holders``: a page of the notary's holders projection, in byte order of
    serial, read in one snapshot with the size of the notary's log it reflects (an auditor
    compares each row with the holder it derives from the log's first ``log_size`` events)."""

    holders: list[HolderRow] = Field(max_length=MAX_HOLDERS_PAGE)
    log_size: int = Field(ge=0, description="Events of the notary's log this page reflects")
    next_after: str | None = Field(
        description="Pass as ?after= to read the following page; null on the last page"
    )
