"""Teaching at the table and ``cz table replay``: ``help``, ``rules``, ``card NAME``, ``why``,
the verdict explained, and a record stepped through move by move with the board drawn.

Everything said here is read from the engine (``game.window``: the position before and after a
move, the reckoning of the columns) and the catalog (``ledger.catalog``: a title's cost, set and
rarity); a card's text is read from the player's guide, ``docs/rules.md``, whose headings name
the book's sections and the cards (one source: nothing is copied here by hand).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.cz_board import Screen, draw
from game.window import actions as A
from game.window import format_action, parse_action, reckon, to_json
from game.window import titles as T
from game.window.errors import IllegalActionError, NotationError
from game.window.powers import POWER_OF
from game.window.records import convene, parse_record
from game.window.records import replay as whole_replay
from game.window.scoring import Verdict
from game.window.state import CHANCE, State
from ledger.catalog import BY_NAME, SET_RARITY, CardSet
from ledger.errors import DecodeError
from ledger.wire import parse_json

#: The player's guide: one heading per book section and per card.
RULES_DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
COLUMNS = ("Substance", "Form", "Holdings")
#: The largest record file ``cz table replay`` reads.
MAX_RECORD_BYTES = 1 << 20

HELP = (
    "at the table, besides an action (its number in the list, or its notation, e.g. build Tally):",
    "  help, ?      this list",
    "  rules        the turn in short, and where to read each rule (docs/rules.md)",
    "  card NAME    a certificate: its cost, set, rarity, text and powers (e.g. card Tally)",
    "  why          what the last move did: chains, hands, market, hoards, Seal and columns",
    "  q            leave the table (it then counts for nothing, docs/rulings.md L-19)",
)

RULES = (
    "the turn (docs/rules.md I.6): one action per turn, and you never pass; with nothing open "
    "you are compelled to accelerate. When the second seat has acted the Seal steps once; at 12 "
    "the table closes.",
    "the actions (I.7): build, collect, cut, swap, hold, ransom, convert, accelerate; a card's "
    "power (Books II, III) is an action of its own. card NAME shows what a card does.",
    "the close (I.9, I.10): each side reckons Substance, Form and Holdings; each column goes to "
    "the higher side or is level. Two or three columns win the table; anything else is a "
    "Balance. The columns are never added up.",
    "read it all in docs/rules.md: I.6 The turn, I.7 The actions, I.9 The three columns, "
    "I.10 The Balance, Book IV for the tables, and 'A worked table' at its end.",
)

_BOOK = {
    CardSet.BASE: "I.4",
    CardSet.FOLDED: "Book II",
    CardSet.LETTERED: "Book III, Set II",
    CardSet.BEGOTTEN: "Book III, Set III",
    CardSet.COUNTED: "Book III, Set IV",
    CardSet.SEALED: "Book III, Set V",
}


def _guide() -> str:
    try:
        return RULES_DOC.read_text(encoding="utf-8")
    except OSError:
        return ""


def _section(heading: re.Pattern[str]) -> list[str]:
    """The paragraphs under the first heading ``heading`` matches in docs/rules.md."""
    lines = _guide().splitlines()
    for i, line in enumerate(lines):
        if heading.match(line):
            body: list[str] = []
            for text in lines[i + 1 :]:
                if text.startswith("#") or text.strip() == "---":
                    break
                body.append(text)
            return [t for t in "\n".join(body).strip().split("\n\n") if t]
    return []


def title_named(text: str) -> str | None:
    """The catalog's title for ``text`` (any case), or None."""
    by_lower = {name.lower(): name for name in BY_NAME}
    return by_lower.get(text.strip().lower())


def card_lines(text: str) -> list[str]:
    """``card NAME``: the title's cost, set and rarity (ledger.catalog), its power as an action
    of the engine (game.window.actions) and its text (docs/rules.md)."""
    name = title_named(text)
    if name is None:
        return [f"no certificate is named {text.strip()!r} (cz store lists every title)"]
    cert = BY_NAME[name]
    where = _BOOK[cert.card_set]
    lines = [
        f"{name}: cost {cert.cost}, {cert.card_set.value} set "
        f"({SET_RARITY[cert.card_set].value}), docs/rules.md {where}"
    ]
    power = next(
        ((kind, section) for kind, (title, section) in POWER_OF.items() if T.NAMES[title] == name),
        None,
    )
    if power is not None and power[1].startswith("I.7 "):  # one of the base six's
        action = power[1].removeprefix("I.7 ")
        lines.append(
            f"  power: the action {action.lower()} while it stands face up in your "
            f"chain (docs/rules.md I.7 {action}):"
        )
        text_of = _section(re.compile(rf"^#### I\.7 {action}\b"))
    elif cert.card_set is CardSet.BASE:
        lines.append("  no power: it is simply worth its weight (docs/rules.md I.4)")
        text_of = []
    else:
        if power is not None:
            lines.append(
                f"  power: an action of its own, notation '{A.KIND_NAMES[power[0]]} "
                "...' (docs/formats.md)"
            )
        text_of = _section(re.compile(rf"^#### {re.escape(name.upper())} — {cert.cost}\b"))
    lines.extend("  " + " ".join(re.sub(r"[*`]", "", p).split()) for p in text_of)
    return lines


# -- why --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Move:
    """A move as the engine took it: the position before, the action, who took it."""

    before: State
    action: int
    actor: str


def _names(state: State, cards: list[int], faces: bool = False) -> str:
    shown = [
        state.title_of(c) if not faces or state.up[c] else f"({state.title_of(c)})" for c in cards
    ]
    return " · ".join(shown) or "-"


def _rule_of(action: int) -> str:
    kind = A.kind_of(action)
    if kind <= A.ACCELERATE:
        return f"docs/rules.md I.7 {A.KIND_NAMES[kind].upper()}"
    if kind == A.DRILL:
        return "the No-Go drill, docs/rules.md IV.4"
    if kind >= A.YIELD:
        return "a decision inside the action under way, docs/rules.md I.7"
    if kind in POWER_OF:
        return f"docs/rules.md, {T.NAMES[POWER_OF[kind][0]].upper()}"
    return "docs/rules.md I.7"


def _of(name: str) -> str:
    return "your" if name == "you" else f"{name}'s"


def why_lines(move: Move | None, seats: tuple[str, str]) -> list[str]:
    """``why``: what the last move changed, read from the engine's positions before and after."""
    if move is None:
        return ["no move yet: the table is as dealt (docs/rules.md I.5)"]
    before = move.before
    after = before.clone()
    after.apply(move.action)
    lines = [
        f"{move.actor} played '{format_action(before, move.action)}' on turn "
        f"{before.turn + 1} ({_rule_of(move.action)}); what it changed:"
    ]
    for seat in (0, 1):
        for what, cards, faces in (
            ("chain", "chains", True),
            ("hand", "hands", False),
            ("spoils", "spoils", False),
        ):
            b = _names(before, getattr(before, cards)[seat], faces)
            a = _names(after, getattr(after, cards)[seat], faces)
            if a != b:
                lines.append(f"  {_of(seats[seat])} {what}: {b}  →  {a}")
        if before.hoards[seat] != after.hoards[seat]:
            lines.append(
                f"  {_of(seats[seat])} hoard: {before.hoards[seat]} → {after.hoards[seat]}"
            )
    if before.market != after.market:
        lines.append(f"  market: {_names(before, before.market)}  →  {_names(after, after.market)}")
    if before.hostage != after.hostage:
        old = before.title_of(before.hostage) if before.hostage >= 0 else "none"
        new = after.title_of(after.hostage) if after.hostage >= 0 else "none"
        lines.append(f"  hostage: {old} → {new}")
    if before.plenum != after.plenum:
        lines.append(f"  plenum: {before.plenum} → {after.plenum}")
    if before.seal != after.seal:
        lines.append(f"  the Seal: {before.seal} → {after.seal} (the round ended, I.6)")
    cb, ca = before.columns(), after.columns()
    for seat in (0, 1):
        if cb[seat] != ca[seat]:
            lines.append(
                f"  {_of(seats[seat])} columns: "
                + ", ".join(
                    f"{n} {x}→{y}"
                    for n, x, y in zip(COLUMNS, cb[seat], ca[seat], strict=True)
                    if x != y
                )
            )
    pending = to_json(after)["pending"]
    if pending is not None:
        lines.append(f"  a {pending['step']} now waits on a decision")
    if len(lines) == 1:
        lines.append("  nothing visible on the board")
    return lines


# -- the verdict --------------------------------------------------------------------------------


def verdict_lines(state: State, seats: tuple[str, str]) -> list[str]:
    """Both sides' columns, who takes each and why the table ended as it did (I.9, I.10)."""
    r = reckon(state)
    width = max(len(s) for s in seats)
    lines = [
        "the columns at the close (docs/rules.md I.9):",
        f"  {'':{width}}  Substance  Form  Holdings",
    ]
    for seat in (0, 1):
        s, f, h = r.columns[seat]
        lines.append(f"  {seats[seat]:{width}}  {s:>9}  {f:>4}  {h:>8}")
    taken = []
    for i, name in enumerate(COLUMNS):
        x, y = r.columns[0][i], r.columns[1][i]
        taker = r.takers[i]
        if taker is None:
            taken.append(f"{name} level ({x} to {y})")
        elif x == y:
            taken.append(f"{name} level, claimed by {_of(seats[taker])} Balance (Book II BALANCE)")
        else:
            taken.append(f"{name} to {seats[taker]} ({max(x, y)} to {min(x, y)})")
    lines.append("  " + "; ".join(taken))
    wins = (r.takers.count(0), r.takers.count(1))
    if r.verdicts[0] is Verdict.BALANCE:
        lines.append(
            f"a Balance: columns taken {seats[0]} {wins[0]}, {seats[1]} {wins[1]}; "
            "neither takes two, so the table is Balanced, its own verdict "
            "(docs/rules.md I.9, I.10)"
        )
    else:
        winner = 0 if r.verdicts[0] is Verdict.WIN else 1
        words = ("none", "one", "two", "three")
        lines.append(
            f"{seats[winner]} win{'' if seats[winner] == 'you' else 's'} the table: "
            f"{words[wins[winner]]} columns of three to {words[wins[1 - winner]]} "
            "(docs/rules.md I.9: two or three columns win)"
        )
    return lines


# -- cz table replay --------------------------------------------------------------------------


def read_record(path: str) -> Any:
    """The JSON document in the record file ``path`` (``-``: stdin), at most
    :data:`MAX_RECORD_BYTES`."""
    from clients.wallet import bounded, read_bounded

    if path == "-":
        raw = bounded(sys.stdin.buffer.read(MAX_RECORD_BYTES + 1), MAX_RECORD_BYTES, "record")
    else:
        raw = read_bounded(path, MAX_RECORD_BYTES, "record")
    return parse_json(raw, what=f"the record {path}")


def _latest() -> str:
    from clients.wallet import WalletHome

    tables = WalletHome.default().directory / "tables"
    records = sorted(tables.glob("*.json")) if tables.is_dir() else []
    if not records:
        raise DecodeError(f"no RECORD named and none kept in {tables} (cz table replay --help)")
    return str(records[-1])


def replay(args: argparse.Namespace) -> int:
    """Step through a record move by move, the board drawn after each (``--json``: the final
    position, the columns and the verdict as one document)."""
    path = args.record if args.record is not None else _latest()
    record = parse_record(read_record(path))
    final = whole_replay(record)  # an illegal action is refused before anything is drawn
    if args.json:
        _print_final(final)
        return 0
    state = convene(record.deal)
    screen = Screen.on(sys.stdout)
    stepping = not args.all and screen.terminal and sys.stdin.isatty()
    seats = ("first seat", "second seat")
    screen.say(f"{path}: a {record.deal.table} table, {len(record.actions)} moves")
    draw(screen, state, None, 0, seats[1], kind=record.deal.table, me=seats[0])
    for number, text in enumerate(record.actions, 1):
        if stepping:
            answer = input("Enter for the next move, q to stop: ").strip().lower()
            if answer in ("q", "quit"):
                return 0
        action = _parsed(state, text)
        player = state.current_player
        actor = "the drill" if player == CHANCE else seats[player]
        screen.say(f"move {number}: {actor}: {format_action(state, action)}")
        state.apply(action)
        draw(screen, state, None, 0, seats[1], kind=record.deal.table, me=seats[0])
    if state.is_over:
        for line in verdict_lines(state, seats):
            screen.say(line)
    else:
        screen.say("the table is still open (the Seal has not closed it)")
    return 0


def _parsed(state: State, text: str) -> int:
    try:
        action = parse_action(state, text)
    except NotationError as exc:
        raise IllegalActionError(text, state.turn + 1, exc.diagnostics()) from None
    return action


def _print_final(state: State) -> None:
    r = reckon(state)
    value: dict[str, Any] = {
        "position": to_json(state),
        "columns": [{"substance": s, "form": f, "holdings": h} for s, f, h in r.columns],
        "verdict": [v.value for v in r.verdicts] if state.is_over else None,
    }
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
