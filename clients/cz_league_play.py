"""``cz play --league VENUE`` and ``cz duel new|join CODE``: witnessed tables at the pinned
league (docs/formats.md, "Witnessed tables", "Duels"), played with the board and prompts of an
offline table (the loop: ``clients.cz_witnessed``).

At the end the client reads the table's signed events, checks the reveal and replays the
whole table (``clients.witnessed.check_reveal``) and says plainly whether the league dealt
fairly; then the reward lands in the wallet (``clients.cz_rewards``). A table cut off resumes
with ``cz play --league --resume TABLE`` or by itself at the next ``cz play --league`` (L-35).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from apiclient.league import LeagueClient, LeagueUnreachable, new_request_id
from clients.cz_board import Screen, draw
from clients.cz_rewards import RESUME, Run, collect, misprint, record, reward
from clients.cz_seats import AUTO_CHAIR, Left, chair_number
from clients.cz_session import JSON_FLAG, Opened, emit, league_of, opened_wallet, pinned
from clients.cz_table import verdict_lines
from clients.cz_witnessed import (
    NotResumable,
    Witnessed,
    join_request,
    table_of,
    verified_events,
)
from clients.wallet import LeaguePin, Wallet, WalletError
from clients.witnessed import (
    Board,
    KeptTable,
    Unfair,
    Untrusted,
    check_reveal,
    kept_table,
    unfinished,
)
from game.window.registrars import set_titles
from game.window.rewards import table_work
from ledger.api.tables import TableView
from ledger.catalog import PLAYING, CardSet
from ledger.certificates import PrintCertificate
from ledger.errors import SchemaError
from ledger.manifest import LeagueManifest
from ledger.portfolios import PORTFOLIO_SIZE, takes_portfolio
from ledger.tables import CODE_ALPHABET, CODE_LENGTH, DUEL_VENUES, VENUES, TableOpen, is_duel
from ledger.work import challenge, solve

#: Titles in book order, and finishes from plain to finest (a portfolio brings the finest).
BOOK_ORDER = {c.name: i for i, c in enumerate(PLAYING)}
_FINISH = {"standard": 0, "gilt": 1, "holofoil": 2, "misprint": 3}
#: The player's verdict, as the close is told (at a duel the close names the opener's).
VERDICTS = {"win": "you won", "loss": "you lost", "balance": "a Balance"}
FLIPPED = {"win": "loss", "loss": "win", "balance": "balance"}


# -- which table ---------------------------------------------------------------------------------


def _chosen(args: argparse.Namespace, home: Path, league: str) -> tuple[KeptTable | None, str]:
    """The kept table to resume (``--resume``, else the oldest unfinished one), or None for a
    new table; and what to tell the player."""
    if getattr(args, "resume", None):
        table = args.resume.strip().lower()
        kept = kept_table(home, league, table)
        if kept is None:
            raise NotResumable(
                f"no table {args.resume} of this league is kept in {home / 'league-tables'}: "
                "--resume takes the id a table was opened with (cz play --league prints it)"
            )
        if kept.closed:
            raise NotResumable(
                f"table {kept.table} has ended ({kept.checked}); cz play --league VENUE opens "
                "a new one"
            )
        return kept, f"resuming table {kept.table} at {kept.venue}"
    waiting = unfinished(home, league)
    if waiting:
        kept = waiting[0]
        named = getattr(args, "league", None)
        other = f" (not a new one at {named}: finish this one first)" if named else ""
        where = kept.venue if kept.table else f"the duel of code {kept.join and kept.join.code}"
        return kept, f"resuming your unfinished table {kept.table} at {where}{other}"
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
    """A signed ``table-open`` at ``venue``, with the proof of work its reward costs (L-28:
    a mark earned at a table costs what a faucet mark does) bound to it; none at a duel, which
    pays nothing (L-33)."""
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
    if is_duel(venue):
        return TableOpen.sign(opened.wallet.key, **unsigned)
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
    if args.league and is_duel(args.league):
        raise SchemaError("a duel is two players: cz duel new, and cz duel join CODE")
    if args.league and args.league not in VENUES:
        raise SchemaError(f"no witnessed table sits at {args.league!r}: one of {', '.join(VENUES)}")


# -- the table, played to its end ----------------------------------------------------------------


@contextlib.contextmanager
def _league(run: Run, pin: LeaguePin) -> Iterator[tuple[LeagueClient, LeagueManifest]]:
    """The pinned league (``league_of``), entered and left on the runner's loop."""
    league = league_of(pin)
    pair = run(league.__aenter__())
    try:
        yield pair
    finally:
        run(league.__aexit__(None, None, None))


class NewTable:
    """How a command starts a table when none is to be resumed: an open, or a duel's join."""

    def __init__(self, venue: str | None = None, code: str | None = None, portfolio: str = ""):
        self.venue, self.code, self.portfolio = venue, code, portfolio

    def kept(self, opened: Opened, manifest: LeagueManifest, screen: Screen) -> KeptTable:
        home = opened.home.directory
        if self.code is not None:
            join = join_request(opened, manifest, self.code)
            kept = KeptTable.joining(home, manifest.league, join)
        elif self.venue:
            portfolio = (
                portfolio_of(opened.wallet, self.venue, self.portfolio)
                if takes_portfolio(self.venue)
                else None
            )
            request = _open_request(opened, manifest, self.venue, screen, portfolio)
            kept = KeptTable.opening(home, manifest.league, request)
        else:
            raise NotResumable(
                "name a venue: cz play --league VENUE (one of " + ", ".join(VENUES) + ")"
            )
        kept.save()  # kept before it is sent
        return kept


def _play(
    args: argparse.Namespace, opened: Opened, screen: Screen, new: NewTable
) -> dict[str, Any]:
    # One event loop for the league's calls, run only while a call is under way: between them
    # (the player thinking at a prompt) Ctrl-C is Python's own KeyboardInterrupt, at once.
    with asyncio.Runner() as runner, _league(runner.run, pinned(opened.wallet)) as league:
        return _at(args, opened, screen, new, runner.run, *league)


def _at(
    args: argparse.Namespace,
    opened: Opened,
    screen: Screen,
    new: NewTable,
    run: Run,
    client: LeagueClient,
    manifest: LeagueManifest,
) -> dict[str, Any]:
    if manifest.tables is None:
        raise WalletError("this league's manifest names no tables key: it has no tables")
    for line in collect(run, client, manifest, opened):
        screen.say(line)
    kept, told = _chosen(args, opened.home.directory, manifest.league)
    if kept is None:
        kept = new.kept(opened, manifest, screen)
    else:
        screen.say(told)
    playing = Witnessed(run, client, manifest, opened, kept, screen, args.auto)
    try:
        view, board = playing.play()
    except (Left, KeyboardInterrupt) as left:
        screen.say(
            f"\nyou left table {kept.table or '(joining)'}; it waits at the league (its move "
            f"clock runs on): {RESUME.format(table=kept.table)} (or the next cz play --league) "
            "takes it up where you left it"
        )
        interrupted = isinstance(left, KeyboardInterrupt)
        return {"table": kept.table, "venue": kept.venue, "left": True, "interrupted": interrupted}
    except LeagueUnreachable as exc:
        raise LeagueUnreachable(
            f"{exc.diagnostics()}; your signed request is kept: "
            f"{RESUME.format(table=kept.table)} sends it again"
        ) from None
    return _ended(opened, manifest, screen, run, client, playing, view, board)


def _ended(
    opened: Opened,
    manifest: LeagueManifest,
    screen: Screen,
    run: Run,
    client: LeagueClient,
    playing: Witnessed,
    view: TableView,
    board: Board | None,
) -> dict[str, Any]:
    """The end of the table: its reveal checked, then (closed) its verdict, record, reward and
    Misprint, or (abandoned) that it settles nothing."""
    kept = playing.kept
    if view.waiting == "abandoned" and board is None:
        kept.closed, kept.checked = True, "abandoned"
        kept.save()
        return _abandoned(kept, view, "before its deal", None)
    assert board is not None
    if view.waiting != "abandoned" and view.closing is None:
        raise Untrusted(f"the league says table {kept.table} closed without its close")
    events = run(verified_events(client, manifest, kept.table))
    screen.say(
        f"the table has {'ended' if view.waiting == 'abandoned' else 'closed'}: checking the "
        "secret it reveals and replaying the whole table from the seed…"
    )
    try:
        fair = check_reveal(kept, events, board.actions, manifest.policies)
    except Unfair as exc:
        kept.closed, kept.checked = True, f"UNFAIR: {exc}"
        kept.save()
        raise Unfair(
            f"UNFAIR: the league did not deal this table fairly: {exc} (table {kept.table}; "
            f"its events and your requests are kept in {kept.path})"
        ) from None
    checked = (
        f"the league dealt fairly: its secret opens the commitment it showed before the seeds, "
        f"the seed ({fair.seed}) is derived from it and "
        + ("both players'" if kept.duel else "yours")
        + f', and all {len(board.actions)} actions replay from it (docs/formats.md, "The fair '
        'deal")'
    )
    if fair.abandoned is not None:
        kept.closed, kept.checked = True, "abandoned"
        kept.save()
        return _abandoned(kept, view, f"at ply {len(board.actions)}", checked)
    closing = view.closing
    assert closing is not None
    kept.closed, kept.checked = True, "fair"
    kept.save()
    path = record(opened, kept, fair)
    verdict = closing.verdict if kept.seat == 0 else FLIPPED[closing.verdict]
    awarded = misprint(opened, manifest, closing.misprint)
    landed = reward(opened, manifest, closing.reward, verdict, duel=kept.duel)
    kept.rewarded = landed.status != "pending"
    kept.save()
    state = board.state
    seats = ("you", playing.them) if kept.seat == 0 else (playing.them, "you")
    draw(screen, state, table_of(state, view), kept.seat, playing.them)
    for line in verdict_lines(state, seats):
        screen.say(line)
    s, f, h = closing.columns[kept.seat]
    return {
        "table": kept.table,
        "venue": kept.venue,
        "seat": kept.seat,
        "verdict": verdict,
        "columns": closing.columns,
        "seed": fair.seed,
        "actions": len(board.actions),
        "fair": True,
        "record": str(path),
        "misprint": None if closing.misprint is None else closing.misprint.status,
        "reward": landed.to_json(),
        "text": (
            f"table {kept.table} at {kept.venue}: {VERDICTS[verdict]} (your columns "
            f"Substance {s} Form {f} Holdings {h})\n{checked}"
            f"\nthe table is recorded: cz table replay {path}"
            + f"\n{landed.line(kept.table)}"
            + (f"\n{awarded}" if awarded else "")
        ),
    }


def _abandoned(kept: KeptTable, view: TableView, when: str, checked: str | None) -> dict[str, Any]:
    return {
        "table": kept.table,
        "venue": kept.venue,
        "abandoned": True,
        "fair": checked is not None,
        "text": (
            f"table {kept.table} at {kept.venue} was abandoned {when}: its move clock ran out "
            '(docs/formats.md, "The move clock"; docs/rulings.md L-31), and it settles nothing'
            + (f"\n{checked}, as far as it went" if checked else "")
        ),
    }


def _finish(args: argparse.Namespace, new: NewTable) -> int:
    screen = Screen.on(sys.stderr if args.json else sys.stdout)
    with opened_wallet() as opened:
        data = _play(args, opened, screen, new)
    if data.get("left"):
        if args.json:
            emit(args, data, "")
        return 130 if data["interrupted"] else 0
    text = data.pop("text")
    emit(args, data, text)
    return 0


def play_league(args: argparse.Namespace) -> int:
    """``cz play --league [VENUE] [--resume TABLE] [--auto [CHAIR]]``."""
    _refuse_offline_options(args)
    return _finish(args, NewTable(venue=args.league or None, portfolio=args.portfolio))


# -- cz duel ---------------------------------------------------------------------------------------


def duel_new(args: argparse.Namespace) -> int:
    """Open a duel: its join code for the other player, then the table as it is played."""
    venue = "duel-market" if args.market else "duel-base"
    return _finish(args, NewTable(venue=venue))


def _code(text: str) -> str:
    code = text.strip().upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        raise argparse.ArgumentTypeError(
            f"{text!r} is no join code: {CODE_LENGTH} characters of {CODE_ALPHABET} (no 0, 1, "
            "I or O)"
        )
    return code


def duel_join(args: argparse.Namespace) -> int:
    """Join a duel with the code its opener was given, then play it."""
    return _finish(args, NewTable(code=args.code))


def add_duel(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz duel new`` and ``cz duel join CODE``."""
    duel = commands.add_parser(
        "duel",
        help="a witnessed table between two players: cz duel new, cz duel join CODE",
        description=(
            "A duel: two keys at one table of the pinned league, no AI (docs/formats.md, "
            "Duels). One player opens it (cz duel new) and is told a join code, once; the "
            "other joins with it (cz duel join CODE). The league commits to its secret before "
            "either seed; each player's client draws its own 32 bytes; the deal comes from the "
            "three. You play with cz play's board and prompts; the other player's moves "
            "arrive from the league as they are played. Every move is signed by your key and "
            "kept in CZ_HOME/league-tables/ before it is sent; a duel cut off resumes with "
            "cz play --league --resume TABLE. Each request waits at most the move clock "
            "(5 minutes a move, 15 for the join): then the duel is abandoned and settles "
            "nothing. At the close the reveal is checked and the whole duel replayed. A duel "
            "pays no reward (L-33)."
        ),
    )
    sub = duel.add_subparsers(dest="duel_command", required=True, metavar="COMMAND")
    new = sub.add_parser(
        "new",
        parents=[JSON_FLAG],
        help="open a duel and wait for the other player",
        description=(
            "Open a duel (a base table; --market: a market table) and print its join code "
            "for the other player, then wait for them to join and play."
        ),
    )
    new.add_argument("--market", action="store_true", help="a market table (IV.2)")
    _auto(new)
    new.set_defaults(handler=duel_new)
    join = sub.add_parser(
        "join",
        parents=[JSON_FLAG],
        help="join a duel with its code, and play it",
        description="Take the second seat of the duel whose join code you were given.",
    )
    join.add_argument("code", type=_code, metavar="CODE", help="the 8-character join code")
    _auto(join)
    join.set_defaults(handler=duel_join)


def _auto(parser: argparse.ArgumentParser) -> None:

    parser.add_argument(
        "--auto",
        type=chair_number,
        nargs="?",
        const=AUTO_CHAIR,
        metavar="CHAIR",
        help="let this client's Chair (default XII) choose your moves, for scripts and demos",
    )


__all__ = ["DUEL_VENUES", "add_duel", "duel_join", "duel_new", "play_league"]
