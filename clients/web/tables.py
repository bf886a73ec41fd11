"""Tables in the browser (Book IV): the campaign's next table, an open Chair or Registrar,
played by clicks against the venue's AI; the No-Go drill as the timed 3×3 pattern of IV.4;
finished tables recorded and settled as ``cz play`` records and settles them, and replayed
step by step.

The engine (``game.window``) decides everything: the legal actions are the buttons, the AI of
``cz play`` (``opponent_for``) answers, the drill is judged by ``game.window.drill.judge`` with
the time measured here, from the moment the pattern's page is first served to the answer's
arrival. The board is the one ``cz play`` draws (``clients.cz_board``), as HTML; ``help``,
``rules``, ``card NAME`` and ``why`` are ``clients.cz_table``'s.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from clients.cz_play import (
    Played,
    _portfolio,
    _record,
    _reward_text,
    _table_kind,
    next_venue,
)
from clients.cz_public import current
from clients.cz_seats import TABLES_DIR
from clients.cz_session import opened_wallet
from clients.cz_table import (
    HELP,
    RULES,
    card_lines,
    read_record,
    verdict_lines,
    why_lines,
)
from clients.wallet import WalletHome
from clients.web.calls import with_wallet
from clients.web.launch import see, show, state
from clients.web.sitting import YOU, Drill, Sitting
from game.window import actions as A
from game.window import format_action, parse_action, reckon
from game.window.ai.roster import opponent_for
from game.window.campaign import (
    ROMAN,
    Campaign,
    CampaignRefusal,
    Venue,
    chair,
    convene,
    registrar,
    settle,
)
from game.window.drill import (
    SHOW_SECONDS,
    TIME_LIMIT_SECONDS,
    DrillOutcome,
    Pattern,
    generate_pattern,
    judge,
)
from game.window.economy.collection import Collection
from game.window.economy.prints import Finish
from game.window.records import convene as convene_record
from game.window.records import parse_record
from game.window.state import CHANCE, SEAL_CLOSE, State
from game.window.tables import Table
from ledger.catalog import ARCHIVE_SETS
from ledger.errors import LedgerError

routes = web.RouteTableDef()

#: Practice drills kept at once.
MAX_DRILLS = 16
_RECORD_NAME = re.compile(r"^[A-Za-z0-9._:-]{1,200}\.json$")


def _campaign() -> tuple[Campaign, Collection] | None:
    summary = current(WalletHome.default())
    if summary is None:
        return None
    return Campaign.from_json(summary["campaign"]), Collection.from_json(summary["unstamped"])


def _venue(choice: str, campaign: Campaign) -> Venue:
    """``next``, ``chair-N`` or ``registrar-SET``; an unopened venue is refused (IV.6, M-06)."""
    kind, _, name = choice.partition("-")
    if choice == "next":
        return next_venue(campaign)
    if kind == "chair" and name.isdigit() and 1 <= int(name) < len(ROMAN):
        venue = chair(int(name))
    elif kind == "registrar" and name in {s.value for s in ARCHIVE_SETS}:
        venue = registrar(next(s for s in ARCHIVE_SETS if s.value == name))
    else:
        raise CampaignRefusal(f"there is no venue {choice!r}")
    if not campaign.is_open(venue):
        raise CampaignRefusal(f"{venue.name} is still locked (cz campaign says what opens it)")
    return venue


# -- pages ----------------------------------------------------------------------------------


@routes.get("/play")
async def play_page(request: web.Request) -> web.Response:
    found = _campaign()
    venues: list[dict[str, Any]] = []
    nxt = None
    if found is not None:
        campaign, _ = found
        nxt = next_venue(campaign)
        for venue in campaign.open_venues():
            if venue.kind in ("chair", "registrar"):
                number = venue.number if venue.kind == "chair" else venue.card_set.value
                venues.append({"value": f"{venue.kind}-{number}", "name": venue.name})
    return show(
        request,
        "play.html",
        next=None if nxt is None else {"name": nxt.name, "table": _table_kind(nxt)},
        venues=venues,
        sitting=state(request).sitting,
        refusal=None,
    )


@routes.post("/play")
async def play(request: web.Request) -> web.Response:
    """Convene a table at the chosen venue (the seed drawn here unless given) and let the
    venue's AI move until the player must decide."""
    form = await request.post()
    launch = state(request)
    found = _campaign()
    if not launch.passphrase or found is None:
        return show(
            request,
            "refused.html",
            status=409,
            title="Play",
            refusal="unlock your wallet first: a finished table is recorded and paid into it",
        )
    campaign, collection = found
    try:
        venue = _venue(str(form.get("venue", "next")), campaign)
        typed = str(form.get("seed", "")).strip()
        seed = int(typed) if typed.isdigit() and int(typed) < 2**63 else secrets.randbits(63)
        portfolio = (
            _portfolio(argparse.Namespace(portfolio=None), collection)
            if venue.kind == "registrar"
            else ()
        )
        table = convene(venue, seed, portfolio)
    except LedgerError as exc:
        return show(request, "refused.html", status=409, title="Play", refusal=exc.diagnostics())
    sitting = Sitting(venue, seed, table, table.new_state(), opponent_for(venue, seed))
    await asyncio.to_thread(sitting.advance)
    launch.sitting = sitting
    return see(request, "/table")


def _card(state_: State, table: Table | None, card: int) -> dict[str, Any]:
    finish = Finish.STANDARD
    if table is not None and card < len(table.provenance):
        origin = table.provenance[card].print
        if origin is not None:
            finish = origin.finish
    return {"name": state_.title_of(card), "up": bool(state_.up[card]), "finish": finish.value}


def board(state_: State, table: Table | None, seats: tuple[str, str], kind: str) -> dict[str, Any]:
    """The board ``cz play`` draws, as data for the page: both chains (innermost first), hands,
    market, hostage, plenum, hoards, the Seal and the live columns."""
    columns = state_.columns()
    sides = []
    for seat in (1 - YOU, YOU):
        s, f, h = columns[seat]
        sides.append(
            {
                "name": seats[seat],
                "you": seat == YOU,
                "chain": [_card(state_, table, c) for c in state_.chains[seat]],
                "hand": [_card(state_, table, c) for c in state_.hands[seat]],
                "hoard": state_.hoards[seat],
                "columns": {"Substance": s, "Form": f, "Holdings": h},
            }
        )
    hostage = None
    if state_.hostage >= 0:
        hostage = {
            **_card(state_, table, state_.hostage),
            "from": seats[state_.hostage_owner] if state_.hostage_owner in (0, 1) else "?",
        }
    return {
        "kind": kind,
        "turn": state_.turn + 1,
        "seal": state_.seal,
        "seal_close": SEAL_CLOSE,
        "plenum": state_.plenum,
        "sides": sides,
        "market": [_card(state_, table, c) for c in state_.market],
        "hostage": hostage,
    }


@routes.get("/table")
async def table_page(request: web.Request) -> web.Response:
    sitting = state(request).sitting
    if sitting is None:
        return see(request, "/play")
    s = sitting.state
    legal: list[tuple[int, str]] = []
    if not s.is_over and sitting.drill is None and s.current_player == YOU:
        legal = [(a, format_action(s, a)) for a in s.legal_actions()]
    drill = None
    if sitting.drill is not None:
        sitting.drill.clock()
        drill = _drill_view(sitting.drill)
    verdict = verdict_lines(s, sitting.seats) if s.is_over else None
    return show(
        request,
        "table.html",
        sitting=sitting,
        board=board(s, sitting.table, sitting.seats, sitting.table.kind),
        legal=legal,
        replies=sitting.moves[sitting.seen :],
        earlier=sitting.moves[: sitting.seen],
        why=why_lines(sitting.last, sitting.seats),
        help=HELP,
        rules=RULES,
        drill=drill,
        verdict=verdict,
    )


@routes.post("/table/act")
async def act(request: web.Request) -> web.Response:
    """One of the legal actions, by its button; then the venue's replies."""
    launch = state(request)
    form = await request.post()
    async with launch.at_the_table:
        return await _act(request, str(form.get("action", "")))


async def _act(request: web.Request, typed: str) -> web.Response:
    launch = state(request)
    sitting = launch.sitting
    if sitting is None:
        return see(request, "/play")
    s = sitting.state
    if (
        s.is_over
        or sitting.drill is not None
        or s.current_player != YOU
        or not typed.isdigit()
        or int(typed) not in s.legal_actions()
    ):
        return show(
            request,
            "refused.html",
            status=409,
            title="The table",
            refusal="that action is not open now (the board may have moved on)",
        )
    sitting.seen = len(sitting.moves)
    sitting.take(int(typed), "you")
    await asyncio.to_thread(sitting.advance)
    await _close(launch.passphrase, sitting)
    return see(request, "/table")


async def _close(passphrase: str, sitting: Sitting) -> None:
    """At the close: recorded in CZ_HOME/tables/ and settled in the campaign, as cz play."""
    if not sitting.state.is_over or (sitting.closed is not None and sitting.closed["ok"]):
        return
    verdict = sitting.state.verdict(YOU)

    def work() -> dict[str, Any]:
        with opened_wallet() as opened:
            wallet = opened.wallet
            path = _record(
                opened,
                sitting.venue,
                sitting.seed,
                sitting.table,
                Played(sitting.state, list(sitting.actions)),
            )
            wallet.campaign, reward = settle(wallet.campaign, sitting.venue, verdict)
            opened.save()
            return {
                "ok": True,
                "verdict": verdict.value,
                "reward": _reward_text(reward),
                "record": path.name,
                "marks": wallet.campaign.collection.marks,
                "next": next_venue(wallet.campaign).name,
            }

    try:
        sitting.closed = await asyncio.to_thread(with_wallet, work, passphrase=passphrase)
    except LedgerError as exc:
        sitting.closed = {"ok": False, "refusal": exc.diagnostics()}


@routes.post("/table/settle")
async def settle_again(request: web.Request) -> web.Response:
    """Settle a closed table whose settling was refused (a locked wallet): under the table's
    lock, as every move and close is, so copies of this click settle it once."""
    launch = state(request)
    async with launch.at_the_table:
        if launch.sitting is not None:
            await _close(launch.passphrase, launch.sitting)
    return see(request, "/table")


@routes.post("/table/leave")
async def leave(request: web.Request) -> web.Response:
    """Leave the table: before its close it counts for nothing (L-19)."""
    state(request).sitting = None
    return see(request, "/play")


def _cells(form: Any) -> Pattern:
    marked = {int(v) for v in form.getall("cell", []) if str(v).isdigit() and int(v) < 9}
    return Pattern(frozenset(marked))


@routes.post("/table/drill")
async def table_drill(request: web.Request) -> web.Response:
    """The player's answer to the drill of their No-Go (IV.4), judged with the time taken."""
    arrived = time.monotonic()
    launch = state(request)
    form = await request.post()
    async with launch.at_the_table:
        return await _drilled(request, _cells(form), arrived)


async def _drilled(request: web.Request, answer: Pattern, arrived: float) -> web.Response:
    launch = state(request)
    sitting = launch.sitting
    if sitting is None or sitting.drill is None:
        return see(request, "/table")
    drill = sitting.drill
    elapsed = arrived - drill.clock()
    outcome = judge(drill.pattern, answer, elapsed)
    sitting.drill = None
    sitting.seen = len(sitting.moves)
    sitting.take(A.encode(A.DRILL, 1 if outcome is DrillOutcome.SUCCESS else 0), "the drill")
    sitting.moves[-1] = (
        "the drill",
        f"{outcome.value} after {elapsed:.1f} s (the pattern was {drill.pattern.notation()})",
    )
    await asyncio.to_thread(sitting.advance)
    await _close(launch.passphrase, sitting)
    return see(request, "/table")


# -- the drill, for practice ---------------------------------------------------------------


def _drill_view(drill: Drill) -> dict[str, Any]:
    return {
        "lit": sorted(drill.pattern.lit),
        "show": SHOW_SECONDS,
        "limit": TIME_LIMIT_SECONDS,
    }


@routes.get("/drill")
async def drill_page(request: web.Request) -> web.Response:
    return show(request, "drill.html", ident=None, drill=None, outcome=None)


@routes.post("/drill")
async def drill_start(request: web.Request) -> web.Response:
    drills = state(request).drills
    while len(drills) >= MAX_DRILLS:
        drills.pop(next(iter(drills)))
    ident = secrets.token_urlsafe(12)
    drills[ident] = Drill(generate_pattern(secrets.token_hex(16)))
    return see(request, f"/drill/{ident}")


@routes.get("/drill/{ident}")
async def drill_shown(request: web.Request) -> web.Response:
    drill = state(request).drills.get(request.match_info["ident"])
    if drill is None:
        return see(request, "/drill")
    drill.clock()
    return show(
        request,
        "drill.html",
        ident=request.match_info["ident"],
        drill=_drill_view(drill),
        outcome=None,
    )


@routes.post("/drill/{ident}")
async def drill_answer(request: web.Request) -> web.Response:
    drill = state(request).drills.pop(request.match_info["ident"], None)
    if drill is None:
        return see(request, "/drill")
    form = await request.post()
    elapsed = time.monotonic() - drill.clock()
    answer = _cells(form)
    outcome = judge(drill.pattern, answer, elapsed)
    return show(
        request,
        "drill.html",
        ident=None,
        drill=None,
        outcome={
            "value": outcome.value,
            "elapsed": f"{elapsed:.1f}",
            "pattern": drill.pattern.notation(),
            "answer": answer.notation(),
            "lit": sorted(drill.pattern.lit),
            "limit": TIME_LIMIT_SECONDS,
        },
    )


@routes.get("/drill.css")
async def drill_css(request: web.Request) -> web.Response:
    """The drill's timings, from game.window.drill: shown for SHOW_SECONDS, timed to
    TIME_LIMIT_SECONDS."""
    text = (
        f".drill .cell.lit {{ animation: lit {SHOW_SECONDS:g}s step-end both; }}\n"
        f".drill .cover {{ animation: cover {SHOW_SECONDS:g}s step-end both; }}\n"
        f".drill .timer > span {{ animation: timer {TIME_LIMIT_SECONDS:g}s linear both; }}\n"
    )
    return web.Response(text=text, content_type="text/css")


# -- help at hand ---------------------------------------------------------------------------


@routes.get("/card")
async def card(request: web.Request) -> web.Response:
    name = request.query.get("name", "")[:64]
    return show(request, "card.html", name=name, lines=card_lines(name) if name else [])


# -- records and replays --------------------------------------------------------------------


def _records() -> list[Path]:
    directory = WalletHome.default().directory / TABLES_DIR
    return sorted(directory.glob("*.json"), reverse=True) if directory.is_dir() else []


@routes.get("/tables")
async def tables(request: web.Request) -> web.Response:
    return show(request, "tables.html", records=[p.name for p in _records()])


@routes.get("/tables/{name}")
async def replay(request: web.Request) -> web.Response:
    """A finished table stepped through: the board after move ``step``, the moves so far."""
    name = request.match_info["name"]
    found = {p.name: p for p in _records()}
    if not _RECORD_NAME.match(name) or name not in found:
        raise web.HTTPNotFound(text="no such table record")
    try:
        record = parse_record(read_record(str(found[name])))
        position = convene_record(record.deal)
        typed = request.query.get("step", "0")
        step = min(int(typed) if typed.isdigit() else 0, len(record.actions))
        moves = []
        seats = ("first seat", "second seat")
        for text in record.actions[:step]:
            action = parse_action(position, text)
            player = position.current_player
            moves.append(("the drill" if player == CHANCE else seats[player], text))
            position.apply(action)
    except LedgerError as exc:
        return show(request, "refused.html", status=409, title="Replay", refusal=exc.diagnostics())
    over = position.is_over
    return show(
        request,
        "replay.html",
        name=name,
        step=step,
        total=len(record.actions),
        moves=moves,
        board=board(position, None, seats, record.deal.table),
        verdict=verdict_lines(position, seats) if over else None,
        columns=reckon(position).columns,
    )
