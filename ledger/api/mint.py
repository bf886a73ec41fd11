"""What the mint's API answers, as pydantic models.

The request it reads, the owner-signed stamp request, is a protocol object: ``ledger.requests``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ledger.certificates import PrintCertificate
from ledger.print_runs import RunFinish, SetName


class Answer(BaseModel):
    """Base of the mint's answers: plain JSON, unknown fields refused when parsed back."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Stamped(Answer):
    """A presented print the mint stamped: its certificate, signed by the mint."""

    status: Literal["stamped"] = "stamped"
    title: str
    finish: RunFinish
    certificate: PrintCertificate


class Refused(Answer):
    """A presented print the mint could not stamp; the rest of the batch is unaffected."""

    status: Literal["refused"] = "refused"
    title: str
    finish: RunFinish
    problem: str = Field(description="Problem slug, e.g. run-exhausted or allowance-exhausted")
    reason: str


class Allowance(Answer):
    """The published daily stamping allowance of one key, and what is left of it today."""

    per_day: int
    used_today: int
    remaining_today: int
    day: str = Field(description="The UTC day counted, YYYY-MM-DD")
    resets_at: int = Field(description="Unix seconds of the next UTC midnight")


#: One item of a stamp answer: stamped or refused.
Item = Annotated[Stamped | Refused, Field(discriminator="status")]
ITEMS: TypeAdapter[list[Item]] = TypeAdapter(list[Item])


class StampAnswer(Answer):
    """The answer to a stamp request, item by item in the order presented."""

    request_id: str
    replayed: bool = Field(description="True when this answer repeats an earlier one")
    items: list[Item]
    allowance: Allowance


class FinishCount(Answer):
    """One finish of one title's run."""

    size: int
    stamped: int
    remaining: int


class TitleCensus(Answer):
    """One title: its set, its rarity and each finish's run."""

    title: str
    set: SetName
    rarity: str
    finishes: dict[RunFinish, FinishCount]


class Census(Answer):
    """``GET /ledger``: every title's runs, the totals and the mint log's latest checkpoint."""

    league: str
    manifest: str
    titles: list[TitleCensus]
    totals: dict[RunFinish | Literal["all"], FinishCount]
    checkpoint: str = Field(description="The mint log's latest signed checkpoint (C2SP note)")

    def runs(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(size, stamped) of every run by (title, finish): what prices a print's proof of
        work (``ledger.work.request_work``)."""
        return {
            (title.title, finish): (count.size, count.stamped)
            for title in self.titles
            for finish, count in title.finishes.items()
        }


class OwnedCount(Answer):
    """How many prints of one title and finish the mint has stamped to a key."""

    title: str
    finish: RunFinish
    owned: int


class KeyHoldings(Answer):
    """What the mint has stamped to one key, and that key's allowance today."""

    key: str
    owned: list[OwnedCount]
    total: int
    allowance: Allowance


class OwnerCensus(Answer):
    """``GET /ledger/owners/{address}``: what the mint has stamped to the keys of an address.

    An address is a short id of a key, not the key: almost always one key answers, but two
    keys may share an address, so each is listed apart.
    """

    address: str
    keys: list[KeyHoldings]
