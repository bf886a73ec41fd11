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
from ledger.tables import (
    PLAYER_SEAT,
    MovePlayed,
    TableClosed,
    TableDealt,
    TableMove,
    TableOpen,
    TableOpened,
    TableSeed,
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
    """One witnessed table's signed requests, as kept in the wallet's directory."""

    path: Path
    league: str
    open: TableOpen
    #: The commitment the open answer showed (None until it came).
    commitment: str | None = None
    seed: TableSeed | None = None
    #: Whether the seed's answer (the deal) came.
    dealt: bool = False
    #: Every move signed, in ply order.
    moves: list[TableMove] = field(default_factory=list)
    #: How many of ``moves`` were answered (the rest, at most one, waits to be sent again).
    answered: int = 0
    closed: bool = False
    #: What the check of the reveal found at the close ("fair", or why not).
    checked: str | None = None
    #: Whether the table's reward is settled in the wallet (False while the league's treasury
    #: has not paid it: the next ``cz play --league`` takes it then).
    rewarded: bool = False

    @property
    def table(self) -> str:
        return self.open.table_id()

    @property
    def venue(self) -> str:
        return self.open.venue

    @property
    def pending(self) -> TableMove | None:
        """The signed move whose answer never came: sent again, the very same, on resume."""
        return self.moves[-1] if len(self.moves) > self.answered else None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "league": self.league,
            "table": self.table,
            "venue": self.venue,
            "open": self.open.to_wire(),
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
            seed = data["seed"]
            return cls(
                path=path,
                league=str(data["league"]),
                open=TableOpen.from_wire(data["open"]),
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


def unfinished(home: Path, league: str) -> list[KeptTable]:
    """The tables at ``league`` not closed yet, oldest first: resumed before a new one."""
    return [k for k in kept_tables(home, league) if not k.closed]


# -- the board, rebuilt here ---------------------------------------------------------------------


@dataclass
class Board:
    """The table as this client rebuilds it: the deal dealt, then every reported action
    parsed and applied by the engine."""

    state: State
    actions: list[str] = field(default_factory=list)

    @classmethod
    def dealt(cls, view: TableView) -> Board:
        if view.deal is None:
            raise Untrusted(f"the league shows table {view.table} without its deal")
        deal = view.deal
        try:
            state = from_deal(deal.hands, deal.market, kind=deal.table)
        except LedgerError as exc:
            raise Untrusted(f"the league's deal is no table: {exc.diagnostics()}") from None
        return cls(state)

    @property
    def waiting(self) -> str:
        """What the engine says the table waits for: ``move``, ``drill`` (the player's own
        No-Go drill), ``closed``, or ``them`` (the other seat: never, at a table the service
        answers up to the player's next decision)."""
        state = self.state
        if state.is_over:
            return "closed"
        if state.current_player == PLAYER_SEAT:
            return "move"
        if state.current_player == CHANCE and state.pending is not None:
            return "drill" if state.pending[1] == PLAYER_SEAT else "them"
        return "them"

    def follow(self, view: TableView) -> list[tuple[State, int, str]]:
        """Apply the actions ``view`` reports beyond those already applied: each (the position
        before, the action, its text). The history before them must be the one reported
        before, each action one the rules allow, and the table must then wait for what the
        view says (:class:`Untrusted` otherwise; nothing is applied then)."""
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
        board = Board(state, list(reported))
        if board.waiting != view.waiting:
            raise Untrusted(
                f"the league says table {view.table} waits for {view.waiting!r}; by the rules "
                f"it waits for {board.waiting!r}"
            )
        if view.ply != len(reported):
            raise Untrusted(f"the league says table {view.table} is at ply {view.ply}")
        self.state, self.actions = board.state, board.actions
        return taken


# -- the reveal ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fair:
    """What the check of a closed table found: the seed and the table replayed."""

    seed: int
    table: WitnessedTable
    closed: TableClosed


def _same(recorded: Any, mine: Any, what: str) -> None:
    if recorded.to_wire() != mine.to_wire():
        raise Unfair(f"the log records another {what} than the one you signed")


def check_reveal(kept: KeptTable, events: Sequence[Event], actions: Sequence[str]) -> Fair:
    """Check a closed table from its events (each already verified as signed by the tables
    key): the requests the log records are the ones ``kept`` signed, the secret the close
    reveals opens the commitment published before the player's seed, and the whole table
    replays from the seed the two halves make, every action the one recorded and the one
    reported to the player (``actions``), the verdict and the columns the close's.
    :class:`Unfair` says what does not hold."""
    table = kept.table
    if len(events) < 3:
        raise Unfair(f"the log holds {len(events)} events of table {table}: it is not closed")
    try:
        opened = body_as(events[0], TableOpened)
        dealt = body_as(events[1], TableDealt)
        closed = body_as(events[-1], TableClosed)
        moves = [(body_as(e, MovePlayed), e.recorded_at) for e in events[2:-1]]
    except LedgerError as exc:
        raise Unfair(f"table {table}'s events are not a table's: {exc.diagnostics()}") from None
    if {opened.table, dealt.table, closed.table, *(m.table for m, _ in moves)} != {table}:
        raise Unfair(f"the events served for table {table} are another table's")
    _same(opened.request, kept.open, "table-open request")
    if opened.commitment != kept.commitment:
        raise Unfair(
            f"the log records commitment {opened.commitment}; the league showed you "
            f"{kept.commitment} before your seed"
        )
    if kept.seed is None:
        raise Unfair("you never sent a seed for this table, yet the log records one")
    _same(dealt.request, kept.seed, "table-seed request (your half of the deal)")
    mine = {m.ply: m for m in kept.moves}
    player = PublicKey.from_text(kept.open.player)
    for move, _ in moves:
        signed = mine.get(move.ply)
        if signed is not None:
            _same(move.request, signed, f"move at ply {move.ply}")
        try:
            move.request.verify(player)
        except LedgerError:
            raise Unfair(f"the move recorded at ply {move.ply} is not signed by you") from None
    try:
        secret = reveals(opened, closed.secret)
    except (ValueError, LedgerError) as exc:
        raise Unfair(str(exc)) from None
    try:
        played = replay_table(opened, dealt, events[1].recorded_at, moves, secret)
    except LedgerError as exc:
        raise Unfair(f"table {table} does not replay: {exc.diagnostics()}") from None
    if not played.closed:
        raise Unfair(f"table {table} is recorded closed; replayed, it is still in play")
    if (played.verdict(), played.columns()) != (closed.verdict, closed.columns):
        raise Unfair(
            f"the close records {closed.verdict} {closed.columns}; the table replays to "
            f"{played.verdict()} {played.columns()}"
        )
    if list(actions) != played.actions:
        raise Unfair(f"the actions reported to you are not those table {table}'s log replays")
    return Fair(played.seed, played, closed)
