"""Slips: the armored text that carries whole chains from sender to receiver (Book V.6).

A slip holds, for each print or note sent, its whole chain: the certificate and every
endorsement, the last one to the receiver. Nothing in it is trusted: :func:`receive_slip` is
the import rule of docs/architecture.md §3 — verify every signature offline, check every chain ends
at the receiver's key, check the seen-registry — and admits all of the slip or none of it.
A slip names each serial once.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.address import address_of
from ledger.armor import SLIP
from ledger.endorsements import Chain, verify_league_chain
from ledger.errors import ChainError, FraudDetected
from ledger.fraud import SeenRegistry
from ledger.keys import PublicKey
from ledger.limits import MAX_CHAINS_PER_SLIP
from ledger.manifest import LeagueManifest
from ledger.wire import ArmoredModel, WireTuple


class Slip(ArmoredModel):
    """Whole chains for the items sent, armored as ``CZ SLIP``."""

    KIND: ClassVar[str] = "slip"
    LABEL: ClassVar[str] = SLIP
    WHAT = "slip"

    kind: Literal["slip"] = "slip"
    chains: Annotated[
        tuple[Chain, ...], WireTuple, Field(min_length=1, max_length=MAX_CHAINS_PER_SLIP)
    ]

    @model_validator(mode="after")
    def _each_serial_once(self) -> Self:
        if len({chain.serial for chain in self.chains}) != len(self.chains):
            raise ValueError("a slip carries each serial once")
        return self


def receive_slip(
    slip: Slip, manifest: LeagueManifest, receiver: PublicKey, registry: SeenRegistry
) -> tuple[Chain, ...]:
    """Admit every chain of ``slip`` for ``receiver``, or none of them.

    Each chain must verify under ``manifest`` and end at ``receiver``; then no hop may
    disagree with ``registry``. On a conflict nothing is recorded and :class:`FraudDetected`
    carries the proofs to keep; otherwise the registry records every hop and the chains are
    returned for the wallet to hold.
    """
    for chain in slip.chains:
        holder = verify_league_chain(chain, manifest)
        if holder != receiver:
            raise ChainError(
                f"{chain.serial} is endorsed to {address_of(holder)}, not to "
                f"{address_of(receiver)}: it is not yours to take"
            )
    proofs = tuple(proof for chain in slip.chains for proof in registry.conflicts(chain))
    if proofs:
        raise FraudDetected(
            f"refused: {proofs[0].describe()}"
            + (f" (and {len(proofs) - 1} more conflicts)" if len(proofs) > 1 else ""),
            proofs,
        )
    for chain in slip.chains:
        registry.admit(chain)
    return slip.chains
