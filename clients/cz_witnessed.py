"""One witnessed table played from the player's seat (docs/formats.md, "Witnessed tables",
"Duels"): the loop ``cz play --league`` and ``cz duel`` share (``clients.cz_league_play``).

The client opens the table (or joins a duel with its code), checks the service's commitment is
shown before it draws its own 32 bytes, sends them, and plays: the board is rebuilt here from
the deal and every action the service reports (``clients.witnessed.Board``: an action the
engine cannot apply is refused, never drawn), each of the player's moves signed by the
wallet's key, kept in the wallet's directory before it is sent (``clients.witnessed.
KeptTable``) and sent. At a table against the AI the answer carries the opponent's replies; at
a duel the other seat's moves arrive from the service, which this client reads until the table
waits for the player again (:meth:`Witnessed.await_change`).

An interrupted table (Ctrl-C, q, a league that did not answer, a crash) resumes with
``cz play --league --resume TABLE``, or by itself at the next ``cz play --league``: the kept
request whose answer never came is sent again, the very same signed bytes, and the service
answers a ply already played as played (409 ``move-replayed``), not as a second move
(docs/rulings.md L-35).
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn

from apiclient.league import LeagueClient, LeagueProblem
from clients.cz_board import Screen, draw
from clients.cz_rewards import Run
from clients.cz_seats import MAX_LINE, QUIT, Left, Person, grid
from clients.cz_session import Opened
from clients.cz_table import Move
from clients.witnessed import Board, KeptTable, Unfair, Untrusted
from game.window.ai.roster import chair_player, strength_at
from game.window.campaign import ROMAN
from game.window.drill import SHOW_SECONDS, TIME_LIMIT_SECONDS, parse_pattern
from game.window.notation import format_action
from game.window.state import CHANCE, State
from game.window.tables import Provenance, Table
from game.window.witnessed import DUEL_CONVENES, venue_of
from ledger.api.tables import TableView
from ledger.errors import LedgerError, SchemaError, VerificationError
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import Event
from ledger.manifest import LeagueManifest
from ledger.tables import TableJoin, TableMove, TableSeed, is_duel
from ledger.wire import hash_text

#: Seconds between two reads of a table while it waits for the other seat (a duel's join, its
#: seed, its moves): well inside the reads a source may make (READS_PER_MINUTE).
POLL_SECONDS = 1.0


#: Seconds this machine's clock may be ahead of the league's when a move's refusal as late is
#: weighed against the table's deadline (a refusal well before it is not believed).
CLOCK_SLACK = 30


class NotResumable(LedgerError):
    """A ``--resume TABLE`` naming no table kept here, or one already ended; a join code
    whose request is too old to send again."""


@dataclass
class Witnessed:
    """One witnessed table being played: the league, the wallet, the kept requests, the
    board rebuilt here, and who decides the player's moves (the person, or ``auto``)."""

    run: Run
    client: LeagueClient
    manifest: LeagueManifest
    opened: Opened
    kept: KeptTable
    screen: Screen
    auto: int | None
    board: Board | None = None
    person: Person | None = None

    @property
    def key(self) -> SigningKey:
        return self.opened.wallet.key

    @property
    def me(self) -> str:
        return self.key.public.to_text()

    @property
    def them(self) -> str:
        """The other seat, as the board names it: the venue's AI, or a duel's other player."""
        return "opponent" if self.kept.duel else self.kept.venue

    def signed(self, model: type[Any], **fields: Any) -> Any:
        return model.sign(
            self.key,
            league=self.manifest.league,
            manifest=self.manifest.hash_text(),
            time=int(time.time()),
            player=self.me,
            **fields,
        )

    def say(self, text: str) -> None:
        self.screen.say(text)

    # -- what the league answers, checked --------------------------------------------------

    def checked(self, view: TableView) -> TableView:
        kept = self.kept
        seated = view.player if kept.seat == 0 else view.opponent
        if (view.table, view.venue, seated) != (kept.table, kept.venue, self.me):
            raise Untrusted(
                f"the league answered about table {view.table} at {view.venue}, not your "
                f"table {kept.table} at {kept.venue}"
            )
        if kept.commitment is not None and view.commitment != kept.commitment:
            raise Untrusted(
                f"the league now shows commitment {view.commitment} for table {kept.table}; "
                f"it showed {kept.commitment} before your seed"
            )
        return view

    def read(self) -> TableView:
        return self.checked(self.run(self.client.table(self.kept.table)))

    def await_change(self, view: TableView, what: str) -> TableView:
        """Read the table every :data:`POLL_SECONDS` until it moves on from ``view`` (the other
        seat has played, joined, seeded, or the table ended), saying once what it waits for."""
        clock = ""
        if view.deadline is not None:
            clock = f"; the move clock runs out at {view.deadline.astimezone(UTC):%H:%M:%S} UTC"
        self.say(f"waiting for {what}{clock} (Ctrl-C leaves; the table waits)")
        while True:
            time.sleep(POLL_SECONDS)  # outside the event loop: Ctrl-C ends it at once
            new = self.read()
            if (new.ply, new.waiting, new.turn) != (view.ply, view.waiting, view.turn):
                return new

    # -- the deal ----------------------------------------------------------------------------

    def opening(self) -> TableView:
        """The table opened (or joined: the kept request sent again if its answer never came)
        and dealt (the kept seed, or fresh 32 bytes once the commitment is in; at a duel once
        both players are seated, then the other's seed awaited)."""
        kept = self.kept
        view: TableView | None = None
        if kept.commitment is None:
            view = self._joined() if kept.join is not None else self._opened()
            kept.commitment = view.commitment
            if view.code is not None:
                kept.code = view.code
            kept.save()
            if kept.code is not None and kept.seat == 0:
                self.say(
                    f"your duel's join code: {kept.code} — your opponent types: cz duel join "
                    f"{kept.code} (it is shown here once; the league never says it again)"
                )
        if not kept.dealt:
            view = view or self.read()
            while view.waiting == "join":
                view = self.await_change(view, f"your opponent to join with code {kept.code}")
            if view.waiting == "abandoned":
                return view
            if kept.seed is None:
                kept.seed = self.signed(
                    TableSeed,
                    table=kept.table,
                    commitment=kept.commitment,
                    seed=hash_text(secrets.token_bytes(32)),
                )
                kept.save()  # kept before it is sent: the same seed is sent again if lost
            view = self._seeded(kept.seed)
            while view.waiting == "seed":
                view = self.await_change(view, "your opponent's half of the deal")
            kept.dealt = view.deal is not None
            kept.save()
        return view if view is not None else self.read()

    def _opened(self) -> TableView:
        kept = self.kept
        assert kept.open is not None
        try:
            view = self.checked(self.run(self.client.open_table(kept.open)))
        except LeagueProblem as exc:
            if exc.slug != "stale-request":
                self._refused(exc)
            view = self._never_opened()
        if view.waiting not in ("seed", "join"):  # only your key signs its seed; none yet
            raise Untrusted(f"table {kept.table} is dealt, yet you never sent your seed")
        return view

    def _joined(self) -> TableView:
        """The duel the kept join seats the player at (its table then known and kept)."""
        kept = self.kept
        assert kept.join is not None
        try:
            view = self.run(self.client.join_table(kept.join))
        except LeagueProblem as exc:
            if exc.slug != "stale-request":
                self._refused(exc)
            kept.path.unlink(missing_ok=True)
            raise NotResumable(
                f"the join with code {kept.join.code} is too old to send again, and its answer "
                "never came: cz duel join CODE joins anew"
            ) from None
        if view.opponent != self.me or not is_duel(view.venue):
            raise Untrusted(f"the league seated you at {view.venue} as another key")
        kept.table_id, kept.venue = view.table, view.venue
        kept.save()
        return self.checked(view)

    def _refused(self, refusal: LeagueProblem) -> NoReturn:
        """An open or a join the league refused for good (not busy, 429 or 503): nothing was
        opened or joined, so nothing is kept to resume; the refusal is raised."""
        if refusal.status not in (429, 503):
            self.kept.path.unlink(missing_ok=True)
        raise refusal

    def _never_opened(self) -> TableView:
        """The kept open request is too old to send again: the table, if it was opened; else
        the kept file is dropped (nothing was signed at it but the open)."""
        try:
            return self.read()
        except LeagueProblem as exc:
            if exc.slug != "unknown-table":
                raise
        self.kept.path.unlink(missing_ok=True)
        raise NotResumable(
            f"table {self.kept.table} was never opened and its request is too old to send "
            "again; nothing was played: cz play --league VENUE opens a new one"
        )

    def _seeded(self, seed: TableSeed) -> TableView:
        try:
            return self.checked(self.run(self.client.seed_table(seed)))
        except LeagueProblem as exc:
            if exc.slug not in ("out-of-turn", "stale-request"):
                raise
        view = self.read()  # dealt by the seed sent before, or not dealt at all
        if view.waiting == "seed" and not self._seed_in():
            # never recorded, and too old now: the same 32 bytes again, signed now
            again = self.signed(
                TableSeed, table=seed.table, commitment=seed.commitment, seed=seed.seed
            )
            self.kept.seed = again
            self.kept.save()
            return self.checked(self.run(self.client.seed_table(again)))
        return view

    def _seed_in(self) -> bool:
        """Whether the table's log holds a seed of the player's (a duel's first seed)."""
        served = self.run(self.client.table_events(self.kept.table))
        return any(
            e.type in ("table-seeded", "table-dealt") and e.body["request"]["player"] == self.me
            for e in served.events
        )

    # -- the moves ---------------------------------------------------------------------------

    def send(self, request: TableMove) -> TableView:
        """Send the kept ``request`` (the very same signed bytes, on resume too); a ply the
        service has played already is read, not played twice."""
        kept = self.kept
        try:
            view = self.checked(self.run(self.client.move_table(request)))
        except LeagueProblem as exc:
            if exc.slug == "illegal-move":
                # The move was checked legal on the board the league's own log replays: a
                # league (or anyone between) calling it illegal is not believed, and the
                # signed move stays kept, so a resume sends those very bytes again and the
                # player never signs a second move at this ply (L-35).
                raise Untrusted(
                    f"the league refuses your move at ply {request.ply} ({request.action}) as "
                    f"illegal, but the rules allow it on the table its log replays: "
                    f"{exc.problem.detail or exc.slug}. Your signed move is kept; cz play --league "
                    f"--resume {kept.table} sends it again"
                ) from None
            if exc.slug not in ("move-replayed", "out-of-turn", "stale-request", "timed-out"):
                raise
            view = self.read()
            waits = (
                view.ply == request.ply
                and view.waiting in ("move", "drill")
                and view.turn in (None, self.me)
            )
            if waits and exc.slug == "stale-request":
                # Never recorded, and now too old to be: the same move signed with the time now
                # (the old signature can never count at this ply; L-35).
                again = self.signed(
                    TableMove, table=request.table, ply=request.ply, action=request.action
                )
                kept.moves[-1] = again
                kept.save()
                return self.send(again)
            if waits and exc.slug == "timed-out" and _past(view.deadline):
                self.say(
                    f"your move at ply {request.ply} came after the table's move clock ran out"
                )
                kept.answered = len(kept.moves)
                kept.save()
                return self.await_change(view, "the league to record the table abandoned")
            if waits:
                # The table still waits for the very move the league says it has, or refuses
                # in time: not believed (whoever forged it), the signed move stays kept and a
                # resume sends those bytes again; never a second move at this ply (L-35).
                raise Untrusted(
                    f"the league answers your move at ply {request.ply} ({request.action}) "
                    f"{exc.slug}, yet its table still waits for that move: "
                    f"{exc.problem.detail or exc.slug}. Your signed move is kept; cz play "
                    f"--league --resume {kept.table} sends it again"
                ) from None
            if exc.slug == "move-replayed":
                self.say(
                    f"your move at ply {request.ply} ({request.action}) was played already "
                    "(its answer was lost): the league answers it as played, not twice"
                )
            elif exc.slug == "timed-out":
                self.say(
                    f"your move at ply {request.ply} came after the table's move clock ran out"
                )
        kept.answered = len(kept.moves)
        kept.save()
        return view

    def show(self, taken: Sequence[tuple[State, int, str]], mine: bool) -> None:
        """The actions just applied: the player's own (already said as chosen, unless it is a
        drill's outcome) and the other seat's, as they are taken."""
        seat = self.kept.seat
        for number, (before, action, text) in enumerate(taken):
            at = before.current_player
            actor = "the drill" if at == CHANCE else ("you" if at == seat else self.them)
            if self.person is not None:
                self.person.last = Move(before, action, actor)
            if mine and number == 0 and at != CHANCE:
                continue  # "you: …" was said as it was chosen
            if at == CHANCE:
                drilled = before.pending is not None and before.pending[1] == seat
                whose = "your" if drilled else f"{self.them}'s"
                self.say(f"{whose} No-Go drill: {text.removeprefix('drill ')}")
            else:
                self.say(f"{actor}: {text}")

    def decide(self, board: Board) -> str:
        state = board.state
        if self.person is not None:
            return format_action(state, self.person.decide(state))
        assert self.auto is not None
        venue = self.kept.venue
        where = DUEL_CONVENES[venue] if is_duel(venue) else venue_of(venue)
        ai = chair_player(self.auto, f"auto:{self.kept.table}", strength_at(where).drill_competence)
        text = format_action(state, ai.decide(state))
        self.say(f"you (Chair {ROMAN[self.auto]}): {text}")
        return text

    def drill(self, view: TableView) -> str:
        """IV.4 at the league: the pattern the service shows, hidden after SHOW_SECONDS, the
        answer sent as typed; the service's clock judges it (from the event that set it)."""
        if view.drill is None:
            raise Untrusted(f"the league set your No-Go drill at table {view.table} without it")
        pattern = parse_pattern(view.drill)
        screen = self.screen
        if self.auto is not None:
            self.say(f"your No-Go drill: {view.drill}; you (Chair {ROMAN[self.auto]}) answer it")
            return pattern.notation()
        screen.say(
            f"No-Go drill: remember the lit cells; {TIME_LIMIT_SECONDS:g} s from the league's "
            "move, by its clock"
        )
        rows = grid(screen, pattern)
        for row in rows:
            screen.say(f"    {row}")
        time.sleep(SHOW_SECONDS)
        if screen.terminal:
            screen.out.write(f"\x1b[{len(rows)}F\x1b[J")
        screen.say("    (hidden)")
        while True:
            text = _read(screen, "the pattern, three rows of 0/1 (e.g. 101/010/001): ")
            try:
                return parse_pattern(text).notation()
            except SchemaError as exc:
                screen.say(f"not a pattern ({exc.diagnostics()}); type it again")

    def play(self) -> tuple[TableView, Board | None]:
        """The table from where it is to its end (closed, or abandoned when its move clock
        ran out): the view at the end and the board rebuilt (None if it ended undealt)."""
        view = self.opening()
        if view.deal is None:
            return view, None
        kept = self.kept
        board = self.board = Board.dealt(view, kept.seat)
        table = table_of(board.state, view)
        if self.auto is None:
            self.person = Person(self.screen, table, kept.seat, self.them, "")
        seat = "first" if kept.seat == 0 else "second"
        against = "your opponent" if kept.duel else f"{kept.venue}'s AI"
        self.say(
            f"{kept.venue}: a {view.deal.table} table at the league, table {kept.table}: the "
            f"league committed to its secret ({kept.commitment}) before the seeds were drawn; "
            f"you sit {seat}, against {against}, and every move is signed by your key"
        )
        pending = kept.pending
        if pending is not None:  # its answer never came: the very same request again
            self.say(f"sending your kept move at ply {pending.ply} again: {pending.action}")
            view = self.send(pending)
        if view.actions:
            self.say(f"the table so far ({len(view.actions)} actions):")
        self.show(board.follow(view, self.me), mine=False)
        while view.waiting in ("move", "drill"):
            if view.turn is not None and view.turn != self.me:
                draw(self.screen, board.state, table, kept.seat, self.them)
                view = self.await_change(view, "your opponent's move")
                self.show(board.follow(view, self.me), mine=False)
                continue
            # Before the player is asked: never a second move at a ply (L-35).
            signed = next((m for m in kept.moves if m.ply == view.ply), None)
            if signed is not None:
                raise Untrusted(
                    f"the league's table waits for a move at ply {view.ply}, where you signed "
                    f"{signed.action} already; cz play --league --resume {kept.table} sends "
                    "that move again"
                )
            if view.waiting == "move":
                text = self.decide(board)
            else:
                draw(self.screen, board.state, table, kept.seat, self.them)
                text = self.drill(view)
            request = self.signed(TableMove, table=kept.table, ply=view.ply, action=text)
            kept.moves.append(request)
            kept.save()  # kept, synced, before it is sent: resumed by sending it again
            view = self.send(request)
            self.show(board.follow(view, self.me), mine=True)
        return view, board


def join_request(opened: Opened, manifest: LeagueManifest, code: str) -> TableJoin:
    """A signed ``table-join`` with a duel's code."""
    join: TableJoin = TableJoin.sign(
        opened.wallet.key,
        league=manifest.league,
        manifest=manifest.hash_text(),
        time=int(time.time()),
        player=opened.wallet.public.to_text(),
        code=code,
    )
    return join


def _read(screen: Screen, prompt: str) -> str:
    screen.out.write(prompt)
    screen.out.flush()
    line = sys.stdin.readline(MAX_LINE)
    if not sys.stdin.isatty():
        screen.say(line.rstrip("\n"))
    if not line or line.strip().lower() in QUIT:
        raise Left
    return line.strip()


def table_of(state: State, view: TableView) -> Table:
    """The deal as ``cz play`` draws it (the prints' finishes are not shown)."""
    assert view.deal is not None
    return Table(
        kind=view.deal.table,
        seed=0,
        hands=view.deal.hands,
        market=view.deal.market,
        aside=(),
        provenance=tuple(Provenance() for _ in state.titles),
    )


async def verified_events(
    client: LeagueClient, manifest: LeagueManifest, table: str
) -> list[Event]:
    """The table's events, each signed by the manifest's tables key (:class:`Unfair` if not)."""
    if manifest.tables is None:
        raise VerificationError("this league's manifest names no tables key")
    key = PublicKey.from_text(manifest.tables)
    served = await client.table_events(table)
    try:
        return [event.verified(key) for event in served.events]
    except LedgerError as exc:
        raise Unfair(
            f"table {table}'s events are not the tables key's: {exc.diagnostics()}"
        ) from None


def _past(deadline: datetime | None) -> bool:
    """Whether a table's move clock (its view's ``deadline``) has run out by this machine's
    clock, give or take :data:`CLOCK_SLACK`."""
    return deadline is not None and deadline.timestamp() <= time.time() + CLOCK_SLACK
