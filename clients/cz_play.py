"""``cz play``, ``cz campaign``, ``cz store``, ``cz bundle open``: the offline game (Book IV, V.5).

``cz play`` convenes a table at a venue of the campaign (``game.window.campaign``), draws it
in the terminal, asks the player for each decision (a number from the list of legal actions, or
the notation of docs/formats.md), runs the No-Go drill as a timed 3×3 grid (IV.4,
``game.window.drill``), records the finished table (a ``cz-table-record/1`` file beside the
wallet) and settles it in the campaign, whose reward joins the collection; the wallet is saved
once, at the close. A table left before its close is neither recorded nor settled
(docs/rulings.md, L-19). The store (``game.window.economy.store``) and bundles are the offline
path of V.5: unstamped marks buy unstamped prints, finish upgrades and sealed bundles, saved
after each change.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clients.cz_board import Screen, draw
from clients.cz_public import print_item
from clients.cz_seats import AUTO_CHAIR, TABLES_DIR, Left, Person, chair_number
from clients.cz_session import (
    JSON_FLAG,
    Opened,
    emit,
    opened_wallet,
    read_only,
    seed,
)
from clients.cz_table import Move, verdict_lines
from game.window import actions as A
from game.window import format_action, record_json
from game.window.ai.player import AIPlayer
from game.window.ai.roster import CHAIR_STRENGTH, chair_player, opponent_for, strength_at
from game.window.campaign import (
    ROMAN,
    Campaign,
    CampaignRefusal,
    Reward,
    Venue,
    all_venues,
    chair,
    convene,
    registrar,
    settle,
)
from game.window.drill import (
    SHOW_SECONDS,
    TIME_LIMIT_SECONDS,
    DrillOutcome,
)
from game.window.economy import store
from game.window.economy.collection import Collection
from game.window.economy.prices import BUNDLE_PRICE, BUNDLE_PRINTS, SINGLE_PRICE, UPGRADE_PRICE
from game.window.economy.prints import Finish
from game.window.errors import DealError
from game.window.registrars import HOUSE_TITLES, player_portfolio
from game.window.scoring import Verdict
from game.window.state import CHANCE, State
from game.window.tables import Holding, Table
from ledger.catalog import ARCHIVE_SETS, BY_NAME, PLAYING, CardSet, Rarity

#: ``--json`` on a ``cz store`` subcommand, which leaves ``cz store --json buy ...`` as given.
_SUB_JSON = argparse.ArgumentParser(add_help=False)
_SUB_JSON.add_argument(
    "--json",
    action="store_true",
    default=argparse.SUPPRESS,
    help="print the result as one JSON document (for scripts)",
)


# -- small helpers ------------------------------------------------------------------------------


def _registrar_set(text: str) -> CardSet:
    names = {s.value: s for s in ARCHIVE_SETS}
    if text.strip().lower() in names:
        return names[text.strip().lower()]
    raise argparse.ArgumentTypeError(f"{text!r} is no Registrar: one of {', '.join(names)}")


def _done(campaign: Campaign, venue: Venue) -> bool:
    """A venue is behind the player once settled (a win or Balance, IV.1, IV.5) or, for a
    Chair, beaten (a win, IV.6, M-07)."""
    tally = campaign.tally(venue)
    return tally.wins > 0 if venue.kind == "chair" else tally.settled


def next_venue(campaign: Campaign) -> Venue:
    """The campaign's next table: the first open venue on the path not yet behind the player
    (the Twelfth Chair once everything is). Once the market seal is broken the fourth clerk's
    table is optional (IV.1: three of four), so the path goes on to the Assessor's."""
    for venue in all_venues():
        optional = venue.kind == "clerk" and campaign.market_seal_broken()
        if campaign.is_open(venue) and not _done(campaign, venue) and not optional:
            return venue
    return chair(len(ROMAN) - 1)


def _reward_json(reward: Reward) -> dict[str, Any]:
    return {
        "marks": reward.marks,
        "prints": [print_item(p) for p in reward.prints],
        "bundles": reward.bundles,
        "reasons": list(reward.reasons),
    }


def _reward_text(reward: Reward) -> str:
    parts = [f"M{reward.marks}"]
    if reward.prints:
        parts.append(", ".join(p.label() for p in reward.prints))
    if reward.bundles:
        parts.append(f"{reward.bundles} sealed bundle" + ("s" if reward.bundles > 1 else ""))
    return " + ".join(parts)


def _table_kind(venue: Venue) -> str:
    if venue.kind == "clerk":
        return "base"
    return "portfolio" if venue.kind == "registrar" else "market"


# -- cz campaign --------------------------------------------------------------------------------


def campaign_view(campaign: Campaign) -> tuple[dict[str, Any], str]:
    """The campaign's progress as JSON and as text: the record, the next table, its rewards."""
    won = sum(t.wins for _, t in campaign.record)
    lost = sum(t.losses for _, t in campaign.record)
    balanced = sum(t.balances for _, t in campaign.record)
    venue = next_venue(campaign)
    rewards = {v.value: settle(campaign, venue, v)[1] for v in Verdict}
    collection = campaign.collection
    data = {
        "tables": {"won": won, "lost": lost, "balanced": balanced},
        "record": campaign.to_json()["record"],
        "open": [v.name for v in campaign.open_venues()],
        "next": {
            "venue": venue.name,
            "table": _table_kind(venue),
            "rewards": {k: _reward_json(r) for k, r in rewards.items()},
        },
        "marks": collection.marks,
        "bundles": collection.bundles,
    }
    lines = [f"tables won {won}, lost {lost}, Balanced {balanced} (counted apart, IV.6)"]
    for v in all_venues():
        if not campaign.is_open(v):
            continue
        t = campaign.tally(v)
        state = "behind you" if _done(campaign, v) else "open"
        lines.append(
            f"  {v.name:<20} {t.wins} won  {t.losses} lost  {t.balances} Balanced  ({state})"
        )
    lines.append(
        f"next table: {venue.name} ({_table_kind(venue)} table); a win pays "
        f"{_reward_text(rewards['win'])}, a Balance {_reward_text(rewards['balance'])}, "
        "a loss nothing"
    )
    lines.append(f"you hold M{collection.marks} unstamped and {collection.bundles} sealed bundles")
    return data, "\n".join(lines)


def campaign_command(args: argparse.Namespace) -> int:
    """The campaign's record (from the public summary: no passphrase)."""
    campaign = read_only(
        lambda summary: Campaign.from_json(summary["campaign"]), lambda wallet: wallet.campaign
    )
    data, text = campaign_view(campaign)
    emit(args, data, text)
    return 0


# -- cz store, cz bundle open ------------------------------------------------------------------


def _store_data(collection: Collection) -> dict[str, Any]:
    return {
        "marks": collection.marks,
        "singles": {r.value: SINGLE_PRICE[r] for r in Rarity},
        "titles": {r.value: [c.name for c in PLAYING if c.rarity is r] for r in Rarity},
        "upgrades": {f.value: p for f, p in UPGRADE_PRICE.items()},
        "bundle": BUNDLE_PRICE,
        "upgradable": [
            {"index": i + 1, **print_item(p)}
            for i, p in enumerate(collection.prints)
            if not p.stamped and p.finish is not Finish.MISPRINT and p.finish is not Finish.HOLOFOIL
        ],
    }


def store_list(args: argparse.Namespace) -> int:
    """The price list, what the player can pay, and their unstamped prints by index (from
    the public summary: no passphrase)."""
    collection = read_only(
        lambda summary: Collection.from_json(summary["unstamped"]), lambda wallet: wallet.collection
    )
    data = _store_data(collection)
    lines = [f"you hold M{collection.marks} unstamped marks (V.5: spendable only here)", "singles:"]
    for rarity in Rarity:
        titles = data["titles"][rarity.value]
        lines.append(f"  M{SINGLE_PRICE[rarity]:<4} {rarity.value}: {', '.join(titles)}")
    lines.append(
        "finish upgrades (an unstamped print): "
        + ", ".join(f"{f.value} M{p}" for f, p in UPGRADE_PRICE.items())
    )
    lines.append(f"a sealed bundle ({BUNDLE_PRINTS} prints): M{BUNDLE_PRICE}")
    if data["upgradable"]:
        lines.append("your prints that can be upgraded (cz store upgrade INDEX FINISH):")
        lines.extend(
            f"  {item['index']:>3}. {collection.prints[item['index'] - 1].label()}"
            for item in data["upgradable"]
        )
    emit(args, data, "\n".join(lines))
    return 0


def _title(text: str) -> str:
    by_lower = {name.lower(): name for name in BY_NAME}
    return by_lower.get(text.strip().lower(), text)


def _bought(
    args: argparse.Namespace, opened: Opened, before: Collection, what: str, extra: dict[str, Any]
) -> int:
    opened.save()
    after = opened.wallet.collection
    paid = before.marks - after.marks
    emit(
        args,
        {"paid": paid, "marks": after.marks, **extra},
        f"{what} for M{paid}; you hold M{after.marks} unstamped",
    )
    return 0


def store_buy(args: argparse.Namespace) -> int:
    """Buy one unstamped standard print of TITLE with unstamped marks."""
    title = _title(args.title)
    with opened_wallet() as opened:
        wallet = opened.wallet
        before = wallet.collection
        after = store.buy_single(before, title)
        wallet.campaign = _with_collection(wallet.campaign, after)
        bought = after.prints[-1]
        return _bought(
            args, opened, before, f"bought {bought.label()}", {"print": print_item(bought)}
        )


def store_upgrade(args: argparse.Namespace) -> int:
    """Raise the finish of the unstamped print numbered INDEX (as ``cz store`` lists them)."""
    with opened_wallet() as opened:
        wallet = opened.wallet
        before = wallet.collection
        if not 1 <= args.index <= len(before.prints):
            raise store.StoreRefusal(
                f"there is no print number {args.index}: cz store lists yours by number"
            )
        after = store.upgrade(before, args.index - 1, Finish(args.finish))
        wallet.campaign = _with_collection(wallet.campaign, after)
        raised = after.prints[args.index - 1]
        return _bought(
            args, opened, before, f"raised to {raised.label()}", {"print": print_item(raised)}
        )


def store_bundle(args: argparse.Namespace) -> int:
    """Buy one sealed bundle with unstamped marks (never with notes: M-01)."""
    with opened_wallet() as opened:
        wallet = opened.wallet
        before = wallet.collection
        after = store.buy_bundle(before)
        wallet.campaign = _with_collection(wallet.campaign, after)
        return _bought(
            args,
            opened,
            before,
            f"bought a sealed bundle (you hold {after.bundles}; cz bundle open)",
            {"bundles": after.bundles},
        )


def bundle_open(args: argparse.Namespace) -> int:
    """Open one sealed bundle: its three prints join the collection (V.5 odds)."""
    seed = secrets.token_hex(16)  # drawn from the OS: nobody chooses what a bundle holds
    with opened_wallet() as opened:
        wallet = opened.wallet
        after, prints = store.open_bundle(wallet.collection, seed)
        wallet.campaign = _with_collection(wallet.campaign, after)
        opened.save()
    lines = [
        "the bundle held:",
        *(f"  {p.label()}" for p in prints),
        f"{after.bundles} sealed bundles left",
    ]
    emit(
        args,
        {"prints": [print_item(p) for p in prints], "bundles": after.bundles, "seed": seed},
        "\n".join(lines),
    )
    return 0


def _with_collection(campaign: Campaign, collection: Collection) -> Campaign:
    return replace(campaign, collection=collection)


# -- the seats ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Seat:
    """An AI at a seat, its moves shown as they are taken."""

    ai: AIPlayer
    name: str
    screen: Screen | None

    def decide(self, state: State) -> int:
        action = self.ai.decide(state)
        if self.screen is not None:
            self.screen.say(f"{self.name}: {format_action(state, action)}")
        return action

    def answer_drill(self) -> DrillOutcome:
        outcome = self.ai.answer_drill()
        if self.screen is not None:
            self.screen.say(f"{self.name} answers the No-Go drill: {outcome.value}")
        return outcome


@dataclass(slots=True)
class Played:
    """A table played to its close: the final position and its actions in notation."""

    state: State
    actions: list[str] = field(default_factory=list)


def play_table(state: State, seats: Sequence[Person | Seat]) -> Played:
    """``game.window.tables.play_out`` with the notation kept and a person who may leave
    (:class:`Left`): each decision by the seat that must decide, the drill answered by the
    challenger (IV.4)."""
    played = Played(state)
    while not state.is_over:
        player = state.current_player
        if player == CHANCE:
            assert state.pending is not None  # a chance node is a pending drill
            success = seats[state.pending[1]].answer_drill() is DrillOutcome.SUCCESS
            action = A.encode(A.DRILL, 1 if success else 0)
        else:
            action = seats[player].decide(state)
        played.actions.append(format_action(state, action))
        before = state.clone()
        state.apply(action)
        actor = (
            "the drill"
            if player == CHANCE
            else (
                "you" if isinstance(seats[player], Person) else getattr(seats[player], "name", "?")
            )
        )
        for seat in seats:
            if isinstance(seat, Person):
                seat.last = Move(before, action, actor)
    return played


# -- cz play --------------------------------------------------------------------------------------


def _venue(args: argparse.Namespace, campaign: Campaign) -> Venue:
    if args.chair is not None:
        venue = chair(args.chair)
    elif args.registrar is not None:
        venue = registrar(args.registrar)
    else:
        return next_venue(campaign)
    if not campaign.is_open(venue):
        if venue.kind == "registrar" or venue.number == 1:
            before = "settle the Assessor's table first (M-06)"
        else:
            before = f"beat chair-{ROMAN[venue.number - 1]} first (IV.6, M-07)"
        raise CampaignRefusal(f"{venue.name} is still locked: {before}")
    return venue


def _portfolio(args: argparse.Namespace, collection: Collection) -> tuple[Holding, ...]:
    """The player's eight at a Registrar's table: ``--portfolio`` if given, else the Assessor's
    thirteen the player holds prints of first (book order), completed with house copies (M-11)."""
    if args.portfolio:
        titles = [_title(t) for t in args.portfolio.split(",")]
    else:
        held = collection.titles()
        titles = sorted(HOUSE_TITLES, key=lambda t: held[t] == 0)[:8]
    return player_portfolio(collection, titles)


def _record(opened: Opened, venue: Venue, seed: int, table: Table, played: Played) -> Path:
    directory = opened.home.directory / TABLES_DIR
    directory.mkdir(mode=0o700, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = directory / f"{stamp}-{venue.name}-{seed}.json"
    record = record_json(table.deal_record(), played.actions)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def play(args: argparse.Namespace) -> int:
    """Play one table at a venue of the campaign and settle it (IV.1–IV.6)."""
    if args.league is not None or args.resume is not None:
        from clients.cz_league_play import play_league

        return play_league(args)
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    screen = Screen.on(sys.stderr if args.json else sys.stdout)
    you = 0  # the player sits first at every venue (M-12)
    with opened_wallet() as opened:
        wallet = opened.wallet
        venue = _venue(args, wallet.campaign)
        if args.portfolio and venue.kind != "registrar":
            raise DealError(f"--portfolio is for a Registrar's table, not {venue.name}'s (IV.3)")
        portfolio = _portfolio(args, wallet.collection) if venue.kind == "registrar" else ()
        table = convene(venue, seed, portfolio)
        opponent = Seat(opponent_for(venue, seed), venue.name, screen)
        shown = None if args.auto is not None and args.json else screen
        if args.auto is not None:
            mine = chair_player(args.auto, f"auto:{seed}", strength_at(venue).drill_competence)
            person: Person | Seat = Seat(mine, f"you (Chair {ROMAN[args.auto]})", shown)
            opponent.screen = shown
        else:
            person = Person(screen, table, you, venue.name, f"play:{seed}:drill")
        screen.say(f"{venue.name}: a {table.kind} table, seed {seed}; you sit first")
        seats = [person, opponent] if you == 0 else [opponent, person]
        try:
            played = play_table(table.new_state(), seats)
        except Left:
            screen.say(
                "you left the table before its close: nothing is recorded or paid "
                "(docs/rulings.md L-19)"
            )
            return 0
        state = played.state
        verdict = state.verdict(you)
        path = _record(opened, venue, seed, table, played)
        wallet.campaign, reward = settle(wallet.campaign, venue, verdict)
        opened.save()
        after = wallet.campaign
    seat_names = ("you", venue.name) if you == 0 else (venue.name, "you")
    if shown is not None:
        draw(screen, state, table, you, venue.name)
        for line in verdict_lines(state, seat_names):
            screen.say(line)
    s, f, h = state.columns()[you]
    data = {
        "venue": venue.name,
        "table": table.kind,
        "seed": seed,
        "verdict": verdict.value,
        "columns": [list(c) for c in state.columns()],
        "turns": state.turn,
        "record": str(path),
        "reward": _reward_json(reward),
        "marks": after.collection.marks,
        "next": next_venue(after).name,
    }
    text = (
        f"{venue.name}: {verdict.value} (your columns Substance {s} Form {f} Holdings {h}); "
        f"paid {_reward_text(reward)}; you hold M{after.collection.marks} unstamped\n"
        f"the table is recorded in {path} (cz table replay {path})\n"
        f"next table: {next_venue(after).name}"
    )
    emit(args, data, text)
    return 0


# -- registration -------------------------------------------------------------------------------


def add_play(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz play``, ``cz campaign``, ``cz store`` and ``cz bundle``."""
    chairs = ", ".join(
        f"{ROMAN[n]} ({s.node_budget} nodes, {s.error_rate:g} error)"
        for n, s in CHAIR_STRENGTH.items()
    )
    p = commands.add_parser(
        "play",
        parents=[JSON_FLAG],
        help="play a table of the campaign in the terminal",
        description=(
            "Play one table against the AI of a venue: the campaign's next table (default), a "
            "Chair of the Standing Table (--chair, IV.6) or a Registrar (--registrar, IV.5). "
            "The table is drawn after each move: both chains (innermost first; a face-down card "
            "in parentheses), hands, market, hostage, plenum, hoards, the Seal and the live "
            "columns. Choose an action by its number or type its notation (docs/formats.md, "
            "e.g. 'build Tally'); q leaves the table, which then counts for nothing (L-19). "
            "At the prompt: help (or ?), rules (where to read them: docs/rules.md), card NAME "
            "(a certificate's cost, set, power and text), why (what the last move changed). A "
            "No-Go of yours sets the drill (IV.4): the 3×3 pattern is shown for "
            f"{SHOW_SECONDS:g} s, then type it as three rows of 0/1 (101/010/001) within "
            f"{TIME_LIMIT_SECONDS:g} s. At the close both sides' columns are shown and the "
            "rule that decided (docs/rules.md I.9). A finished table is recorded in "
            "CZ_HOME/tables/ (cz table replay steps through it) and settled: its reward "
            "joins your collection (see cz campaign). With --league VENUE the table is played at "
            "your pinned league instead, witnessed: dealt by commit-reveal, each move signed by "
            "your key, the reveal checked at the close; its rewards are the league's. Chairs: "
            + chairs
        ),
    )
    venue = p.add_mutually_exclusive_group()
    venue.add_argument(
        "--chair",
        type=chair_number,
        metavar="NAME",
        help="play Chair NAME (I..XII); it must be open (beat the one before)",
    )
    venue.add_argument(
        "--registrar",
        type=_registrar_set,
        metavar="NAME",
        help="play the Registrar of a set: lettered, begotten, counted, sealed",
    )
    p.add_argument(
        "--portfolio",
        metavar="T1,T2,...",
        help="your eight titles at a Registrar's table (default: your prints of the "
        "Assessor's thirteen first, then house copies, M-11; at the league, eight stamped "
        "prints, those outside the Registrar's set first)",
    )
    p.add_argument(
        "--auto",
        type=chair_number,
        nargs="?",
        const=AUTO_CHAIR,
        metavar="CHAIR",
        help=f"let this client's Chair (default {ROMAN[AUTO_CHAIR]}) play your seat, "
        "for scripts and demos",
    )
    p.add_argument(
        "--seed",
        type=seed,
        metavar="N",
        help="the table's seed (deal, AIs, drills): the same seed, the same table",
    )
    p.add_argument(
        "--league",
        nargs="?",
        const="",
        metavar="VENUE",
        help="play a witnessed table at your pinned league instead (cz league set URL): "
        "clerk-1..clerk-4, assessor, chair-I..chair-XII, or registrar-SET with eight of your "
        "stamped prints (--portfolio names their titles); dealt by commit-reveal, every move "
        "signed by your key and kept in CZ_HOME/league-tables/ before it is sent, the reveal "
        "checked at the close (docs/formats.md, Witnessed tables)",
    )
    p.add_argument(
        "--resume",
        metavar="TABLE",
        help="take up an interrupted witnessed table (its id, as cz play --league printed "
        "it): a move whose answer was lost is sent again, the very same signed request",
    )
    p.set_defaults(handler=play)

    c = commands.add_parser(
        "campaign",
        parents=[JSON_FLAG],
        help="your campaign: tables won, next table, rewards",
        description=(
            "The campaign of Book IV: the clerks' base tables (settle three of four and the "
            "market seal breaks), the Assessor's market table, then the four Registrars and the "
            "Standing Table's twelve Chairs (beat Chair n to open Chair n+1). Wins, losses and "
            "Balances are counted apart. Shows the record, the next table and what it pays."
        ),
    )
    c.set_defaults(handler=campaign_command)

    s = commands.add_parser(
        "store",
        parents=[JSON_FLAG],
        help="the offline store: prints, upgrades, bundles for marks",
        description=(
            "The offline store (V.5): unstamped marks, earned at the tables, buy unstamped "
            "prints (singles by rarity M30/M60/M120/M240), finish upgrades (gilt M80, holofoil "
            "M200) and sealed bundles (M50). Without a subcommand: the price list and your "
            "upgradable prints. Too few marks is refused and nothing is spent."
        ),
    )
    s.set_defaults(handler=store_list)
    sub = s.add_subparsers(dest="store_command", metavar="COMMAND")
    buy = sub.add_parser(
        "buy",
        parents=[_SUB_JSON],
        help="buy one unstamped print of TITLE",
        description="Buy one unstamped standard print of TITLE for marks.",
    )
    buy.add_argument("title", metavar="TITLE", help="the certificate's title, e.g. Tally")
    buy.set_defaults(handler=store_buy)
    up = sub.add_parser(
        "upgrade",
        parents=[_SUB_JSON],
        help="raise an unstamped print's finish",
        description=(
            "Raise the finish of your unstamped print INDEX (as cz store numbers "
            "them) to FINISH; priced by the finish reached (M-03)."
        ),
    )
    up.add_argument("index", type=int, metavar="INDEX", help="the print's number in cz store")
    up.add_argument(
        "finish",
        choices=[f.value for f in UPGRADE_PRICE],
        metavar="FINISH",
        help="gilt or holofoil",
    )
    up.set_defaults(handler=store_upgrade)
    bun = sub.add_parser(
        "bundle",
        parents=[_SUB_JSON],
        help="buy a sealed bundle for M50",
        description="Buy one sealed bundle for unstamped marks (M-01).",
    )
    bun.set_defaults(handler=store_bundle)

    b = commands.add_parser(
        "bundle",
        help="open your sealed bundles",
        description="Sealed bundles: earned at tables or bought for marks.",
    )
    bsub = b.add_subparsers(dest="bundle_command", required=True, metavar="COMMAND")
    opener = bsub.add_parser(
        "open",
        parents=[JSON_FLAG],
        help="open one sealed bundle: three prints",
        description=(
            "Open one sealed bundle with a seed drawn from the OS: three unstamped prints, each "
            "rarity 50% common / 30% uncommon / 17% rare / 3% sealed and finish 70% standard / "
            "20% gilt / 10% holofoil (V.5)."
        ),
    )
    opener.set_defaults(handler=bundle_open)
