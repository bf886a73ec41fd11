"""A witnessed table as the player's client keeps and checks it (docs/formats.md, "Witnessed
tables"; ``cz play --league`` in ``clients.cz_witnessed``).

- :class:`KeptTable`: every request the player signs for one table, written to the wallet's
  directory (``CZ_HOME/league-tables/<table>.json``, 0600, synced, replaced whole) *before* it
  is sent. An interrupted table resumes by sending the very same signed request again, never a
  second, different one at the same ply (docs/rulings.md L-35).
- :class:`Board`: the table rebuilt here from the deal the service dealt and the actions it
  reports, each parsed and applied by the engine: an action the rules do not allow, a history
  that changes under the player, or a table waiting for something else than the engine says,
  is refused (:class:`Untrusted`) rather than drawn.
- :func:`check_reveal`: at the close, the table's own signed events checked against what the
  player signed and saw, the secret against the commitment published before the player's seed,
  and the whole table replayed from the seed both halves make
  (``game.window.witnessed.replay_table``): anything else is :class:`Unfair`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from clients.wallet import write_synced
from game.window.convening import from_deal
from game.window.errors import IllegalActionError, NotationError
from game.window.notation import parse_action
from game.window.state import CHANCE, State
from game.window.witnessed import WitnessedTable, replay_table
from ledger.api.tables import TableView
from ledger.errors import DecodeError, LedgerError, SchemaError
from ledger.events import body_as
from ledger.keys import PublicKey
from ledger.leaf import Event
from ledger.limits import KIB
from ledger.manifest import Policies
from ledger.tables import (
    PLAYER_SEAT,
    DuelSeats,
    MovePlayed,
    TableAbandoned,
    TableClosed,
    TableDealt,
    TableJoin,
    TableJoined,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
    TableSeeded,
    clock_for,
    duel_code,
    is_duel,
    reveals,
)

#: The directory of kept tables inside the wallet's home.
KEPT_DIR = "league-tables"
FORMAT = "cz-witnessed-table/1"
#: Largest kept table file read back (a table's signed moves: about 600 bytes each).
MAX_KEPT_BYTES = 2048 * KIB


class Untrusted(LedgerError):
    """The league reported something this client cannot apply: another history than the one
    it reported before, an action the rules do not allow, a view of another table or player."""


class Unfair(LedgerError):
    """The close's reveal does not check: the league did not deal (or play) fairly."""


# -- the kept requests ---------------------------------------------------------------------------


@dataclass
class KeptTable:
    """One witnessed table's signed requests, as kept in the wallet's directory: the open (the
    opener's), or at a duel the join (the second key's), then the seed and the moves."""

    path: Path
    league: str
    #: The table's id ("" while a duel's join waits for its answer) and venue.
    table_id: str
    venue: str
    #: The player's seat: 0 (the opener; every table against the AI), 1 (a duel's joiner).
    seat: int = 0
    open: TableOpen | None = None
    join: TableJoin | None = None
    #: A duel's join code, as its open's answer told the opener (shown again on resume).
    code: str | None = None
    #: The commitment the open (or join) answer showed (None until it came).
    commitment: str | None = None
    seed: TableSeed | None = None
    #: Whether the deal came.
    dealt: bool = False
    #: Every move signed, in ply order.
    moves: list[TableMove] = field(default_factory=list)
    #: How many of ``moves`` were answered (the rest, at most one, waits to be sent again).
    answered: int = 0
    closed: bool = False
    #: What the check of the reveal found at the close ("fair", "abandoned", or why not).
    checked: str | None = None
    #: Whether the table's reward is settled in the wallet (False while the league's treasury
    #: has not paid it: the next ``cz play --league`` takes it then).
    rewarded: bool = False

    @classmethod
    def opening(cls, home: Path, league: str, request: TableOpen) -> KeptTable:
        table = request.table_id()
        return cls(kept_path(home, table), league, table, request.venue, open=request)

    @classmethod
    def joining(cls, home: Path, league: str, request: TableJoin) -> KeptTable:
        path = kept_dir(home) / f"join-{request.code}.json"
        return cls(path, league, "", "duel", seat=1, join=request)

    @property
    def table(self) -> str:
        return self.table_id

    @property
    def player(self) -> str:
        """The player's key: the one that signed the open, or the join."""
        signed = self.open or self.join
        if signed is None:
            raise SchemaError(f"{self.path} keeps neither an open nor a join")
        return signed.player

    @property
    def duel(self) -> bool:
        return is_duel(self.venue) or self.join is not None

    @property
    def pending(self) -> TableMove | None:
        """The signed move whose answer never came: sent again, the very same, on resume."""
        return self.moves[-1] if len(self.moves) > self.answered else None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "league": self.league,
            "table": self.table_id,
            "venue": self.venue,
            "seat": self.seat,
            "open": None if self.open is None else self.open.to_wire(),
            "join": None if self.join is None else self.join.to_wire(),
            "code": self.code,
            "commitment": self.commitment,
            "seed": None if self.seed is None else self.seed.to_wire(),
            "dealt": self.dealt,
            "moves": [m.to_wire() for m in self.moves],
            "answered": self.answered,
            "closed": self.closed,
            "checked": self.checked,
            "rewarded": self.rewarded,
        }

    def save(self) -> None:
        """Write the file whole (a temporary file synced, then renamed over it, the directory
        synced): at every instant it is the old or the new, never a part."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=True) + "\n"
        write_synced(temporary, text)
        os.replace(temporary, self.path)
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @classmethod
    def load(cls, path: Path) -> KeptTable:
        try:
            with path.open("rb") as f:
                raw = f.read(MAX_KEPT_BYTES + 1)
        except OSError as exc:
            raise DecodeError(f"cannot read the kept table {path}: {exc.strerror}") from None
        if len(raw) > MAX_KEPT_BYTES:
            raise DecodeError(f"{path} is larger than a kept table ({MAX_KEPT_BYTES} bytes)")
        try:
            data = json.loads(raw)
            if data.get("format") != FORMAT:
                raise SchemaError(f"{path} is not a {FORMAT} file")
            seed, opened, joined = data["seed"], data.get("open"), data.get("join")
            return cls(
                path=path,
                league=str(data["league"]),
                table_id=str(data["table"]),
                venue=str(data["venue"]),
                seat=int(data.get("seat", 0)),
                open=None if opened is None else TableOpen.from_wire(opened),
                join=None if joined is None else TableJoin.from_wire(joined),
                code=data.get("code"),
                commitment=data["commitment"],
                seed=None if seed is None else TableSeed.from_wire(seed),
                dealt=bool(data["dealt"]),
                moves=[TableMove.from_wire(m) for m in data["moves"]],
                answered=int(data["answered"]),
                closed=bool(data["closed"]),
                checked=data.get("checked"),
                rewarded=bool(data.get("rewarded", False)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DecodeError(f"{path} is not a kept table: {exc}") from None


def kept_dir(home: Path) -> Path:
    return home / KEPT_DIR


def kept_path(home: Path, table: str) -> Path:
    return kept_dir(home) / f"{table}.json"


def kept_tables(home: Path, league: str) -> Iterator[KeptTable]:
    """The tables kept at ``league``, oldest first."""
    directory = kept_dir(home)
    if not directory.is_dir():
        return
    paths = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for path in paths:
        kept = KeptTable.load(path)
        if kept.league == league:
            yield kept


def kept_table(home: Path, league: str, table: str) -> KeptTable | None:
    """The kept table of id ``table`` at ``league``, if this wallet's directory keeps it."""
    return next((k for k in kept_tables(home, league) if k.table == table), None)


def unfinished(home: Path, league: str) -> list[KeptTable]:
    """The tables at ``league`` not closed yet, oldest first: resumed before a new one."""
    return [k for k in kept_tables(home, league) if not k.closed]


# -- the board, rebuilt here ---------------------------------------------------------------------


@dataclass
class Board:
    """The table as this client rebuilds it for the player at ``seat``: the deal dealt, then
    every reported action parsed and applied by the engine."""

    state: State
    seat: int = PLAYER_SEAT
    actions: list[str] = field(default_factory=list)

    @classmethod
    def dealt(cls, view: TableView, seat: int = PLAYER_SEAT) -> Board:
        if view.deal is None:
            raise Untrusted(f"the league shows table {view.table} without its deal")
        deal = view.deal
        try:
            state = from_deal(deal.hands, deal.market, kind=deal.table)
        except LedgerError as exc:
            raise Untrusted(f"the league's deal is no table: {exc.diagnostics()}") from None
        return cls(state, seat)

    @property
    def waiting(self) -> str:
        """What the engine says the table waits for: ``move``, ``drill`` (a No-Go drill this
        seat answers), ``closed``, or ``them`` (the other seat's decision or drill: at a duel;
        never at a table the service answers up to the player's next decision)."""
        state = self.state
        if state.is_over:
            return "closed"
        if state.current_player == self.seat:
            return "move"
        if state.current_player == CHANCE and state.pending is not None:
            return "drill" if state.pending[1] == self.seat else "them"
        return "them"

    def follow(self, view: TableView, me: str) -> list[tuple[State, int, str]]:
        """Apply the actions ``view`` reports beyond those already applied: each (the position
        before, the action, its text). The history before them must be the one reported
        before, each action one the rules allow, and the table must then wait for what the
        view says, of ``me`` (the player's key) or of the other seat (:class:`Untrusted`
        otherwise; nothing is applied then)."""
        reported = view.actions
        known = len(self.actions)
        if reported[:known] != self.actions:
            raise Untrusted(
                f"the league now reports another history of table {view.table} than the one it "
                "reported before"
            )
        state = self.state.clone()
        taken: list[tuple[State, int, str]] = []
        for text in reported[known:]:
            before = state.clone()
            try:
                action = parse_action(state, text)
                state.apply(action)
            except (NotationError, IllegalActionError) as exc:
                raise Untrusted(
                    f"the league reports {text!r} at ply {known + len(taken)} of table "
                    f"{view.table}, which the rules do not allow here: {exc.diagnostics()}"
                ) from None
            taken.append((before, action, text))
        board = Board(state, self.seat, list(reported))
        said: str = view.waiting
        if said in ("move", "drill") and view.turn is not None and view.turn != me:
            said = "them"
        if said != "abandoned" and board.waiting != said:
            raise Untrusted(
                f"the league says table {view.table} waits for {said!r}; by the rules it waits "
                f"for {board.waiting!r}"
            )
        if view.ply != len(reported):
            raise Untrusted(f"the league says table {view.table} is at ply {view.ply}")
        self.state, self.actions = board.state, board.actions
        return taken


# -- the reveal ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fair:
    """What the check of an ended table found: the seed and the table replayed, and its end
    (the close; or None for a table abandoned when its move clock ran out)."""

    seed: int
    table: WitnessedTable
    closed: TableClosed | None
    abandoned: TableAbandoned | None = None


def _same(recorded: Any, mine: Any, what: str) -> None:
    if recorded.to_wire() != mine.to_wire():
        raise Unfair(f"the log records another {what} than the one you signed")


@dataclass(frozen=True)
class Logged:
    """An ended table's events, read by type: the open, a duel's join and first seed, the
    deal, the moves with their times, and the end."""

    opened: TableOpened
    duel: DuelSeats | None
    dealt: TableDealt
    dealt_at: datetime
    moves: list[tuple[MovePlayed, datetime]]
    end: TableClosed | TableAbandoned
    #: Seconds from the event before the end to the end (an abandonment's wait).
    waited: float

    @classmethod
    def read(cls, table: str, events: Sequence[Event]) -> Logged:
        try:
            opened = body_as(events[0], TableOpened)
            at = 1
            duel = None
            if is_duel(opened.request.venue):
                duel = DuelSeats(body_as(events[1], TableJoined), body_as(events[2], TableSeeded))
                at = 3
            dealt = body_as(events[at], TableDealt)
            last = events[-1]
            end: TableClosed | TableAbandoned = (
                body_as(last, TableAbandoned)
                if last.type == TableAbandoned.TYPE
                else body_as(last, TableClosed)
            )
            moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events[at + 1 : -1]]
        except (LedgerError, IndexError) as exc:
            why = exc.diagnostics() if isinstance(exc, LedgerError) else "too few events"
            raise Unfair(f"table {table}'s events are not an ended table's: {why}") from None
        tables = {opened.table, dealt.table, end.table, *(m.table for m, _ in moves)}
        if duel is not None:
            tables |= {duel.joined.table, duel.seeded.table}
        if tables != {table}:
            raise Unfair(f"the events served for table {table} are another table's")
        waited = (events[-1].recorded_at - events[-2].recorded_at).total_seconds()
        return cls(opened, duel, dealt, events[at].recorded_at, moves, end, waited)


def _check_requests(kept: KeptTable, log: Logged, me: str) -> None:
    """The requests the log records of the player's are the ones ``kept`` signed, and every
    other request is signed by the key it names (the seat's is the replay's to check)."""
    if kept.open is not None:
        _same(log.opened.request, kept.open, "table-open request")
    if kept.join is not None:
        if log.duel is None:
            raise Unfair(f"you joined a duel; the log records table {kept.table} as none")
        _same(log.duel.joined.request, kept.join, "table-join request")
    if log.opened.commitment != kept.commitment:
        raise Unfair(
            f"the log records commitment {log.opened.commitment}; the league showed you "
            f"{kept.commitment} before your seed"
        )
    seeds = [log.dealt.request] + ([log.duel.seeded.request] if log.duel is not None else [])
    mine = [s for s in seeds if s.player == me]
    if kept.seed is None or len(mine) != 1:
        raise Unfair("the log records another half of the deal than the one you sent")
    _same(mine[0], kept.seed, "table-seed request (your half of the deal)")
    signed = {m.ply: m for m in kept.moves}
    for move, _ in log.moves:
        request = move.request
        if request.player == me and request.ply in signed:
            _same(request, signed[request.ply], f"move at ply {move.ply}")
        elif request.player == me and log.duel is None:
            raise Unfair(f"the log records a move at ply {move.ply} you never signed")
        try:
            request.verify(PublicKey.from_text(request.player))
        except LedgerError:
            raise Unfair(f"the move recorded at ply {move.ply} is not signed by its key") from None
        if log.duel is None and request.player != log.opened.request.player:
            raise Unfair(f"the move recorded at ply {move.ply} is not signed by you")


def check_reveal(
    kept: KeptTable, events: Sequence[Event], actions: Sequence[str], policies: Policies
) -> Fair:
    """Check an ended table from its events (each already verified as signed by the tables
    key): the requests the log records of the player's are the ones ``kept`` signed, the
    secret the end reveals opens the commitment published before the seeds, a duel's join code
    is the one the secret derives, and the whole table replays from the seed the halves make
    (every move signed by the deciding seat's key, every action the one recorded and the one
    reported to the player, ``actions``), to the close's verdict and columns; a table
    abandoned when its move clock (the league's published ``policies``) ran out replays as far
    as it went. :class:`Unfair` says what does not hold."""
    table = kept.table
    log = Logged.read(table, events)
    me = kept.player
    _check_requests(kept, log, me)
    try:
        secret = reveals(log.opened, log.end.secret)
    except (ValueError, LedgerError) as exc:
        raise Unfair(str(exc)) from None
    if log.duel is not None:
        code = duel_code(table, secret)
        if log.duel.joined.request.code != code or (kept.code not in (None, code)):
            raise Unfair(f"duel {table}'s join code is not the one its secret derives")
    try:
        played = replay_table(log.opened, log.dealt, log.dealt_at, log.moves, secret, log.duel)
    except LedgerError as exc:
        raise Unfair(f"table {table} does not replay: {exc.diagnostics()}") from None
    if list(actions) != played.actions:
        raise Unfair(f"the actions reported to you are not those table {table}'s log replays")
    if isinstance(log.end, TableAbandoned):
        clock = clock_for(policies, log.end.waiting)
        if log.waited <= clock:
            raise Unfair(
                f"table {table} is recorded abandoned {log.waited:.0f} s after its last event, "
                f"within its {clock} s move clock"
            )
        if played.closed:
            raise Unfair(f"table {table} is recorded abandoned; replayed, it had closed")
        return Fair(played.seed, played, None, log.end)
    closed = log.end
    if not played.closed:
        raise Unfair(f"table {table} is recorded closed; replayed, it is still in play")
    if (played.verdict(), played.columns()) != (closed.verdict, closed.columns):
        raise Unfair(
            f"the close records {closed.verdict} {closed.columns}; the table replays to "
            f"{played.verdict()} {played.columns()}"
        )
    return Fair(played.seed, played, closed)
