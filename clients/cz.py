"""``cz``: the player's command line for THE WINDOW.

One subcommand group per thing a player does, each in its own module: ``cz table`` plays and
replays tables locally, ``cz charter`` the charter game (``charter_cli``), the wallet's
``key``, ``save``, ``load``, ``collection`` and ``card`` (``cz_wallet``), the league's
``league set``, ``stamp`` and ``provenance`` (``cz_league``), trading's ``send`` and
``import`` (``cz_trade``), the treasury's ``notes`` and ``buy`` (``cz_notes``), and ``play``,
``campaign``, ``store`` and ``bundle`` (``cz_play``). Every refusal is one line on stderr
and exit status 2 (a :class:`ledger.errors.LedgerError`'s ``diagnostics()``), never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, cast

from clients.charter_cli import add_charter
from clients.cz_league import add_league
from clients.cz_notes import add_notes
from clients.cz_play import add_play
from clients.cz_session import seed
from clients.cz_trade import add_trade
from clients.cz_wallet import add_wallet
from game.window import new_base_table, new_market_table, parse_record, reckon, replay, to_json
from ledger.errors import DecodeError, LedgerError, SizeLimitError
from ledger.wire import parse_json

#: The largest record file ``cz table replay`` reads.
MAX_RECORD_BYTES = 1 << 20

Handler = Callable[[argparse.Namespace], int]


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _read_record(path: str) -> Any:
    if path == "-":
        raw = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
    else:
        try:
            with Path(path).open("rb") as f:
                raw = f.read(MAX_RECORD_BYTES + 1)
        except OSError as exc:
            raise DecodeError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise SizeLimitError(f"a record is at most {MAX_RECORD_BYTES} bytes")
    return parse_json(raw, what=f"the record {path}")


def table_replay(args: argparse.Namespace) -> int:
    """Replay a record and print the final position, the columns and the verdict."""
    state = replay(parse_record(_read_record(args.record)))
    reckoning = reckon(state)
    _print_json(
        {
            "position": to_json(state),
            "columns": [
                {"substance": s, "form": f, "holdings": h} for s, f, h in reckoning.columns
            ],
            "verdict": [v.value for v in reckoning.verdicts] if state.is_over else None,
        }
    )
    return 0


def table_new(args: argparse.Namespace) -> int:
    """Print the opening position of a seeded base or market table."""
    convene = new_base_table if args.kind == "base" else new_market_table
    _print_json(to_json(convene(args.seed)))
    return 0


def _add_table(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    table = commands.add_parser(
        "table",
        help="play and replay tables of THE WINDOW locally",
        description="Tables of THE WINDOW, played by the rules engine on this machine.",
    )
    sub = table.add_subparsers(dest="table_command", required=True, metavar="COMMAND")
    rep = sub.add_parser(
        "replay",
        help="replay a table record; print the final position, columns and verdict (JSON)",
        description=(
            "Replay RECORD (a cz-table-record/1 JSON file, or - for stdin: a deal and its "
            "actions in notation, see docs/formats.md). Prints the final position, the three "
            "columns per seat and the verdict (null while the table is open). An illegal "
            "action stops the replay: one line naming the action, its turn and the rule, exit 2."
        ),
    )
    rep.add_argument("record", metavar="RECORD", help="path of the record, or - for stdin")
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


#: Each group adds its subcommand (and its own subcommands); stamp, claim, buy, trade and
#: wallet join this tuple as they are written.
COMMAND_GROUPS: tuple[
    Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...
] = (_add_table,)
COMMAND_GROUPS += (add_charter, add_wallet, add_league, add_trade, add_play, add_notes)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (still exit status 2); every subcommand's
    parser is of this class too (argparse makes subparsers of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="cz",
        description="THE WINDOW (Contra-Zero Certificates), the player's client.",
        epilog=(
            "examples:\n"
            "  cz table new --kind market --seed 7   the opening position of a market table\n"
            "  cz table replay game.json             replay a record: position, columns, verdict\n"
            "  cz key strike                         strike your ledger key: a new wallet\n"
            "  cz league set http://HOST:8080        pin a league (its root key, first use)\n"
            "  cz stamp                              present your unstamped prints to its mint\n"
            "  cz card --out me.card                 your ledger card, to be sent prints\n"
            "  cz send --to them.card CZ-TALLY-0042  endorse a print: the slip, on stdout\n"
            "  cz import slip.txt                    verify, notarize and admit a slip\n"
            "  cz play --auto --seed 1               the campaign's next table, played for you\n"
            "  cz notes claim                        today's marks to notes at the faucet\n"
            "  cz buy Tally                          a single for notes, with exact change\n"
            "  cz provenance CZ-TALLY-0042           a life, every proof checked\n"
            "\n"
            "Records and the action notation: docs/formats.md. The rulebook's open points\n"
            "and how the engine reads them: docs/rulings.md. A refusal prints one line on\n"
            "stderr and exits with status 2. The wallet lives in CZ_HOME (default: the\n"
            "platform's user data directory); CZ_PASSPHRASE gives scripts its passphrase."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Every nested parser is a OneLineParser at run time (argparse uses the parent's class);
    # the groups are typed against plain ArgumentParsers, which they are too.
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    for add_group in COMMAND_GROUPS:
        add_group(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
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
