"""``cz``: the player's command line for THE WINDOW.

One subcommand group per thing a player does, each in its own module: ``cz table`` plays and
replays tables locally, ``cz charter`` the charter game (``cz_charter``), the wallet's
``key``, ``save``, ``load``, ``collection`` and ``card`` (``cz_wallet``), the league's
``league set``, ``stamp`` and ``provenance`` (``cz_league``), trading's ``send`` and
``import`` (``cz_trade``), the treasury's ``notes`` and ``buy`` (``cz_notes``), and ``play``,
``campaign``, ``store`` and ``bundle`` (``cz_play``), and ``web``, all of it in the browser
(``clients.web``). Every refusal is one line on stderr
and exit status 2 (a :class:`ledger.errors.LedgerError`'s ``diagnostics()``), never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any, NoReturn, TypeAlias, cast

from ledger.errors import LedgerError

Handler = Callable[[argparse.Namespace], int]


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def table_replay(args: argparse.Namespace) -> int:
    """Step through a record move by move, the board drawn (``--json``: the final position,
    the columns and the verdict); in ``clients.cz_table``."""
    from clients.cz_table import replay

    return replay(args)


def table_new(args: argparse.Namespace) -> int:
    """Print the opening position of a seeded base or market table."""
    from game.window import new_base_table, new_market_table, to_json

    convene = new_base_table if args.kind == "base" else new_market_table
    _print_json(to_json(convene(args.seed)))
    return 0


def _add_table(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from clients.cz_session import seed

    table = commands.add_parser(
        "table",
        help="play and replay tables of THE WINDOW locally",
        description="Tables of THE WINDOW, played by the rules engine on this machine.",
    )
    sub = table.add_subparsers(dest="table_command", required=True, metavar="COMMAND")
    rep = sub.add_parser(
        "replay",
        help="step through a table record move by move, the board drawn",
        description=(
            "Replay RECORD (a cz-table-record/1 JSON file, or - for stdin: a deal and its "
            "actions in notation, see docs/formats.md; default: your latest table in "
            "CZ_HOME/tables/). On a terminal, one move per Enter (q stops), the board drawn as "
            "cz play draws it; with --all or no terminal, every position; then both sides' "
            "columns and the verdict's reason. --json prints the final position, the three "
            "columns per seat and the verdict (null while the table is open). An illegal "
            "action stops the replay: one line naming the action, its turn and the rule, exit 2."
        ),
    )
    rep.add_argument(
        "record",
        metavar="RECORD",
        nargs="?",
        help="path of the record, or - for stdin (default: your latest table)",
    )
    rep.add_argument("--all", action="store_true", help="print every position, no stepping")
    rep.add_argument(
        "--json", action="store_true", help="print the final position, columns and verdict as JSON"
    )
    rep.set_defaults(handler=table_replay)
    new = sub.add_parser(
        "new",
        help="print a fresh seeded deal as a position (JSON)",
        description=(
            "Convene a table and print its opening position. base: the base six, three per "
            "seat (I.5); market: thirteen, five per seat and three to the market (IV.2). The "
            "deal is random.Random(SEED).shuffle of the titles in book order."
        ),
    )
    new.add_argument("--kind", choices=("base", "market"), required=True, help="the table")
    new.add_argument("--seed", type=seed, required=True, metavar="N", help="the deal's seed (≥ 0)")
    new.set_defaults(handler=table_new)


AddGroup: TypeAlias = "Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]"

#: Every top-level command in the order ``cz --help`` lists them: the group that adds it (a
#: function, "module:name", adding its commands with their arguments and subcommands) and
#: its help line there. A group's module is imported only when one of its commands runs, so
#: ``cz --help`` loads neither the league client nor the engines, and ``cz table`` only the
#: rules engine. Each group's commands are listed together, in the order it adds them (a
#: test checks this table against what the groups add).
COMMANDS: dict[str, tuple[str, str]] = {
    "table": ("clients.cz:_add_table", "play and replay tables of THE WINDOW locally"),
    "charter": (
        "clients.cz_charter:add_charter",
        "validate decks, play and replay games of the charter rulebook",
    ),
    "key": ("clients.cz_wallet:add_wallet", "strike or show your ledger key (your account)"),
    "save": ("clients.cz_wallet:add_wallet", "write a fresh save code (to stdout or --out FILE)"),
    "load": ("clients.cz_wallet:add_wallet", "make a save code this device's wallet"),
    "collection": ("clients.cz_wallet:add_wallet", "list your prints, marks, notes and proofs"),
    "card": ("clients.cz_wallet:add_wallet", "print your ledger card, to be sent prints"),
    "league": ("clients.cz_league:add_league", "pin the league your wallet trusts"),
    "stamp": ("clients.cz_league:add_league", "present every unstamped print to the league's mint"),
    "provenance": ("clients.cz_league:add_league", "a print's whole life, every proof checked"),
    "send": ("clients.cz_trade:add_trade", "endorse stamped prints to a ledger card: a slip"),
    "import": ("clients.cz_trade:add_trade", "verify a slip and admit what it sends you"),
    "sync": ("clients.cz_trade:add_trade", "let go of what the notary records sent on since"),
    "play": ("clients.cz_play:add_play", "play a table of the campaign in the terminal"),
    "campaign": ("clients.cz_play:add_play", "your campaign: tables won, next table, rewards"),
    "store": ("clients.cz_play:add_play", "the offline store: prints, upgrades, bundles for marks"),
    "bundle": ("clients.cz_play:add_play", "open your sealed bundles"),
    "duel": (
        "clients.cz_league_play:add_duel",
        "a witnessed table between two players: cz duel new, cz duel join CODE",
    ),
    "notes": ("clients.cz_notes:add_notes", "list your notes; claim notes for unstamped marks"),
    "buy": (
        "clients.cz_notes:add_notes",
        "buy a single, or a finish upgrade of a print you hold, with notes",
    ),
    "web": (
        "clients.web.command:add_web",
        "play in your browser: the booths and tables as pages on 127.0.0.1",
    ),
}

#: The groups, in order ("module:name").
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(group for group, _ in COMMANDS.values()))


def load_group(group: str) -> AddGroup:
    """The function a group is (``module:name``), its module imported now."""
    module, _, name = group.partition(":")
    return cast("AddGroup", getattr(importlib.import_module(module), name))


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (still exit status 2); every subcommand's
    parser is of this class too (argparse makes subparsers of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(groups: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser, each group in ``groups`` (default: every group) with its arguments and
    subcommands; the other groups' commands are only listed (with their help lines)."""
    parser = OneLineParser(
        prog="cz",
        description="THE WINDOW (Contra-Zero Certificates), the player's client.",
        epilog=(
            "examples:\n"
            "  cz table new --kind market --seed 7   the opening position of a market table\n"
            "  cz table replay game.json             step through a record, the board drawn\n"
            "  cz key strike                         strike your ledger key: a new wallet\n"
            "  cz league set http://HOST:8080        pin a league (its root key, first use)\n"
            "  cz stamp                              present your unstamped prints to its mint\n"
            "  cz card --out me.card                 your ledger card, to be sent prints\n"
            "  cz send --to them.card CZ-TALLY-0042  endorse a print: the slip, on stdout\n"
            "  cz import slip.txt                    verify, notarize and admit a slip\n"
            "  cz sync                               drop what another device sent (notary)\n"
            "  cz play --auto --seed 1               the campaign's next table, played for you\n"
            "  cz play --league clerk-1              a witnessed table at the league, signed\n"
            "  cz duel new                           a duel: its join code for your opponent\n"
            "  cz notes claim                        today's marks to notes at the faucet\n"
            "  cz buy Tally                          a single for notes, with exact change\n"
            "  cz provenance CZ-TALLY-0042           a life, every proof checked\n"
            "  cz web                                all of it in your browser (127.0.0.1)\n"
            "\n"
            "The game's rules, section by section as messages cite them (Book V.2, IV.1):\n"
            "docs/rules.md. Records and the action notation: docs/formats.md. The rulebook's\n"
            "open points and how the engine reads them: docs/rulings.md. A refusal prints one\n"
            "line on stderr and exits with status 2. The wallet lives in CZ_HOME (default:\n"
            "the platform's user data directory; a second player or device on one machine\n"
            "sets its own); CZ_PASSPHRASE gives scripts its passphrase."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Every nested parser is a OneLineParser at run time (argparse uses the parent's class);
    # the groups are typed against plain ArgumentParsers, which they are too.
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    built: set[str] = set()
    for command, (group, text) in COMMANDS.items():
        if groups is not None and group not in groups:
            commands.add_parser(command, help=text)
        elif group not in built:
            load_group(group)(commands)
            built.add(group)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if any."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    # Only the named command's group is built (and imported); none for --help alone.
    command = command_of(words)
    groups = [COMMANDS[command][0]] if command in COMMANDS else []
    args = build_parser(groups).parse_args(words)
    handler: Handler = args.handler
    try:
        return handler(args)
    except LedgerError as exc:
        sys.stderr.write(f"cz: {exc.diagnostics()}\n")
        return 2
    except OSError as exc:  # a file named on the command line that cannot be written
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(f"cz: {where}{exc.strerror or exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\ncz: interrupted; nothing was written that was not whole\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
