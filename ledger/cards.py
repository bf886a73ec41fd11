"""Ledger cards: the armored public key a player hands out to be paid (Book V.6).

A card holds only the public key and its address (docs/architecture.md §3). The address is for
people to
read and compare; the key is what an endorsement is made out to. A card whose address is not
the address of its key is refused.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.address import address_of
from ledger.armor import LEDGER_CARD
from ledger.keys import PublicKey
from ledger.wire import ArmoredModel, KeyText

_SYMBOL = "[0-9A-HJKMNP-TV-Z]"
_CANONICAL_ADDRESS = rf"^CZ-{_SYMBOL}{{4}}-{_SYMBOL}{{4}}-{_SYMBOL}{{4}}$"


class LedgerCard(ArmoredModel):
    """A public key and its address, armored as ``CZ LEDGER CARD``."""

    KIND: ClassVar[str] = "ledger-card"
    LABEL: ClassVar[str] = LEDGER_CARD
    WHAT = "ledger card"

    kind: Literal["ledger-card"] = "ledger-card"
    key: KeyText
    #: The canonical spelling only (ASCII): lenient reading is for what people type.
    address: Annotated[str, Field(pattern=_CANONICAL_ADDRESS)]

    @model_validator(mode="after")
    def _address_is_the_keys(self) -> Self:
        # Plain equality: both are public, and compare_digest refuses non-ASCII text.
        if self.address != address_of(self.public_key):
            raise ValueError("the card's address is not the address of its key")
        return self

    @property
    def public_key(self) -> PublicKey:
        return PublicKey.from_text(self.key)

    @classmethod
    def for_key(cls, key: PublicKey) -> LedgerCard:
        """The card of ``key``."""
        return cls(key=key.to_text(), address=address_of(key))
