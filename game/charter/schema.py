"""The JSON schemas of card sets, charters and decks (docs/charter.md, "Cards as data").

These models check shape and types only (strict: no coercion, no unknown field); the rules a
shape cannot say — which attributes a card type carries, which kind each keyword is, the gutter
rule, names that resolve — are checked by :mod:`game.charter.cards` and
:mod:`game.charter.charters`, which turn every fault into one :class:`CardDataError` sentence.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.charter.errors import CardDataError

CARDS_FORMAT = "charter-cards/1"
CHARTER_FORMAT = "charter-charter/1"
DECK_FORMAT = "charter-deck/1"
MAX_CARDS_IN_SET = 200
MAX_DECK = 120
MAX_ABILITIES = 6
MAX_REQUIREMENTS = 12

#: Card and identity names: one word, so that the action notation can quote them bare.
Name = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9'-]{0,31}$")]
Small = Annotated[int, Field(ge=0, le=99)]
CardType = Literal["location", "structure", "object", "entity", "edict"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CardClass(_Strict):
    """A class of cards: a target, a host, a consume qualification or a static term."""

    types: list[CardType] | None = None
    controller: Literal["you", "other", "any"] = "any"
    name: Name | None = None
    anchored: bool | None = None
    committed: bool | None = None
    min_value: Small = 0
    zone: Literal["board", "stack", "hand"] = "board"


class Price(_Strict):
    """A cost in any of its shapes: resources, consumed cards, commitment, a manifest use."""

    named: list[Name] = Field(default_factory=list, max_length=MAX_REQUIREMENTS)
    additional: Small = 0
    consume: list[CardClass] = Field(default_factory=list, max_length=4)
    commit: bool = False
    manifest: bool = False


class Effect(_Strict):
    do: Literal[
        "damage", "destroy", "draw", "add", "control", "return", "release", "counter",
        "repair", "modify", "withhold",
    ]  # fmt: skip
    target: Literal["self", "host", "opponents"] | CardClass | None = None
    amount: Small = 0
    identity: Name | None = None
    strength: int = Field(default=0, ge=-9, le=9)
    resilience: int = Field(default=0, ge=-9, le=9)
    integrity: int = Field(default=0, ge=-9, le=9)
    extent: int = Field(default=0, ge=-9, le=9)


class Ability(_Strict):
    kind: Literal["triggered", "activated", "transactional", "static"]
    keyword: Literal["Interrupt", "Affix", "Attach", "Grant", "Free"] | None = None
    speed: Literal["standard", "interrupt", "reserve"] | None = None
    trait: Literal["transactional", "interrupt", "reserve"] | None = None
    trigger: Literal["enters", "leaves", "turn_start", "attacks", "blocks", "releases"] | None = (
        None
    )
    price: Price | None = None
    effect: Effect | None = None
    host: CardClass | None = None
    target: CardClass | None = None
    granted: Ability | None = None
    complexity: Small | None = None


class Obligation(_Strict):
    price: Price
    consequence: Effect | None = None


class Card(_Strict):
    name: Name
    type: CardType
    complexity: Small
    strength: Small | None = None
    resilience: Small | None = None
    integrity: Small | None = None
    extent: Small | None = None
    size: Small | None = None
    price: Price
    produces: list[Name] = Field(default_factory=list, max_length=4)
    maintenance: Obligation | None = None
    abilities: list[Ability] = Field(default_factory=list, max_length=MAX_ABILITIES)
    text: str = Field(default="", max_length=400)


class Identity(_Strict):
    name: Name
    tier: Annotated[int, Field(ge=1, le=8)]


class CardSet(_Strict):
    format: Literal["charter-cards/1"]
    name: Name
    identities: list[Identity] = Field(min_length=1, max_length=16)
    cards: list[Card] = Field(min_length=1, max_length=MAX_CARDS_IN_SET)


class ManifestGrant(_Strict):
    per_turn: Annotated[int, Field(ge=1, le=9)]
    complexity: Annotated[int, Field(ge=1, le=99)]
    eligible: list[CardType] | None = None


class Charter(_Strict):
    format: Literal["charter-charter/1"]
    name: Name
    card_set: Name
    cards: list[Name] | Literal["all"]
    deck_size: Annotated[int, Field(ge=1, le=MAX_DECK)]
    complexity: Annotated[int, Field(ge=0, le=10_000)]
    manifest: ManifestGrant | None = None
    format_line: str = Field(max_length=200)


class Deck(_Strict):
    format: Literal["charter-deck/1"]
    name: Name
    charter: Name
    cards: dict[Name, Annotated[int, Field(ge=1, le=MAX_DECK)]] = Field(max_length=MAX_DECK)


def describe(exc: ValidationError, what: str, data: Any) -> str:
    """The first fault of ``exc`` as one sentence, naming the card by name where it can."""
    first = exc.errors(include_url=False)[0]
    loc = list(first["loc"])
    where = what
    if len(loc) >= 2 and loc[0] == "cards" and isinstance(loc[1], int):
        try:
            where += f" card {data['cards'][loc[1]]['name']!r}"
        except (KeyError, IndexError, TypeError):
            where += f" card #{loc[1]}"
        loc = loc[2:]
    path = ".".join(str(part) for part in loc)
    more = exc.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    message = str(first["msg"]).removeprefix("Value error, ")[:200]
    return f"{where}{': ' + path if path else ''}: {message}{tail}"


def parse_model(model: type[_Strict], data: Any, what: str) -> Any:
    """``data`` as ``model``; :class:`CardDataError` with one sentence if it is not one."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise CardDataError(describe(exc, what, data)) from None
