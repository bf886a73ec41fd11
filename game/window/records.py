"""Table records: a deal plus the actions in notation, which replay to the same position.

A record (docs/formats.md, "Table records") is JSON::

    {"format": "cz-table-record/1",
     "deal": {"table": "market", "seed": 7},
     "actions": ["build Escrow", "build Pairing", "build Separation", "collect", ...]}

``deal`` is either a seeded convening (``base`` or ``market`` with ``seed``) or an explicit
deal (``table: "deal"`` with ``hands``, ``market``, ``aside``). Replaying refuses the first
illegal action with :class:`IllegalActionError` (its turn and the rule that forbids it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from game.window.convening import from_deal, new_base_table, new_market_table
from game.window.errors import IllegalActionError, NotationError
from game.window.notation import MAX_ACTION_CHARS, parse_action
from game.window.state import State
from ledger.errors import SchemaError

FORMAT = "cz-table-record/1"
MAX_ACTIONS = 10_000
MAX_DEAL_CARDS = 63


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SeededDeal(_Strict):
    table: Literal["base", "market"]
    seed: int = Field(ge=0, lt=2**63)


class ExplicitDeal(_Strict):
    table: Literal["portfolio", "deal"]
    hands: Annotated[
        list[Annotated[list[str], Field(max_length=MAX_DEAL_CARDS)]],
        Field(min_length=2, max_length=2),
    ]
    market: list[str] = Field(default_factory=list, max_length=MAX_DEAL_CARDS)
    aside: list[str] = Field(default_factory=list, max_length=MAX_DEAL_CARDS)


class Record(_Strict):
    format: Literal["cz-table-record/1"]
    deal: Annotated[SeededDeal | ExplicitDeal, Field(discriminator="table")]
    actions: list[Annotated[str, Field(max_length=MAX_ACTION_CHARS)]] = Field(
        max_length=MAX_ACTIONS
    )


def parse_record(data: Any) -> Record:
    """The record ``data`` holds; :class:`SchemaError` if it is not one."""
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "record"
        raise SchemaError(f"not a table record: {where}: {first['msg']}") from None


def convene(deal: SeededDeal | ExplicitDeal) -> State:
    """The opening position of ``deal``."""
    if isinstance(deal, SeededDeal):
        return (new_base_table if deal.table == "base" else new_market_table)(deal.seed)
    return from_deal(deal.hands, deal.market, deal.aside, kind=deal.table)


def replay(record: Record) -> State:
    """The position after every action of ``record``, each checked against the rules."""
    state = convene(record.deal)
    for text in record.actions:
        try:
            action = parse_action(state, text)
        except NotationError as exc:
            raise IllegalActionError(text, state.turn + 1, exc.diagnostics()) from None
        state.apply(action)
    return state


def record_json(deal: SeededDeal | ExplicitDeal, actions: list[str]) -> dict[str, Any]:
    """A record of ``deal`` and ``actions`` (in notation, as :func:`format_action` wrote them)."""
    return {"format": FORMAT, "deal": deal.model_dump(), "actions": list(actions)}
