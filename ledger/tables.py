"""Witnessed tables: the signed requests a player makes to the tables service, the events of its
log, and the fair deal (docs/formats.md, "Witnessed tables").

A table is one stream of the tables service's log, ``table/<id>``:

1. ``table-opened``: the player's signed :class:`TableOpen` (the venue), and the service's
   **commitment** to a secret it drew for the table: ``SHA-256("CZ1/table-commitment\\n" ‖
   table id ‖ "\\n" ‖ secret)``. The table's id is the first 16 bytes (hex) of the request's
   hash, so the same request opens the same table. At a Registrar's venue the request brings
   the player's portfolio, eight stamped prints (``ledger.portfolios``), and the deal is
   convened from it.
2. ``table-dealt``: the player's signed :class:`TableSeed`, which names the commitment it saw
   and brings 32 bytes of its own; the deal (hands and market) as the service convened it from
   the **deal seed**, ``SHA-256("CZ1/table-deal\\n" ‖ table id ‖ "\\n" ‖ secret ‖ player's
   seed)``'s first 8 bytes as a big-endian integer, shifted right once (63 bits). Neither side
   chose it: the service was bound to its secret before the player's seed existed, and the
   player did not know the secret when it chose its seed.
3. ``move-played``, one per move of the player: its signed :class:`TableMove` (the ply it
   answers and the action in the notation of docs/formats.md), and every action taken until the
   player decides again or the table closes: the player's own first, then the opponent's
   replies, which the service computes with the same seeded search as an offline table
   (``game.window.witnessed``).
4. ``table-closed``: the secret revealed (anyone checks it against the commitment, derives the
   deal seed and replays the table), the player's verdict and both seats' columns.

The secret is ``HMAC-SHA256(service key seed, "CZ1/table-secret\\n" ‖ league ‖ "/" ‖ table
id)``: the service keeps nothing to keep it, and nobody without its key can compute it.

Everything here is pure: the requests are protocol objects signed under their own domain kind
(``ledger.canonical``), the events are :class:`~ledger.events.EventBody` models.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ledger.certificates import PrintCertificate
from ledger.encoding import decode_b64url
from ledger.endorsements import UnixTime
from ledger.events import EventBody
from ledger.keys import SigningKey
from ledger.manifest import LeagueId, Policies
from ledger.portfolios import MAX_PORTFOLIO_ITEMS, PORTFOLIO_DUEL, REGISTRAR_VENUES
from ledger.print_runs import TitleText
from ledger.requests import Nonce, RequestId
from ledger.wire import HashText, KeyText, SignedModel, WireModel, WireTuple, hash_text

#: A table's id: 32 lower-case hex digits (16 bytes of its opening request's hash).
TableId = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
#: The venues a witnessed table convenes at (Book IV): a clerk's base table, the Assessor's
#: and the Standing Table's market tables, and a Registrar's portfolio table, convened from the
#: player's eight stamped prints (IV.3, IV.5; ``ledger.portfolios``).
VENUES = (
    "clerk-1",
    "clerk-2",
    "clerk-3",
    "clerk-4",
    "assessor",
    *REGISTRAR_VENUES,
    *(
        f"chair-{r}"
        for r in ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
    ),
)
#: The venues of a duel (two keys at one table, no AI): a base table, a market table, and a
#: portfolio table dealt from both players' prints (``ledger.portfolios``).
DUEL_VENUES = ("duel-base", "duel-market", PORTFOLIO_DUEL)
VenueText = Annotated[str, Field(pattern="^(" + "|".join(VENUES) + ")$")]
#: Where a table opens: a venue with its AI, or a duel's.
TableVenueText = Annotated[str, Field(pattern="^(" + "|".join((*VENUES, *DUEL_VENUES)) + ")$")]
#: Most actions of one table (a table closes within 60 turns; decisions inside actions and
#: drills add a few): a bound on what a table's replay reads.
MAX_TABLE_ACTIONS = 1_000
#: Longest action text of a move (the notation's, ``game.window.notation``).
MAX_ACTION_CHARS = 80
#: Most actions one ``move-played`` event lists: the player's and the replies up to its next
#: decision.
MAX_ACTIONS_PER_MOVE = 200
#: The seat the player sits at (first, I.5, as at an offline table) and the opponent's.
PLAYER_SEAT = 0
OPPONENT_SEAT = 1

#: A duel's join code: 8 characters of 32 without look-alikes (no 0, 1, I, O): 40 bits.
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8
CodeText = Annotated[str, Field(pattern=r"^[2-9A-HJ-NP-Z]{8}$")]

#: The certificates a player brings to a portfolio table (checked by ``ledger.portfolios``).
Portfolio = Annotated[
    tuple[PrintCertificate, ...], WireTuple, Field(max_length=MAX_PORTFOLIO_ITEMS)
]
ActionText = Annotated[str, Field(min_length=1, max_length=MAX_ACTION_CHARS)]
Ply = Annotated[int, Field(ge=0, le=MAX_TABLE_ACTIONS)]
Column = Annotated[int, Field(ge=0, le=1_000)]

_COMMITMENT = b"CZ1/table-commitment\n"
_DEAL = b"CZ1/table-deal\n"
_SECRET = b"CZ1/table-secret\n"
_DUEL_DEAL = b"CZ1/duel-deal\n"
_DUEL_CODE = b"CZ1/duel-code\n"
SECRET_SIZE = 32


# -- requests ----------------------------------------------------------------------------------


class TableOpen(SignedModel):
    """A player asks for a table at a venue, signed by the player's ledger key."""

    KIND: ClassVar[str] = "table-open"
    WHAT = "table-open request"

    kind: Literal["table-open"]
    league: LeagueId
    manifest: HashText
    #: The player's name for the request (two tables opened in one second differ by it).
    request_id: RequestId
    #: Unix seconds when the player signed; too far from the service's clock is stale.
    time: UnixTime
    player: KeyText
    venue: TableVenueText
    #: The proof of work a rewarded table costs (docs/economy.md, L-28): a nonce bound to this
    #: request (``ledger.work.challenge``, index 0) worth ``game.window.rewards.table_work``
    #: of the venue. Without it the table is played and recorded, and pays nothing. Absent
    #: from the request when None.
    work: Nonce | None = Field(default=None, exclude_if=lambda work: work is None)
    #: At a Registrar's venue, the player's portfolio: eight stamped prints of distinct titles
    #: it holds (IV.3, ``ledger.portfolios``); absent at every other venue.
    portfolio: Portfolio | None = Field(
        default=None, exclude_if=lambda portfolio: portfolio is None
    )

    def table_id(self) -> str:
        """The id of the table this request opens: 16 bytes of its hash, in hex."""
        return self.hash()[:16].hex()


class TableSeed(SignedModel):
    """The player's half of the deal, sent once the service has committed to its own."""

    KIND: ClassVar[str] = "table-seed"
    WHAT = "table-seed request"

    kind: Literal["table-seed"]
    league: LeagueId
    manifest: HashText
    table: TableId
    time: UnixTime
    player: KeyText
    #: The commitment the player saw in the open answer: its seed is bound to it.
    commitment: HashText
    #: 32 bytes the player drew (base64url).
    seed: HashText


class TableJoin(SignedModel):
    """A second key takes the other seat of a duel, naming the join code its opener was
    given (docs/formats.md, "Duels")."""

    KIND: ClassVar[str] = "table-join"
    WHAT = "table-join request"

    kind: Literal["table-join"]
    league: LeagueId
    manifest: HashText
    time: UnixTime
    player: KeyText
    code: CodeText
    #: At a portfolio duel, the joiner's portfolio: eight stamped prints of distinct titles it
    #: holds (IV.3, ``ledger.portfolios``); absent at every other duel.
    portfolio: Portfolio | None = Field(
        default=None, exclude_if=lambda portfolio: portfolio is None
    )


class TableMove(SignedModel):
    """One move: ``action`` at ply ``ply`` (the number of actions the table has taken before
    it), signed by the key at the seat that decides (at a duel, either player's, as the engine
    says). At a No-Go drill of a human the action is the answer, three rows of 0/1
    (``101/010/001``), judged by the service's clock."""

    KIND: ClassVar[str] = "table-move"
    WHAT = "table-move request"

    kind: Literal["table-move"]
    league: LeagueId
    manifest: HashText
    table: TableId
    time: UnixTime
    player: KeyText
    ply: Ply
    action: ActionText


class MisprintAward(SignedModel):
    """The tables service asks the mint for the Misprint for the tables log's first settling
    Balance at Chair VI or above (Book IV.6, docs/rulings.md L-41), signed by the tables
    key; the mint awards it once, to the first table it is asked for (V.8), and answers every
    later award that it is gone."""

    KIND: ClassVar[str] = "misprint-award"
    WHAT = "Misprint award"

    kind: Literal["misprint-award"]
    league: LeagueId
    manifest: HashText
    #: The table whose close was the Balance, and its player (who gets the certificate).
    table: TableId
    player: KeyText
    venue: VenueText


#: The Chairs whose Balance wins the Misprint (IV.6: "your first Balance at Chair VI or above").
MISPRINT_CHAIRS = VENUES[VENUES.index("chair-VI") :]


def wins_misprint(venue: str, verdict: str) -> bool:
    """Whether a table at ``venue`` closed with the player's ``verdict`` is a Balance at Chair
    VI or above: one that wins the Misprint if it settles and the Misprint is still to be had
    (L-41)."""
    return verdict == "balance" and venue in MISPRINT_CHAIRS


# -- events ------------------------------------------------------------------------------------


def table_stream(table: str) -> str:
    """The tables service's stream of one table: opened, dealt, its moves, closed."""
    return f"table/{table}"


class TableOpened(EventBody):
    """A table opened for a player, and the service's commitment to its secret."""

    TYPE: ClassVar[str] = "table-opened"
    WHAT = "table-opened event"

    table: TableId
    request: TableOpen
    commitment: HashText

    def stream(self) -> str:
        return table_stream(self.table)


class TableJoined(EventBody):
    """A duel's second key seated (seat 1), by its signed :class:`TableJoin`."""

    TYPE: ClassVar[str] = "table-joined"
    WHAT = "table-joined event"

    table: TableId
    request: TableJoin

    def stream(self) -> str:
        return table_stream(self.table)


class TableSeeded(EventBody):
    """A duel's first seed taken (either player's): the deal waits for the other's."""

    TYPE: ClassVar[str] = "table-seeded"
    WHAT = "table-seeded event"

    table: TableId
    request: TableSeed

    def stream(self) -> str:
        return table_stream(self.table)


class Deal(WireModel):
    """The deal as convened: each seat's hand and the market (titles as printed)."""

    WHAT = "deal"

    table: Literal["base", "market", "portfolio"]
    hands: Annotated[
        tuple[
            Annotated[tuple[TitleText, ...], WireTuple, Field(max_length=16)],
            Annotated[tuple[TitleText, ...], WireTuple, Field(max_length=16)],
        ],
        WireTuple,
    ]
    market: Annotated[tuple[TitleText, ...], WireTuple, Field(max_length=16)]


class TableDealt(EventBody):
    """The player's seed taken and the table dealt from both halves."""

    TYPE: ClassVar[str] = "table-dealt"
    WHAT = "table-dealt event"

    table: TableId
    request: TableSeed
    deal: Deal

    def stream(self) -> str:
        return table_stream(self.table)


class MovePlayed(EventBody):
    """One move and what followed it: ``actions`` in notation, the mover's first (a drill
    answer recorded as its judged outcome), then the AI's, up to a human's next decision or
    the close (at a duel, the move alone). ``arrived``: when the request reached the service
    (Unix milliseconds, its clock read first): the move clock and a drill are judged on it."""

    TYPE: ClassVar[str] = "move-played"
    WHAT = "move-played event"

    table: TableId
    ply: Ply
    request: TableMove
    actions: Annotated[
        tuple[ActionText, ...], WireTuple, Field(min_length=1, max_length=MAX_ACTIONS_PER_MOVE)
    ]
    #: Absent from moves recorded before arrival times were (their recorded_at stands).
    arrived: Annotated[int, Field(ge=0)] | None = Field(
        default=None, exclude_if=lambda arrived: arrived is None
    )

    def stream(self) -> str:
        return table_stream(self.table)


class TableClosed(EventBody):
    """The table closed (I.9): the secret revealed, the player's verdict, both seats' columns
    (Substance, Form, Holdings; the player's first)."""

    TYPE: ClassVar[str] = "table-closed"
    WHAT = "table-closed event"

    table: TableId
    secret: HashText
    verdict: Literal["win", "loss", "balance"]
    columns: Annotated[
        tuple[
            Annotated[tuple[Column, Column, Column], WireTuple],
            Annotated[tuple[Column, Column, Column], WireTuple],
        ],
        WireTuple,
    ]

    def stream(self) -> str:
        return table_stream(self.table)


class TableAbandoned(EventBody):
    """The move clock ran out (docs/rulings.md L-19, L-31): the table ends without a verdict
    and settles nothing. The secret is revealed (the table as far as it went replays, a
    duel's join code checks); ``waiting`` is what it waited for and ``seat`` whose request
    (the key; none while a duel waited for its second key)."""

    TYPE: ClassVar[str] = "table-abandoned"
    WHAT = "table-abandoned event"

    table: TableId
    secret: HashText
    waiting: Literal["seed", "join", "move", "drill"]
    seat: KeyText | None = Field(default=None, exclude_if=lambda seat: seat is None)

    def stream(self) -> str:
        return table_stream(self.table)


#: The tables log's event types.
TABLES_EVENTS: Mapping[str, type[EventBody]] = {
    TableOpened.TYPE: TableOpened,
    TableJoined.TYPE: TableJoined,
    TableSeeded.TYPE: TableSeeded,
    TableDealt.TYPE: TableDealt,
    MovePlayed.TYPE: MovePlayed,
    TableClosed.TYPE: TableClosed,
    TableAbandoned.TYPE: TableAbandoned,
}


@dataclass(frozen=True, slots=True)
class DuelSeats:
    """What a duel's log records before its deal, besides the open: the second key's join and
    the first of the two seeds (``table-dealt`` brings the other)."""

    joined: TableJoined
    seeded: TableSeeded


def is_duel(venue: str) -> bool:
    """Whether a table at ``venue`` is a duel (two keys; no AI, no rewards: L-33)."""
    return venue in DUEL_VENUES


def clock_for(policies: Policies, waiting: str) -> int:
    """Seconds the move clock (docs/formats.md, "The move clock"; the manifest's published
    ``table_move_seconds`` and ``table_join_seconds``) gives a table waiting for ``waiting``
    (``join``, ``seed``, ``move``, ``drill``), from its last event; then the table is
    abandoned and settles nothing (docs/rulings.md L-19, L-31). A duel waits longer for its
    second key."""
    return policies.table_join_seconds if waiting == "join" else policies.table_move_seconds


# -- the fair deal -----------------------------------------------------------------------------


def table_secret(key: SigningKey, league: str, table: str) -> bytes:
    """The service's secret for ``table``: HMAC-SHA256 keyed by its key's seed."""
    message = _SECRET + f"{league}/{table}".encode("ascii")
    return hmac.new(key.seed, message, hashlib.sha256).digest()


def commitment(table: str, secret: bytes) -> bytes:
    """What the open event publishes of the secret: SHA-256 over a tag, the table and it."""
    return hashlib.sha256(_COMMITMENT + table.encode("ascii") + b"\n" + secret).digest()


def deal_seed(table: str, secret: bytes, player_seed: bytes) -> int:
    """The table's seed (63 bits): the deal, the opponent's decisions and the drills."""
    digest = hashlib.sha256(_DEAL + table.encode("ascii") + b"\n" + secret + player_seed).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def duel_seed(table: str, secret: bytes, seeds: tuple[bytes, bytes]) -> int:
    """A duel's seed (63 bits) from the secret and both players' seeds, the opener's (seat
    0) first whichever came first: none of the three chose it."""
    message = _DUEL_DEAL + table.encode("ascii") + b"\n" + secret + seeds[0] + seeds[1]
    return int.from_bytes(hashlib.sha256(message).digest()[:8], "big") >> 1


def duel_code(table: str, secret: bytes) -> str:
    """A duel's join code: 40 bits of ``SHA-256("CZ1/duel-code\\n" ‖ table ‖ "\\n" ‖ secret)``
    in :data:`CODE_ALPHABET`, 5 bits a character. Unknowable without the secret until the
    join records it; checkable by anyone once the secret is revealed."""
    digest = hashlib.sha256(_DUEL_CODE + table.encode("ascii") + b"\n" + secret).digest()
    bits = int.from_bytes(digest[:5], "big")
    return "".join(
        CODE_ALPHABET[(bits >> (5 * (CODE_LENGTH - 1 - i))) & 31] for i in range(CODE_LENGTH)
    )


def reveals(opened: TableOpened, secret_text: str) -> bytes:
    """The secret of ``secret_text`` if it opens ``opened``'s commitment; a ``ValueError``
    saying why not otherwise."""
    secret = decode_b64url(secret_text, length=SECRET_SIZE, what="table secret")
    expected = decode_b64url(opened.commitment, length=32, what="commitment")
    if not hmac.compare_digest(commitment(opened.table, secret), expected):
        raise ValueError(f"the secret revealed does not open table {opened.table}'s commitment")
    return secret


def seed_bytes(seed: TableSeed) -> bytes:
    """The player's 32 bytes of ``seed``."""
    return decode_b64url(seed.seed, length=SECRET_SIZE, what="player seed")


def secret_text(secret: bytes) -> str:
    return hash_text(secret)
