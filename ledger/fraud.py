"""Fraud proofs and the seen-registry (docs/architecture.md §3, Book V.6 and V.7).

A fraud proof is two valid, different endorsements of one serial at one hop, following the same
previous link, both signed by one key: that key signed the same item away twice, and its own
signatures convict it. Anyone can check one offline with :meth:`FraudProof.verify`.

Both endorsements must name the same ``prev``, not only the same serial and hop: a note that
returns to the treasury is re-issued as a fresh certificate, and the treasury then signs hop 1
of the new issue, a different chain whose hop 1 follows a different certificate. That is not
fraud, and a proof that ignored ``prev`` would convict an honest issuer.

The seen-registry is what a wallet remembers of every endorsement it has seen, keyed by
(serial, hop, prev); importing a chain that disagrees with it yields the proof.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from ledger.address import address_of
from ledger.endorsements import Chain, Endorsement
from ledger.errors import BadSignatureError, InvalidFraudProofError, SchemaError
from ledger.keys import PublicKey
from ledger.wire import KindedModel, WireTuple, hash_text


class FraudProof(KindedModel):
    """Two conflicting endorsements by one key: ``first`` as seen first, then ``second``."""

    KIND: ClassVar[str] = "fraud-proof"
    WHAT = "fraud proof"

    kind: Literal["fraud-proof"] = "fraud-proof"
    first: Endorsement
    second: Endorsement

    def verify(self) -> PublicKey:
        """Return the convicted key; raise :class:`InvalidFraudProofError` unless it is fraud."""
        a, b = self.first, self.second
        if (a.serial, a.hop, a.prev) != (b.serial, b.hop, b.prev):
            raise InvalidFraudProofError(
                "the two endorsements are not of the same serial, hop and previous link"
            )
        if a.from_ != b.from_:
            raise InvalidFraudProofError("the two endorsements are signed by different keys")
        if hmac.compare_digest(a.hash(), b.hash()):
            raise InvalidFraudProofError("the two endorsements are one and the same")
        signer = PublicKey.from_text(a.from_)
        for which, endorsement in (("first", a), ("second", b)):
            try:
                endorsement.verify(signer)
            except BadSignatureError:
                raise InvalidFraudProofError(
                    f"the {which} endorsement's signature does not verify"
                ) from None
        return signer

    def describe(self) -> str:
        """One sentence a person reads."""
        first, second = self.first, self.second
        return (
            f"{first.serial} was signed away twice at hop {first.hop} by "
            f"{address_of(PublicKey.from_text(first.from_))}: to "
            f"{address_of(PublicKey.from_text(first.to))} and to "
            f"{address_of(PublicKey.from_text(second.to))}"
        )


SeenKey = tuple[str, int, str]


def _seen_key(endorsement: Endorsement) -> SeenKey:
    return (endorsement.serial, endorsement.hop, endorsement.prev)


class SeenRegistry:
    """Every endorsement a wallet has seen, one per (serial, hop, prev).

    Feed it only chains that :func:`~ledger.endorsements.verify_chain` accepted: it compares
    hashes, it does not check signatures.
    """

    WHAT = "seen-registry"

    __slots__ = ("_seen",)

    def __init__(self, endorsements: Iterable[Endorsement] = ()) -> None:
        self._seen: dict[SeenKey, Endorsement] = {}
        for endorsement in endorsements:
            key = _seen_key(endorsement)
            if key in self._seen:
                raise SchemaError("a seen-registry lists one endorsement per serial, hop and prev")
            self._seen[key] = endorsement

    def __len__(self) -> int:
        return len(self._seen)

    def hash_at(self, serial: str, hop: int, prev: str) -> bytes | None:
        """The hash of the endorsement seen at this position, if any."""
        seen = self._seen.get((serial, hop, prev))
        return seen.hash() if seen is not None else None

    def after(self, chain: Chain) -> Endorsement | None:
        """The endorsement seen at the hop after ``chain``'s end, following its last link:
        the item moved on from where ``chain`` leaves it (this wallet sent it away, or saw it
        sent), so ``chain`` is history here: held again, its holder would sign that hop
        twice (L-05)."""
        links = chain.endorsements
        prev = hash_text(links[-1].hash() if links else chain.certificate.hash())
        return self._seen.get((chain.serial, len(links) + 1, prev))

    def conflicts(self, chain: Chain) -> tuple[FraudProof, ...]:
        """A fraud proof for every hop of ``chain`` that disagrees with what was seen."""
        proofs = []
        for endorsement in chain.endorsements:
            seen = self._seen.get(_seen_key(endorsement))
            if seen is not None and not hmac.compare_digest(seen.hash(), endorsement.hash()):
                proofs.append(FraudProof(first=seen, second=endorsement))
        return tuple(proofs)

    def admit(self, chain: Chain) -> tuple[FraudProof, ...]:
        """Record ``chain``'s endorsements, unless one conflicts: then record nothing and
        return the proofs (the import is refused and the proofs kept)."""
        proofs = self.conflicts(chain)
        if not proofs:
            for endorsement in chain.endorsements:
                self._seen.setdefault(_seen_key(endorsement), endorsement)
        return proofs

    def to_wire(self) -> dict[str, Any]:
        return {
            "kind": self.WHAT,
            "endorsements": [e.to_wire() for e in self._seen.values()],
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | str | bytes) -> SeenRegistry:
        return cls(_SeenRegistryWire.from_wire(data).endorsements)


class _SeenRegistryWire(KindedModel):
    KIND: ClassVar[str] = "seen-registry"
    WHAT = "seen-registry"

    kind: Literal["seen-registry"]
    endorsements: Annotated[tuple[Endorsement, ...], WireTuple]
