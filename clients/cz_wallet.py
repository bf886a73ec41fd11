"""``cz key strike|show``, ``cz save``, ``cz load``, ``cz collection``, ``cz card``: the wallet
(Book V.2 your ledger key, V.3 save codes, V.6 "Copy my ledger card")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clients.cz_public import collection_view, publish, summary, summary_text
from clients.cz_session import (
    JSON_FLAG,
    ask_passphrase,
    emit,
    opened_wallet,
    read_only,
)
from clients.wallet import (
    Wallet,
    WalletError,
    WalletHome,
    ascii_text,
    bounded,
    read_ascii,
    read_code,
    seal,
    unseal,
    write_synced,
)
from ledger.address import address_of
from ledger.armor import SAVE_CODE
from ledger.cards import LedgerCard
from ledger.limits import MAX_ARMOR_BYTES

#: V.2, shown before a key is struck: "Read the warning and mean it".
WARNING = (
    "Your ledger key is your account (Book V.2). Its private half exists only in this wallet\n"
    "and inside your save codes, armored under your passphrase. Lose the passphrase, lose the\n"
    "key, lose the collection. There is no reset, because there is no custodian.\n"
)


def key_strike(args: argparse.Namespace) -> int:
    """Strike a new key: a new, empty wallet sealed under a new passphrase."""
    home = WalletHome.default()
    with home.lock():
        replaced = home.exists()
        if replaced and not args.replace:
            raise WalletError(
                f"a wallet already lives in {home.directory}; a new key means a new, empty "
                "wallet: write a save code of the old one first (cz save --out FILE), then "
                "cz key strike --replace"
            )
        sys.stderr.write(WARNING)
        sys.stderr.flush()
        phrase = ask_passphrase("choose a passphrase: ", confirm=True)
        wallet = Wallet.new()
        retired = home.retire()
        home.write(wallet, phrase)
        publish(home, wallet)
    address = address_of(wallet.public)
    text = f"struck {address}: your wallet is kept in {home.path}"
    if retired is not None:
        text += f" (the replaced wallet's save code is kept in {retired})"
    text += "\nwrite a save code tonight (cz save --out FILE) and keep it with the passphrase"
    emit(
        args,
        {
            "address": address,
            "key": wallet.public.to_text(),
            "home": str(home.path),
            "replaced": None if retired is None else str(retired),
        },
        text,
    )
    return 0


def key_show(args: argparse.Namespace) -> int:
    """Print the wallet's address and public key (from the public summary: no passphrase)."""
    address, key = read_only(
        lambda summary: (summary["address"], summary["key"]),
        lambda wallet: (address_of(wallet.public), wallet.public.to_text()),
    )
    emit(args, {"address": address, "key": key}, f"{address}  {key}")
    return 0


def save(args: argparse.Namespace) -> int:
    """Write a fresh save code (V.3) to stdout or a file."""
    with opened_wallet() as opened:
        code = seal(opened.wallet, opened.passphrase)
    if args.out is None:
        if args.json:
            emit(args, {"code": code}, code)
        else:
            sys.stdout.write(code)
        return 0
    write_synced(Path(args.out), code)
    emit(args, {"file": args.out}, f"save code written to {args.out}")
    return 0


def read_text(source: str, limit: int, what: str) -> str:
    """A file's text (``-`` for stdin), at most ``limit`` bytes of ASCII."""
    if source == "-":
        raw = bounded(sys.stdin.buffer.read(limit + 1), limit, what)
        return ascii_text(raw, f"the {what} on stdin is not ASCII text")
    if what == "save code":
        return read_code(Path(source))
    return read_ascii(source, limit, what)


def load(args: argparse.Namespace) -> int:
    """Make a save code this device's wallet; nothing changes unless it opens whole."""
    code = read_text(args.code, MAX_ARMOR_BYTES[SAVE_CODE], "save code")
    home = WalletHome.default()
    with home.lock():
        if home.exists() and not args.replace:
            raise WalletError(
                f"a wallet already lives in {home.directory}: loading replaces it "
                "(cz load CODE --replace; the current one is kept under replaced/)"
            )
        wallet = unseal(code, ask_passphrase("the save code's passphrase: "))
        retired = home.retire()
        home.write_code(code)
        publish(home, wallet, code)
    address = address_of(wallet.public)
    text = f"loaded {address}: {summary_text(wallet)}"
    if retired is not None:
        text += f"\nthe replaced wallet's save code is kept in {retired}"
    emit(
        args,
        {
            "address": address,
            "home": str(home.path),
            "replaced": None if retired is None else str(retired),
            **summary(wallet),
        },
        text,
    )
    return 0


def collection(args: argparse.Namespace) -> int:
    """List what the wallet holds (from the public summary: no passphrase)."""
    data, text = read_only(
        lambda summary: (summary["collection"], summary["collection_text"]), collection_view
    )
    emit(args, data, text)
    return 0


def card(args: argparse.Namespace) -> int:
    """Print my ledger card: my public key and address, nothing else (V.6); from the public
    summary, with no passphrase."""
    my_card = read_only(
        lambda summary: LedgerCard.from_armor(summary["card"]), lambda wallet: wallet.card
    )
    text = my_card.to_armor()
    if args.out is not None:
        Path(args.out).write_text(text, encoding="ascii")
        emit(
            args,
            {"address": my_card.address, "key": my_card.key, "file": args.out},
            f"ledger card of {my_card.address} written to {args.out}",
        )
        return 0
    if args.json:
        emit(args, {"address": my_card.address, "key": my_card.key, "card": text}, text)
    else:
        sys.stdout.write(text)
    return 0


def add_wallet(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz key``, ``cz save``, ``cz load``, ``cz collection`` and ``cz card``."""
    key = commands.add_parser(
        "key",
        help="strike or show your ledger key (your account)",
        description="Your ledger key is your account (V.2): struck here, no signup, no server.",
    )
    sub = key.add_subparsers(dest="key_command", required=True, metavar="COMMAND")
    strike = sub.add_parser(
        "strike",
        parents=[JSON_FLAG],
        help="strike a new key and a new, empty wallet",
        description=WARNING
        + (
            "\nStrikes a new Ed25519 key and makes a new, empty wallet around it, sealed "
            "under the passphrase you choose (typed twice, or CZ_PASSPHRASE for a script). "
            "An existing wallet is never replaced without --replace."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    strike.add_argument(
        "--replace",
        action="store_true",
        help="replace the wallet already here (its save code is kept under replaced/)",
    )
    strike.set_defaults(handler=key_strike)
    show = sub.add_parser(
        "show",
        parents=[JSON_FLAG],
        help="print your address and public key",
        description="Your address (CZ-XXXX-XXXX-XXXX, a short checked id) and public key.",
    )
    show.set_defaults(handler=key_show)

    save_parser = commands.add_parser(
        "save",
        parents=[JSON_FLAG],
        help="write a fresh save code (to stdout or --out FILE)",
        description=(
            "A save code is plain text holding your whole world (V.3): progress, collection, "
            "notes, seen-registry and your key, sealed under your passphrase (argon2id + "
            "XSalsa20-Poly1305). Keep it anywhere; write a fresh one whenever you have "
            "traded: a stale code is a stale wallet."
        ),
    )
    save_parser.add_argument("--out", metavar="FILE", help="write it to FILE (mode 0600)")
    save_parser.set_defaults(handler=save)

    load_parser = commands.add_parser(
        "load",
        parents=[JSON_FLAG],
        help="make a save code this device's wallet",
        description=(
            "Open CODE (a file, or - for stdin) with its passphrase and keep it as this "
            "device's wallet. Two devices are two loads of one code (V.3). A wrong "
            "passphrase or a damaged code changes nothing."
        ),
    )
    load_parser.add_argument("code", metavar="CODE", help="the save code's file, or -")
    load_parser.add_argument(
        "--replace",
        action="store_true",
        help="replace the wallet already here (its save code is kept under replaced/)",
    )
    load_parser.set_defaults(handler=load)

    coll = commands.add_parser(
        "collection",
        parents=[JSON_FLAG],
        help="list your prints, marks, notes and proofs",
        description=(
            "Every print you hold: stamped ✓ with its serial (tradable), unstamped ⧗ "
            "(playable, not tradable until stamped); unstamped marks, bundles, notes, "
            "the fraud proofs your wallet keeps, and a stamp, claim or purchase sent but "
            "not answered yet (pending: the same command run again finishes it)."
        ),
    )
    coll.set_defaults(handler=collection)

    card_parser = commands.add_parser(
        "card",
        parents=[JSON_FLAG],
        help="print your ledger card, to be sent prints",
        description=(
            'Your ledger card (V.6 "Copy my ledger card"): your public key and address, '
            "nothing secret. Send it to whoever sends you prints: they endorse to it."
        ),
    )
    card_parser.add_argument("--out", metavar="FILE", help="write it to FILE")
    card_parser.set_defaults(handler=card)
