"""``cz play --league VENUE``: a witnessed table at the pinned league (docs/formats.md,
"Witnessed tables"), played with the board and prompts of an offline table.

The client opens the table, checks the service's commitment is shown before it draws its own
32 bytes, sends them, and plays: the board is rebuilt here from the deal and every action the
service reports (``clients.witnessed.Board``: an action the engine cannot apply is refused,
never drawn), each move signed by the wallet's key, kept in the wallet's directory before it
is sent (``clients.witnessed.KeptTable``) and sent. At the close it reads the table's signed
events, checks the reveal and replays the whole table (``clients.witnessed.check_reveal``),
and says plainly whether the league dealt fairly.

An interrupted table (Ctrl-C, q, a league that did not answer, a crash) resumes with
``cz play --league --resume TABLE``, or by itself at the next ``cz play --league``: the kept
request whose answer never came is sent again, the very same signed bytes, and the service
answers a ply already played as played (409 ``move-replayed``), not as a second move
(docs/rulings.md L-35).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from apiclient.league import (
    LeagueClient,
    LeagueProblem,
    LeagueUnreachable,
    new_request_id,
)
from clients.cz_board import Screen, draw
from clients.cz_play import MAX_LINE, QUIT, Left, Person, _grid
from clients.cz_rewards import RESUME, Run, collect, misprint, record, reward
from clients.cz_session import Opened, emit, league_of, opened_wallet, pinned
from clients.cz_table import Move, verdict_lines
from clients.wallet import LeaguePin, Wallet, WalletError
from clients.witnessed import (
    Board,
    KeptTable,
    Unfair,
    Untrusted,
    check_reveal,
    kept_path,
    unfinished,
)
from game.window.ai.roster import chair_player, strength_at
from game.window.campaign import ROMAN
from game.window.drill import SHOW_SECONDS, TIME_LIMIT_SECONDS, parse_pattern
from game.window.notation import format_action
from game.window.registrars import set_titles
from game.window.rewards import table_work
from game.window.state import CHANCE, State
from game.window.tables import Provenance, Table
from game.window.witnessed import venue_of
from ledger.api.tables import TableView
from ledger.catalog import PLAYING, CardSet
from ledger.certificates import PrintCertificate
from ledger.errors import LedgerError, SchemaError, VerificationError
from ledger.keys import PublicKey, SigningKey
from ledger.leaf import Event
from ledger.manifest import LeagueManifest
from ledger.portfolios import PORTFOLIO_SIZE, takes_portfolio
from ledger.tables import VENUES, TableMove, TableOpen, TableSeed
from ledger.wire import hash_text
from ledger.work import challenge, solve

T = TypeVar("T")


#: Titles in book order, and finishes from plain to finest (a portfolio brings the finest).
BOOK_ORDER = {c.name: i for i, c in enumerate(PLAYING)}
_FINISH = {"standard": 0, "gilt": 1, "holofoil": 2, "misprint": 3}
#: The player's verdict, as the close is told.
VERDICTS = {"win": "you won", "loss": "you lost", "balance": "a Balance"}


class NotResumable(LedgerError):
    """A ``--resume TABLE`` naming no table kept here, or one already closed."""


@dataclass
class Witnessed:
    """One witnessed table being played: the league, the wallet, the kept requests, the
    board rebuilt here, and the seat that decides the player's moves."""

    run: Run
    client: LeagueClient
    manifest: LeagueManifest
    opened: Opened
    kept: KeptTable
    screen: Screen
    auto: int | None
    board: Board | None = None
    person: Person | None = None
    said: list[str] = field(default_factory=list)

    @property
    def key(self) -> SigningKey:
        return self.opened.wallet.key

    def signed(self, model: type[Any], **fields: Any) -> Any:
        return model.sign(
            self.key,
            league=self.manifest.league,
            manifest=self.manifest.hash_text(),
            time=int(time.time()),
            player=self.key.public.to_text(),
            **fields,
        )

    # -- what the league answers, checked --------------------------------------------------

    def checked(self, view: TableView) -> TableView:
        kept = self.kept
        if (view.table, view.venue, view.player) != (
            kept.table,
            kept.venue,
            self.key.public.to_text(),
        ):
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

    # -- the deal ----------------------------------------------------------------------------

    def opening(self) -> TableView:
        """The table opened (the kept request sent again if its answer never came) and dealt
        (the kept seed, or fresh 32 bytes once the commitment is in)."""
        kept = self.kept
        view: TableView | None = None
        if kept.commitment is None:
            try:
                view = self.checked(self.run(self.client.open_table(kept.open)))
            except LeagueProblem as exc:
                if exc.slug != "stale-request":
                    raise
                view = self._never_opened()
            if view.waiting != "seed":  # only your key signs its seed, and you signed none
                raise Untrusted(f"table {kept.table} is dealt, yet you never sent your seed")
            kept.commitment = view.commitment
            kept.save()
        if not kept.dealt:
            if kept.seed is None:
                kept.seed = self.signed(
                    TableSeed,
                    table=kept.table,
                    commitment=kept.commitment,
                    seed=hash_text(secrets.token_bytes(32)),
                )
                kept.save()  # kept before it is sent: the same seed is sent again if lost
            view = self._seeded(kept.seed)
            kept.dealt = True
            kept.save()
        return view if view is not None else self.read()

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
        if view.waiting == "seed":  # never recorded, and too old now: the same 32 bytes again
            again = self.signed(
                TableSeed, table=seed.table, commitment=seed.commitment, seed=seed.seed
            )
            self.kept.seed = again
            self.kept.save()
            return self.checked(self.run(self.client.seed_table(again)))
        return view

    # -- the moves ---------------------------------------------------------------------------

    def send(self, request: TableMove) -> TableView:
        """Send the kept ``request`` (the very same signed bytes, on resume too); a ply the
        service has played already is read, not played twice."""
        kept = self.kept
        try:
            view = self.checked(self.run(self.client.move_table(request)))
        except LeagueProblem as exc:
            if exc.slug == "illegal-move":  # refused, nothing recorded: not kept either
                kept.moves.pop()
                kept.save()
                raise
            if exc.slug not in ("move-replayed", "out-of-turn", "stale-request"):
                raise
            view = self.read()
            if exc.slug == "move-replayed":
                self.say(
                    f"your move at ply {request.ply} ({request.action}) was played already "
                    "(its answer was lost): the league answers it as played, not twice"
                )
            elif view.ply == request.ply and view.waiting in ("move", "drill"):
                # Never recorded, and now too old to be: the same move signed with the time now
                # (the old signature can never count at this ply; L-35).
                again = self.signed(
                    TableMove, table=request.table, ply=request.ply, action=request.action
                )
                kept.moves[-1] = again
                kept.save()
                return self.send(again)
        kept.answered = len(kept.moves)
        kept.save()
        return view

    def say(self, text: str) -> None:
        self.screen.say(text)

    def show(self, taken: Sequence[tuple[State, int, str]], mine: bool) -> None:
        """The actions just applied: the player's own (already said, unless its first is a
        drill's outcome) and the opponent's, as they are taken."""
        venue = self.kept.venue
        for number, (before, action, text) in enumerate(taken):
            seat = before.current_player
            actor = "the drill" if seat == CHANCE else ("you" if seat == 0 else venue)
            if self.person is not None:
                self.person.last = Move(before, action, actor)
            if mine and number == 0 and seat != CHANCE:
                continue  # "you: …" was said as it was chosen
            if seat == CHANCE:
                whose = (
                    "your"
                    if before.pending is not None and before.pending[1] == 0
                    else (f"{venue}'s")
                )
                self.say(f"{whose} No-Go drill: {text.removeprefix('drill ')}")
            else:
                self.say(f"{actor}: {text}")

    def decide(self, board: Board) -> str:
        state = board.state
        if self.person is not None:
            return format_action(state, self.person.decide(state))
        assert self.auto is not None
        venue = venue_of(self.kept.venue)
        ai = chair_player(self.auto, f"auto:{self.kept.table}", strength_at(venue).drill_competence)
        action = ai.decide(state)
        text = format_action(state, action)
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
        rows = _grid(screen, pattern)
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

    def play(self) -> tuple[TableView, Board]:
        view = self.opening()
        board = self.board = Board.dealt(view)
        table = _table_of(board.state, view)
        if self.auto is None:
            self.person = Person(self.screen, table, 0, self.kept.venue, "")
        kind = view.deal.table if view.deal is not None else "?"
        self.say(
            f"{self.kept.venue}: a {kind} table at the league, table {self.kept.table}: the "
            f"league committed to its secret ({self.kept.commitment or '?'}) before your seed "
            "was drawn; you sit first, and every move is signed by your key"
        )
        pending = self.kept.pending
        if pending is not None:  # its answer never came: the very same request again
            self.say(f"sending your kept move at ply {pending.ply} again: {pending.action}")
            view = self.send(pending)
        if view.actions:
            self.say(f"the table so far ({len(view.actions)} actions):")
        self.show(board.follow(view), mine=False)
        while view.waiting in ("move", "drill"):
            if view.waiting == "move":
                text = self.decide(board)
            else:
                draw(self.screen, board.state, table, 0, self.kept.venue)
                text = self.drill(view)
            request = self.signed(TableMove, table=self.kept.table, ply=view.ply, action=text)
            self.kept.moves.append(request)
            self.kept.save()  # kept, synced, before it is sent: resumed by sending it again
            view = self.send(request)
            self.show(board.follow(view), mine=True)
        return view, board


def _read(screen: Screen, prompt: str) -> str:
    screen.out.write(prompt)
    screen.out.flush()
    line = sys.stdin.readline(MAX_LINE)
    if not sys.stdin.isatty():
        screen.say(line.rstrip("\n"))
    if not line or line.strip().lower() in QUIT:
        raise Left
    return line.strip()


def _table_of(state: State, view: TableView) -> Table:
    """The deal as ``cz play`` draws it (the league's tables have no portfolios)."""
    assert view.deal is not None
    return Table(
        kind=view.deal.table,
        seed=0,
        hands=view.deal.hands,
        market=view.deal.market,
        aside=(),
        provenance=tuple(Provenance() for _ in state.titles),
    )


# -- the close -----------------------------------------------------------------------------------


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


def _chosen(args: argparse.Namespace, home: Path, league: str) -> tuple[KeptTable | None, str]:
    """The kept table to resume (``--resume``, else the oldest unfinished one), or None for a
    new table at the venue named; and what to tell the player."""
    if args.resume:
        path = kept_path(home, args.resume.strip().lower())
        if not path.is_file():
            raise NotResumable(
                f"no table {args.resume} is kept in {path.parent}: --resume takes the id a "
                "table was opened with (cz play --league prints it)"
            )
        kept = KeptTable.load(path)
        if kept.league != league:
            raise NotResumable(f"table {kept.table} was played at another league ({kept.league})")
        if kept.closed:
            raise NotResumable(
                f"table {kept.table} has closed ({kept.checked}); cz play --league VENUE opens "
                "a new one"
            )
        return kept, f"resuming table {kept.table} at {kept.venue}"
    waiting = unfinished(home, league)
    if waiting:
        kept = waiting[0]
        other = f" (not a new one at {args.league}: finish this one first)" if args.league else ""
        return kept, f"resuming your unfinished table {kept.table} at {kept.venue}{other}"
    if not args.league:
        raise NotResumable(
            "name a venue: cz play --league VENUE (one of " + ", ".join(VENUES) + ")"
        )
    return None, ""


def portfolio_of(wallet: Wallet, venue: str, named: str | None) -> tuple[PrintCertificate, ...]:
    """The eight stamped prints the player brings to a Registrar's table (IV.3, L-39): the
    titles ``named`` (``--portfolio T1,...``), else eight distinct titles of the wallet's
    stamped prints, those outside the Registrar's own seven first (the two portfolios must
    make a pool of thirteen or more), each carried by its finest print."""
    best: dict[str, PrintCertificate] = {}
    for chain in wallet.prints.values():
        certificate = chain.certificate
        if not isinstance(certificate, PrintCertificate):
            continue
        kept = best.get(certificate.title)
        if kept is None or _FINISH.get(certificate.finish, 0) > _FINISH.get(kept.finish, 0):
            best[certificate.title] = certificate
    if named:
        titles = [_title_of(t) for t in named.split(",")]
        missing = [t for t in titles if t not in best]
        if missing:
            raise SchemaError(
                f"you hold no stamped print of {', '.join(missing)}: a league table takes "
                "stamped prints only (L-39; cz stamp presents your unstamped ones)"
            )
    else:
        own = set(set_titles(CardSet(venue.removeprefix("registrar-"))))
        titles = sorted(best, key=lambda t: (t in own, BOOK_ORDER.get(t, 0)))[:PORTFOLIO_SIZE]
    if len(set(titles)) != PORTFOLIO_SIZE:
        raise SchemaError(
            f"a Registrar's table takes {PORTFOLIO_SIZE} stamped prints of distinct titles "
            f"(IV.3); {'you named' if named else 'your wallet holds'} {len(set(titles))} "
            "(cz stamp presents your unstamped prints, cz buy buys singles)"
        )
    return tuple(best[t] for t in titles)


def _title_of(text: str) -> str:
    by_lower = {name.lower(): name for name in BOOK_ORDER}
    return by_lower.get(text.strip().lower(), text.strip())


def _open_request(
    opened: Opened,
    manifest: LeagueManifest,
    venue: str,
    screen: Screen,
    portfolio: tuple[PrintCertificate, ...] | None = None,
) -> TableOpen:
    """A signed ``table-open`` at ``venue`` with the proof of work its reward costs (L-28:
    a mark earned at a table costs what a faucet mark does), bound to the request."""
    unsigned: dict[str, Any] = {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": new_request_id(),
        "time": int(time.time()),
        "player": opened.wallet.public.to_text(),
        "venue": venue,
    }
    if portfolio is not None:
        unsigned["portfolio"] = [c.to_wire() for c in portfolio]
        screen.say(
            "your portfolio: " + ", ".join(f"{c.title} ({c.finish}) {c.serial}" for c in portfolio)
        )
    work = table_work(manifest.policies, venue)
    if work > 1:
        screen.say(f"proof of work for the table's reward ({work} expected hashes)…")
    nonce = solve(challenge({"kind": TableOpen.KIND, **unsigned}), 0, work)
    return TableOpen.sign(opened.wallet.key, **unsigned, work=nonce)


def _refuse_offline_options(args: argparse.Namespace) -> None:
    for name, flag in (("chair", "--chair"), ("registrar", "--registrar"), ("seed", "--seed")):
        if getattr(args, name) is not None:
            raise SchemaError(
                f"{flag} is for an offline table; at the league the venue follows --league and "
                "the deal is commit-reveal (docs/formats.md)"
            )
    if args.portfolio and not (args.league and takes_portfolio(args.league)):
        raise SchemaError(
            "--portfolio is for a Registrar's table (--league registrar-SET), where you bring "
            "eight stamped prints (IV.3)"
        )
    if args.league and args.league not in VENUES:
        raise SchemaError(f"no witnessed table sits at {args.league!r}: one of {', '.join(VENUES)}")


@contextlib.contextmanager
def _league(run: Run, pin: LeaguePin) -> Iterator[tuple[LeagueClient, LeagueManifest]]:
    """The pinned league (``league_of``), entered and left on the runner's loop."""
    league = league_of(pin)
    pair = run(league.__aenter__())
    try:
        yield pair
    finally:
        run(league.__aexit__(None, None, None))


def _play(args: argparse.Namespace, opened: Opened, screen: Screen) -> dict[str, Any]:
    # One event loop for the league's calls, run only while a call is under way: between them
    # (the player thinking at a prompt) Ctrl-C is Python's own KeyboardInterrupt, at once.
    with asyncio.Runner() as runner, _league(runner.run, pinned(opened.wallet)) as league:
        return _at(args, opened, screen, runner.run, *league)


def _at(
    args: argparse.Namespace,
    opened: Opened,
    screen: Screen,
    run: Run,
    client: LeagueClient,
    manifest: LeagueManifest,
) -> dict[str, Any]:
    if manifest.tables is None:
        raise WalletError("this league's manifest names no tables key: it has no tables")
    home = opened.home.directory
    for line in collect(run, client, manifest, opened):
        screen.say(line)
    kept, told = _chosen(args, home, manifest.league)
    if kept is None:
        portfolio = (
            portfolio_of(opened.wallet, args.league, args.portfolio)
            if takes_portfolio(args.league)
            else None
        )
        request = _open_request(opened, manifest, args.league, screen, portfolio)
        kept = KeptTable(kept_path(home, request.table_id()), manifest.league, request)
        kept.save()  # kept before it is sent
    else:
        screen.say(told)
    playing = Witnessed(run, client, manifest, opened, kept, screen, args.auto)
    try:
        view, board = playing.play()
    except (Left, KeyboardInterrupt) as left:
        screen.say(
            f"\nyou left table {kept.table}; it waits at the league: "
            f"{RESUME.format(table=kept.table)} (or the next cz play --league) takes it up "
            "where you left it"
        )
        interrupted = isinstance(left, KeyboardInterrupt)
        return {"table": kept.table, "venue": kept.venue, "left": True, "interrupted": interrupted}
    except LeagueUnreachable as exc:
        raise LeagueUnreachable(
            f"{exc.diagnostics()}; your signed move is kept: "
            f"{RESUME.format(table=kept.table)} sends it again"
        ) from None
    if view.closing is None:
        raise Untrusted(f"the league says table {kept.table} closed without its close")
    events = run(verified_events(client, manifest, kept.table))
    try:
        fair = check_reveal(kept, events, board.actions)
    except Unfair as exc:
        kept.closed, kept.checked = True, f"UNFAIR: {exc}"
        kept.save()
        raise Unfair(
            f"UNFAIR: the league did not deal this table fairly: {exc} (table {kept.table}; "
            f"its events and your requests are kept in {kept.path})"
        ) from None
    kept.closed, kept.checked = True, "fair"
    kept.save()
    path = record(opened, kept, fair)
    awarded = misprint(opened, manifest, view.closing.misprint)
    landed = reward(opened, manifest, view.closing.reward, view.closing.verdict)
    kept.rewarded = landed.status != "pending"
    kept.save()
    state = board.state
    seats = ("you", kept.venue)
    draw(screen, state, _table_of(state, view), 0, kept.venue)
    for line in verdict_lines(state, seats):
        screen.say(line)
    closing = view.closing
    s, f, h = closing.columns[0]
    return {
        "table": kept.table,
        "venue": kept.venue,
        "verdict": closing.verdict,
        "columns": closing.columns,
        "seed": fair.seed,
        "actions": len(board.actions),
        "fair": True,
        "record": str(path),
        "misprint": None if closing.misprint is None else closing.misprint.status,
        "reward": landed.to_json(),
        "text": (
            f"table {kept.table} at {kept.venue}: {VERDICTS[closing.verdict]} (your columns "
            f"Substance {s} Form {f} Holdings {h})"
            f"\nthe league dealt fairly: its secret opens the commitment it showed before your "
            f"seed, the seed ({fair.seed}) is derived from it and yours, and all "
            f'{len(board.actions)} actions replay from it (docs/formats.md, "The fair deal")'
            f"\nthe table is recorded: cz table replay {path}"
            + f"\n{landed.line(kept.table)}"
            + (f"\n{awarded}" if awarded else "")
        ),
    }


def play_league(args: argparse.Namespace) -> int:
    """``cz play --league [VENUE] [--resume TABLE] [--auto [CHAIR]]``."""
    _refuse_offline_options(args)
    screen = Screen.on(sys.stderr if args.json else sys.stdout)
    with opened_wallet() as opened:
        data = _play(args, opened, screen)
    if data.get("left"):
        if args.json:
            emit(args, data, "")
        return 130 if data["interrupted"] else 0
    text = data.pop("text")
    emit(args, data, text)
    return 0
