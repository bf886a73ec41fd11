"""Signed requests a player's key makes to a league service: the stamp request.

A request is a protocol object, signed by the owner's key under its own domain kind, so the
player's client (``cz``) builds and signs it here and the service verifies it here too.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.endorsements import UnixTime
from ledger.limits import MAX_STAMP_BATCH
from ledger.manifest import LeagueId
from ledger.print_runs import RunFinish, TitleText
from ledger.wire import MAX_SAFE_INTEGER, HashText, KeyText, SignedModel, WireModel, WireTuple

#: A proof-of-work nonce on the wire: hashed as an 8-byte unsigned integer, and within the
#: integers canonical JSON carries exactly (±(2**53 − 1), ``ledger.canonical``), so a nonce the
#: schema admits is never refused later as not canonicalizable.
Nonce = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]

#: A client's name for one request: letters, digits, ``.``, ``_``, ``-`` (a UUID fits).
RequestId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{8,64}$")]


class PrintOrder(WireModel):
    """One unstamped print presented for stamping: which title, in which finish."""

    WHAT = "presented print"

    title: TitleText
    finish: RunFinish


class StampRequest(SignedModel):
    """Unstamped prints presented by their owner, signed by the owner's key."""

    KIND: ClassVar[str] = "stamp-request"
    WHAT = "stamp request"

    kind: Literal["stamp-request"]
    #: The league id and the hash of its manifest: a request for another league is refused.
    league: LeagueId
    manifest: HashText
    #: Unique per owner: a replay answers the same certificates and stamps nothing new.
    request_id: RequestId
    #: Unix seconds when the owner signed; too far from the mint's clock is refused as stale.
    time: UnixTime
    #: The key the certificates are issued to; it signs this request.
    owner: KeyText
    prints: Annotated[
        tuple[PrintOrder, ...], WireTuple, Field(min_length=1, max_length=MAX_STAMP_BATCH)
    ]
    #: One proof-of-work nonce per print, in order (``ledger.work``): the cost of drawing
    #: supply down, bound to everything above.
    work: Annotated[tuple[Nonce, ...], WireTuple, Field(min_length=1, max_length=MAX_STAMP_BATCH)]

    @model_validator(mode="after")
    def _one_nonce_per_print(self) -> Self:
        if len(self.work) != len(self.prints):
            raise ValueError(
                f"work holds {len(self.work)} nonces for {len(self.prints)} prints: one each"
            )
        return self
