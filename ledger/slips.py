"""Slips: the armored text that carries whole chains from sender to receiver (Book V.6).

A slip holds, for each print or note sent, its whole chain: the certificate and every
endorsement, the last one to the receiver. Nothing in it is trusted: the receiver verifies every
chain offline (``verify_league_chain``), checks it ends at their key and checks it against
their seen-registry before admitting anything. A slip names each serial once.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.armor import SLIP
from ledger.endorsements import Chain
from ledger.limits import MAX_CHAINS_PER_SLIP
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
