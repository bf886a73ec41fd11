"""``cz charter``: deck validation, play and replay for the charter rulebook's game.

``cz charter validate DECK --charter CHARTER`` explains every way a deck fails its charter, one
line each on stderr, and exits 2; ``cz charter play DECK_A DECK_B [...]`` plays a game in the
terminal (a search AI at every seat not named by ``--human``) and prints its record as JSON on
stdout, with a result line (who won and why) on stderr; a human seat sees the others' moves,
the table (what stands on what, pools, the stack with targets, who attacks what) and may ask
``help``, ``card NAME``, ``table`` and ``log``. ``cz charter replay RECORD`` replays a record
and prints the final position, or with ``--steps`` every step and the table after it. DECK,
CHARTER and RECORD are paths to JSON files, or (decks and charters) the names of the packaged
sample (docs/charter.md). Every refusal is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from game.charter import (
    CharterViolation,
    NotationError,
    State,
    check_deck,
    format_action,
    library,
    load_charter,
    load_deck,
    new_game,
    outcome,
    parse_action,
    parse_record,
    record_json,
    replay,
    to_json,
)
from game.charter.cards import ATTRIBUTES, TYPE_NAMES
from game.charter.charters import Charter, Deck
from game.charter.errors import IllegalActionError
from game.charter.records import Record, opening
from game.charter.search import CharterAI
from game.charter.state import CARD_ITEM, CONSEQUENCE, PHASE_NAMES, RESERVE_ITEM
from ledger.errors import DecodeError, SchemaError
from ledger.wire import parse_json

#: The largest deck, charter or record file read.
MAX_FILE_BYTES = 1 << 20


def _read_json(path: str, what: str) -> Any:
    from clients.wallet import read_bounded

    return parse_json(read_bounded(path, MAX_FILE_BYTES, what), what=f"the {what} {path}")


def _is_file(text: str) -> bool:
    return text.endswith(".json") or "/" in text or Path(text).is_file()


def _charter(text: str) -> Charter:
    if not _is_file(text):
        return library.charter(text)
    data = _read_json(text, "charter")
    name = data.get("card_set") if isinstance(data, dict) else None
    if not isinstance(name, str) or name not in library.card_set_names():
        raise DecodeError(f"{text}: the charter names no packaged card set")
    return load_charter(data, library.card_set(name))


def _deck(text: str) -> Deck:
    return load_deck(_read_json(text, "deck")) if _is_file(text) else library.deck(text)


def charter_validate(args: argparse.Namespace) -> int:
    """Judge a deck against a charter; every failure is one line on stderr, exit 2."""
    charter = _charter(args.charter)
    deck = _deck(args.deck)
    try:
        check_deck(deck, charter, library.card_set(charter.card_set))
    except CharterViolation as exc:
        for failure in exc.failures:
            sys.stderr.write(f"cz: deck {deck.name!r} against {charter.name!r}: {failure}\n")
        return 2
    sys.stdout.write(f"deck {deck.name!r} satisfies charter {charter.name!r}\n")
    return 0


_HELP = """\
At the prompt, type one legal action in the notation (docs/charter.md), or:
  help, ?       this help
  card NAME     a card's type, attributes, price, production, upkeep and text
  table         the table again
  log           every move of the game so far
Cards are NAME#ID; '*' marks a committed card, [n] its damage counters."""


def _price_text(s: State, price: Any) -> str:
    """A price in words: named identities, additional requirements, consumes, commit, manifest."""
    identities = s.card_set.identities
    parts = [identities[i] for i in price.named]
    if price.additional:
        parts.append(f"{price.additional} of any")
    if price.consume:
        parts.append(f"consume {len(price.consume)}")
    if price.commit:
        parts.append("commit")
    if price.manifest:
        parts.append("a manifest use")
    return ", ".join(parts) or "nothing"


def card_text(s: State, name: str) -> str | None:
    """A card's sheet: type, attributes, price, what it produces, its upkeep, its text."""
    found = next((d for d in s.card_set.cards if d.name.lower() == name.lower()), None)
    if found is None:
        return None
    d = found
    attrs = ", ".join(f"{a} {getattr(d, a)}" for a in ATTRIBUTES[d.type])
    lines = [
        f"{d.name} — {TYPE_NAMES[d.type]}, complexity {d.complexity}"
        + (f"; {attrs}" if attrs else "")
    ]
    lines.append(f"  price: {_price_text(s, d.price)}")
    if d.produces:
        made = ", ".join(s.card_set.identities[i] for i in d.produces)
        lines.append(f"  produces: {made}")
    if d.maintenance is not None:
        lines.append(f"  maintenance: {_price_text(s, d.maintenance[0])}")
    lines.append(f"  text: {d.text or '-'}")
    return "\n".join(lines)


def _card(s: State, c: int) -> str:
    """A permanent as the table shows it: committed, damage, and what it stands on."""
    text = s.name(c) + ("*" if s.committed[c] else "") + (f"[{s.damage[c]}]" * bool(s.damage[c]))
    host = s.host[c]
    if host >= 0:
        text += f" (on {s.name(host)})"
    return text


def _stack_item(s: State, item: tuple[Any, ...]) -> str:
    kind, card, who, ref, chosen = item
    what = s.name(card) if kind == CARD_ITEM else f"{s.name(card)}'s ability"
    if kind == RESERVE_ITEM:
        what += " (reserve)"
    if ref is not None and ref[2] == CONSEQUENCE:
        what = f"{s.name(card)}'s unpaid obligation"
    return f"{what} by seat {who}" + (f" at {s.name(chosen)}" if chosen >= 0 else "")


def _describe(s: State, out: TextIO) -> None:
    """A human's view of the position: the table (:func:`_table`), the seat's own hand and
    its legal actions."""
    seat = s.current_player
    out.write(
        f"\n— turn {s.turns}, seat {s.turn_player}'s {PHASE_NAMES[s.phase]} phase; "
        f"seat {seat} to decide —\n"
    )
    _table(s, out)
    out.write("  your hand: " + (", ".join(s.name(c) for c in s.hands[seat]) or "-") + "\n")
    out.write("  legal: " + " | ".join(format_action(s, a) for a in s.legal_actions()) + "\n")


def _table(s: State, out: TextIO) -> None:
    """Every seat's board (what is anchored or constructed on what), hand and deck sizes and
    pool; the stack with each item's target; the combat (who attacks what, who blocks)."""
    identities = s.card_set.identities
    for p in range(s.n):
        cards = [c for c in s.board if s.ctrl[c] == p]
        shown = ", ".join(_card(s, c) for c in cards)
        state = "" if s.alive[p] else " (defeated)"
        pool = ", ".join(f"{k} {identities[i]}" for i, k in enumerate(s.pools[p]) if k)
        out.write(
            f"  seat {p}{state}: board {shown or '-'}; hand {len(s.hands[p])}; "
            f"deck {len(s.decks[p])}" + (f"; pool {pool}" if pool else "") + "\n"
        )
    if s.stack:
        out.write("  stack (top last): " + "; ".join(_stack_item(s, i) for i in s.stack) + "\n")
    if s.attackers:
        blockers: dict[int, list[int]] = {}
        for b, a in s.blocks:
            blockers.setdefault(a, []).append(b)
        fights = []
        for a, t, is_seat in s.attackers:
            text = f"{s.name(a)} attacks " + (f"seat {t}" if is_seat else s.name(t))
            if a in blockers:
                text += ", blocked by " + ", ".join(s.name(b) for b in blockers[a])
            elif a in s.blocked:
                text += ", blocked (its blockers gone)"
            fights.append(text)
        out.write("  combat: " + "; ".join(fights) + "\n")


def _human_action(
    s: State, stdin: TextIO, out: TextIO, log: list[tuple[int, str]], seen: int
) -> int:
    """Show the others' moves since this seat last decided, the table, and read an action."""
    seat = s.current_player
    news = [(p, text) for p, text in log[seen:] if p != seat]
    if news:
        out.write("\n" + "\n".join(f"  seat {p}: {text}" for p, text in news) + "\n")
    _describe(s, out)
    while True:
        out.write("> ")
        out.flush()
        line = stdin.readline()
        if not line:
            out.write("\n")
            raise DecodeError("the input ended before the game did")
        words = line.split()
        command = words[0].lower() if words else ""
        if command in ("help", "?"):
            out.write(_HELP + "\n")
            continue
        if command == "table":
            _describe(s, out)
            continue
        if command == "log":
            out.write("\n".join(f"  {i + 1}. seat {p}: {t}" for i, (p, t) in enumerate(log)))
            out.write("\n")
            continue
        if command == "card" and len(words) == 2:
            name = words[1].rpartition("#")[0] or words[1]
            sheet = card_text(s, name)
            out.write((sheet or f"no card called {name!r} in {s.card_set.name!r}") + "\n")
            continue
        try:
            action = parse_action(s, line.strip())
        except NotationError as exc:
            out.write(f"{exc.diagnostics()} (help: the commands)\n")
            continue
        if action in s.legal_actions():
            return action
        out.write("not a legal action now; the legal ones are listed above\n")


def charter_play(args: argparse.Namespace) -> int:
    """Play a game; print its record (JSON) on stdout."""
    decks = [_deck(d) for d in args.decks]
    charter = _charter(args.charter or decks[0].charter)
    cards = library.card_set(charter.card_set)
    for deck in decks:
        check_deck(deck, charter, cards)
    humans = set(args.human or [])
    if any(not 0 <= h < len(decks) for h in humans):
        raise DecodeError(f"--human names a seat from 0 to {len(decks) - 1}")
    lists = [d.card_list() for d in decks]
    state = new_game(cards, charter, lists, args.seed, args.max_turns)
    ais = {p: CharterAI(f"{args.seed}:{p}", args.budget) for p in range(len(decks))}
    actions: list[str] = []
    log: list[tuple[int, str]] = []
    seen = {p: 0 for p in humans}
    while not state.is_over:
        seat = state.current_player
        if seat in humans:
            action = _human_action(state, sys.stdin, sys.stderr, log, seen[seat])
        else:
            action = ais[seat].decide(state)
        text = format_action(state, action)
        actions.append(text)
        log.append((seat, text))
        if seat in humans:
            seen[seat] = len(log)
        state.apply(action)
    result = outcome(state)
    assert result is not None  # the loop ends only with the game
    record = record_json(
        cards.name, charter.name, lists, args.seed, actions, args.max_turns, result
    )
    sys.stderr.write(_result_line(result) + "\n")
    sys.stdout.write(json.dumps(record, indent=1) + "\n")
    return 0


def _result_line(result: dict[str, Any]) -> str:
    """Who won and why, in one line."""
    who = "no winner" if result["winner"] is None else f"seat {result['winner']} wins"
    return f"result: {who} — {result['reason']}"


def _replay_steps(record: Record, out: TextIO) -> State:
    """Step through ``record``: each action, who took it, and the table after it."""
    state = opening(record)
    for i, text in enumerate(record.actions):
        seat = state.current_player
        try:
            action = parse_action(state, text)
        except NotationError as exc:
            raise IllegalActionError(text, state.steps + 1, exc.diagnostics()) from None
        state.apply(action)
        out.write(
            f"step {i + 1}: seat {seat}: {text} — turn {state.turns}, "
            f"{PHASE_NAMES[state.phase]} phase\n"
        )
        _table(state, out)
    ended = outcome(state)
    if record.result is not None and ended != record.result.model_dump():
        raise SchemaError("not a charter record: result: not how the replayed game ends")
    out.write((_result_line(ended) if ended else "result: the record stops mid-game") + "\n")
    return state


def charter_replay(args: argparse.Namespace) -> int:
    """Replay a record; print the final position, the winner, why and the returns (JSON), or
    with ``--steps`` every step and the table after it."""
    record = parse_record(_read_json(args.record, "record"))
    if args.steps:
        _replay_steps(record, sys.stdout)
        return 0
    state = replay(record)
    ended = outcome(state)
    result = {
        "position": to_json(state),
        "over": state.is_over,
        "winner": state.winner if state.winner >= 0 else None,
        "reason": None if ended is None else ended["reason"],
        "returns": state.returns() if state.is_over else None,
    }
    sys.stdout.write(json.dumps(result, indent=1) + "\n")
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError("a seed is a whole number from 0 to 2**64 - 1")
    return value


def _positive(text: str) -> int:
    value = _seed(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected a whole number of at least 1")
    return value


def add_charter(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz charter`` and its subcommands."""
    group = commands.add_parser(
        "charter",
        help="validate decks, play and replay games of the charter rulebook",
        description="The charter rulebook's game: decks under charters, played locally.",
    )
    sub = group.add_subparsers(dest="charter_command", required=True, metavar="COMMAND")
    val = sub.add_parser(
        "validate",
        help="judge a deck against a charter: every failure one line on stderr, exit 2",
        description=(
            "A deck satisfies its charter only when its card count is exact and its summed "
            "complexity fits; every card must be one the charter sets, and a card placed by "
            "manifest needs a grant that covers it. DECK and CHARTER: a JSON file, or the name "
            f"of a packaged one (decks: {', '.join(library.deck_names())}; charters: "
            f"{', '.join(library.charter_names())})."
        ),
    )
    val.add_argument("deck", metavar="DECK")
    val.add_argument("--charter", required=True, metavar="CHARTER")
    val.set_defaults(handler=charter_validate)
    play = sub.add_parser(
        "play",
        help="play a game (search AI at every seat not --human); print its record (JSON)",
        description=(
            "Seats follow the decks in order, clockwise; seat 0 takes the first turn. Every "
            "deck must satisfy the charter (the first deck's, unless --charter names one). A "
            "human seat reads one action per line in the notation of docs/charter.md; the "
            "others' moves, the table and the legal actions are shown before each prompt (on "
            "stderr); 'help' lists the commands (card NAME, table, log)."
        ),
    )
    play.add_argument("decks", nargs="+", metavar="DECK")
    play.add_argument("--charter", metavar="CHARTER", help="the charter the game is played under")
    play.add_argument("--seed", type=_seed, default=0, metavar="N", help="the game's seed (0)")
    play.add_argument(
        "--human", type=int, action="append", metavar="SEAT", help="a seat a person plays"
    )
    play.add_argument("--budget", type=_positive, default=96, help="AI playouts per decision")
    play.add_argument("--max-turns", type=_positive, default=200, help="the turn limit (C-19)")
    play.set_defaults(handler=charter_play)
    rep = sub.add_parser(
        "replay",
        help="replay a charter record; print the final position, winner and returns (JSON)",
        description="Replay RECORD (charter-record/1). An illegal action stops it, exit 2.",
    )
    rep.add_argument("record", metavar="RECORD")
    rep.add_argument(
        "--steps", action="store_true", help="print every step and the table after it (text)"
    )
    rep.set_defaults(handler=charter_replay)
