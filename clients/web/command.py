"""``cz web``: the subcommand. It imports the server (aiohttp, the pages) only when it runs, so
``cz --help`` stays light."""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = """\
Play THE WINDOW in your browser: the booths and buttons of Book V and the tables of
Book IV as pages, served by this client on your own machine, with the same wallet,
engine and league client as every other cz command (and the same refusals).

  Topbar     Unlock, Save (write the save code), Load, the league set and pinned
  Exchange   Strike the key, Copy my ledger card, Endorse & write the slip, Import
  Vault      your collection (✓ stamped, ⧗ unstamped), Present for stamping, Claim
             notes, Buy with notes and upgrades, the offline store and bundles
  Play       the campaign's next table, an open Chair or Registrar, by clicks; the
             No-Go drill as the timed 3×3 pattern; Tables: finished ones replayed
  Provenance any print's or note's life, every proof checked here

Safe by construction: the server listens on 127.0.0.1 only; each launch has its own
secret, the first part of every page's path (the browser is handed a file of yours,
0600, that leads there; --no-browser prints the URL); a request without it, naming
another host, or a form of another site, is
refused; your key is unlocked only in this process, and nothing is signed without
your click on a page that names what is signed and to whom. Ctrl-C stops it.
"""


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is from 0 (any free one) to 65535")
    return value


def web(args: argparse.Namespace) -> int:
    """Serve the pages on 127.0.0.1 and open the browser at them (or print the URL)."""
    import asyncio
    from pathlib import Path
    from urllib.parse import urlsplit

    from clients.web.app import launch_file, open_browser, serve

    written: list[Path] = []

    def ready(url: str) -> None:
        shown, where = url, "open it in your browser"
        if not args.no_browser:
            path = launch_file(url, urlsplit(url).port or 0)
            written.append(path)
            if open_browser(path):  # the file's name, never the secret, on a command line
                shown, where = path.as_uri(), "opened in your browser"
        sys.stdout.write(f"{shown}\n")
        sys.stdout.flush()
        sys.stderr.write(f"cz web: serving on 127.0.0.1 ({where}); Ctrl-C stops it\n")
        sys.stderr.flush()

    try:
        asyncio.run(serve(args.port, ready))
    finally:
        for path in written:
            path.unlink(missing_ok=True)
    return 0


def add_web(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz web``."""
    parser = commands.add_parser(
        "web",
        help="play in your browser: the booths and tables as pages on 127.0.0.1",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  cz web                  serve and open your browser at the pages\n"
            "  cz web --no-browser     print the URL (with this launch's secret) instead\n"
            "  cz web --port 8765      a fixed port (default: any free one)"
        ),
    )
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open a browser: print the URL to open (it carries this launch's secret)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=0,
        metavar="N",
        help="the port on 127.0.0.1 (default: any free one)",
    )
    parser.set_defaults(handler=web)
