"""Ledger cards: the armored public key a player hands out to be paid (Book V.6).

A card holds only the public key and its address (DESIGN §3). The address is for people to
read and compare; the key is what an endorsement is made out to. A card whose address is not
the address of its key is refused.
"""

from __future__ import annotations

import hmac
from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.address import address_of
from ledger.armor import LEDGER_CARD
from ledger.keys import PublicKey
from ledger.wire import ArmoredModel, KeyText


class LedgerCard(ArmoredModel):
    """A public key and its address, armored as ``CZ LEDGER CARD``."""

    KIND: ClassVar[str] = "ledger-card"
    LABEL: ClassVar[str] = LEDGER_CARD
    WHAT = "ledger card"

    kind: Literal["ledger-card"] = "ledger-card"
    key: KeyText
    address: Annotated[str, Field(max_length=17)]

    @model_validator(mode="after")
    def _address_is_the_keys(self) -> Self:
        if not hmac.compare_digest(self.address, address_of(self.public_key)):
            raise ValueError("the card's address is not the address of its key")
        return self

    @property
    def public_key(self) -> PublicKey:
        return PublicKey.from_text(self.key)

    @classmethod
    def for_key(cls, key: PublicKey) -> LedgerCard:
        """The card of ``key``."""
        return cls(key=key.to_text(), address=address_of(key))
