"""``cz key strike|show``, ``cz save``, ``cz load``, ``cz collection``, ``cz card``: the wallet
(Book V.2 your ledger key, V.3 save codes, V.6 "Copy my ledger card")."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clients.cz_public import publish
from clients.cz_session import (
    JSON_FLAG,
    ask_passphrase,
    emit,
    opened_wallet,
    print_item,
    read_only,
)
from clients.wallet import Wallet, WalletError, WalletHome, read_code, seal, unseal
from clients.words import plural
from ledger.address import address_of
from ledger.armor import SAVE_CODE
from ledger.cards import LedgerCard
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.errors import DecodeError, SizeLimitError
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
    emit(args, {"address": address, "key": wallet.public.to_text(), "home": str(home.path),
                "replaced": None if retired is None else str(retired)}, text)
    return 0


def key_show(args: argparse.Namespace) -> int:
    """Print the wallet's address and public key (from the public summary: no passphrase)."""
    address, key = read_only(
        lambda summary: (summary["address"], summary["key"]),
        lambda wallet: (address_of(wallet.public), wallet.public.to_text()),
    )
    emit(args, {"address": address, "key": key}, f"{address}  {key}")
    return 0


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (mode 0600 when created), synced before returning."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


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
    _write_private(Path(args.out), code)
    emit(args, {"file": args.out}, f"save code written to {args.out}")
    return 0


def read_text(source: str, limit: int, what: str) -> str:
    """A file's text (``-`` for stdin), at most ``limit`` bytes of ASCII."""
    if source == "-":
        raw = sys.stdin.buffer.read(limit + 1)
        if len(raw) > limit:
            raise SizeLimitError(f"a {what} is at most {limit} bytes")
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            raise DecodeError(f"the {what} on stdin is not ASCII text") from None
    if what == "save code":
        return read_code(Path(source))
    try:
        with Path(source).open("rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise DecodeError(f"cannot read {source}: {exc.strerror}") from None
    if len(raw) > limit:
        raise SizeLimitError(f"a {what} is at most {limit} bytes")
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise DecodeError(f"{source} is not a {what} (not ASCII text)") from None


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
    text = f"loaded {address}: {_summary_text(wallet)}"
    if retired is not None:
        text += f"\nthe replaced wallet's save code is kept in {retired}"
    emit(args, {"address": address, "home": str(home.path),
                "replaced": None if retired is None else str(retired), **_summary(wallet)},
         text)
    return 0


def _summary(wallet: Wallet) -> dict[str, Any]:
    prints = wallet.collection.prints
    return {
        "marks": wallet.collection.marks,
        "bundles": wallet.collection.bundles,
        "stamped": sum(p.stamped for p in prints),
        "unstamped": sum(not p.stamped for p in prints),
        "notes": len(wallet.notes),
        "fraud_proofs": len(wallet.proofs),
    }


def _summary_text(wallet: Wallet) -> str:
    s = _summary(wallet)
    return (
        f"{s['stamped']} stamped ✓ and {s['unstamped']} unstamped ⧗ prints, "
        f"M{s['marks']} unstamped marks, {plural(s['bundles'], 'bundle')}, "
        f"{plural(s['notes'], 'note')}, {plural(s['fraud_proofs'], 'fraud proof')} kept"
    )


def _when(time: int) -> str:
    return datetime.fromtimestamp(time, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _pending(wallet: Wallet) -> tuple[dict[str, Any], list[str]]:
    """The requests kept in the wallet, sent and not yet answered (the league down or busy,
    the answer lost): what each asked for and what it took with it, and the command that
    finishes it (the same request sent again; nothing is paid twice)."""
    claim, buy = wallet.pending_claim, wallet.pending_buy
    data: dict[str, Any] = {
        "pending_claim": None if claim is None else {
            "request_id": claim.request_id, "marks": claim.marks, "time": claim.time,
        },
        "pending_buy": None if buy is None else {
            "purchase_id": buy.purchase_id, "title": buy.title, "time": buy.time,
            "finish": buy.upgrade.finish if buy.upgrade else "standard",
            "returned_print": buy.upgrade.returned.serial if buy.upgrade else None,
            "paid": sum(c.certificate.denomination for c in buy.payment
                        if isinstance(c.certificate, NoteCertificate)),
            "paid_notes": [c.serial for c in buy.payment],
        },
    }
    lines = []
    if wallet.pending is not None:
        count = len(wallet.pending.prints)
        lines.append(
            f"  pending: {count} print{'' if count == 1 else 's'} presented for stamping at "
            f"{_when(wallet.pending.time)}, not answered yet: cz stamp finishes it"
        )
    if claim is not None:
        lines.append(
            f"  pending: a claim of M{claim.marks} of marks for notes (claim "
            f"{claim.request_id}) sent at {_when(claim.time)}, not answered yet; the marks "
            "stay in your collection until it is: cz notes claim finishes it"
        )
    if buy is not None:
        paid = data["pending_buy"]
        if buy.upgrade is None:
            what, again = f"a purchase of {buy.title}", f"cz buy {buy.title}"
        else:  # the print returned left the collection with the request, as the notes did
            returned = buy.upgrade.returned.serial
            what = (f"a {buy.upgrade.finish} upgrade of {buy.title}, {returned} returned to "
                    "the mint,")
            again = f"cz buy --upgrade {returned} --finish {buy.upgrade.finish}"
        lines.append(
            f"  pending: {what} (purchase {buy.purchase_id}) sent at {_when(buy.time)}, not "
            f"answered yet, paid M{paid['paid']} with {', '.join(paid['paid_notes'])}: "
            f"{again} finishes it"
        )
    return data, lines


def collection(args: argparse.Namespace) -> int:
    """List what the wallet holds (from the public summary: no passphrase)."""
    data, text = read_only(lambda summary: (summary["collection"], summary["collection_text"]),
                           collection_view)
    emit(args, data, text)
    return 0


def collection_view(wallet: Wallet) -> tuple[dict[str, Any], str]:
    """``cz collection`` of ``wallet``: its ``--json`` document and its text."""
    address = address_of(wallet.public)
    pin = wallet.league
    league = None if pin is None else {
        "url": pin.url, "league": pin.manifest.league, "name": pin.manifest.name,
        "root": address_of(pin.root),
    }
    notes = [
        {"serial": c.serial, "denomination": c.certificate.denomination}
        for c in wallet.notes.values()
        if isinstance(c.certificate, NoteCertificate)
    ]
    bound = [
        {"serial": c.serial, "denomination": c.certificate.denomination}
        for c in wallet.bound.values()
        if isinstance(c.certificate, NoteCertificate)
    ]
    data = {
        "address": address,
        "league": league,
        **_summary(wallet),
        "prints": [print_item(p) for p in wallet.collection.prints],
        "note_list": notes,
        "bound_notes": bound,
        "bound_prints": [
            {"serial": c.serial, "title": c.certificate.title}
            for c in wallet.bound_prints.values()
            if isinstance(c.certificate, PrintCertificate)
        ],
        "fraud_proof_list": [
            {"says": p.describe(), "proof": p.to_wire()} for p in wallet.proofs
        ],
        "campaign": wallet.campaign.to_json()["record"],
        "pending_stamp": wallet.pending is not None,
    }
    pending, pending_lines = _pending(wallet)
    data.update(pending)
    lines = [
        f"{address}  " + (
            f"league {pin.manifest.name!r} at {pin.url} (root {address_of(pin.root)})"
            if pin else "no league set (cz league set URL)"
        ),
        _summary_text(wallet),
    ]
    if wallet.campaign.record:  # wins, losses and Balances apart, never added (IV.6)
        lines.append("campaign: " + ", ".join(
            f"{venue.name} {t.wins} won, {t.losses} lost, {t.balances} Balanced"
            for venue, t in wallet.campaign.record
        ))
    for p in sorted(wallet.collection.prints, key=lambda p: (not p.stamped, p.title,
                                                             p.serial or "")):
        lines.append(f"  {p.label()}")
    for note in notes:
        lines.append(f"  ✓ M{note['denomination']} note {note['serial']}")
    for note in bound:
        lines.append(f"  ⇢ M{note['denomination']} note {note['serial']}, bound to the "
                     "treasury: its hop there is signed (a rejected purchase); cz buy pays "
                     "it first")
    for item in data["bound_prints"]:
        lines.append(f"  ⇢ {item['title']} {item['serial']}, bound to the mint: its hop there "
                     f"is signed (a rejected upgrade); cz buy --upgrade {item['serial']} "
                     "returns it")
    for proof in wallet.proofs:
        lines.append(f"  fraud proof: {proof.describe()}")
    lines += pending_lines
    return data, "\n".join(lines)


def card(args: argparse.Namespace) -> int:
    """Print my ledger card: my public key and address, nothing else (V.6); from the public
    summary, with no passphrase."""
    my_card = read_only(lambda summary: LedgerCard.from_armor(summary["card"]),
                        lambda wallet: wallet.card)
    text = my_card.to_armor()
    if args.out is not None:
        Path(args.out).write_text(text, encoding="ascii")
        emit(args, {"address": my_card.address, "key": my_card.key, "file": args.out},
             f"ledger card of {my_card.address} written to {args.out}")
        return 0
    if args.json:
        emit(args, {"address": my_card.address, "key": my_card.key, "card": text}, text)
    else:
        sys.stdout.write(text)
    return 0


def add_wallet(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz key``, ``cz save``, ``cz load``, ``cz collection`` and ``cz card``."""
    key = commands.add_parser(
        "key", help="strike or show your ledger key (your account)",
        description="Your ledger key is your account (V.2): struck here, no signup, no server.",
    )
    sub = key.add_subparsers(dest="key_command", required=True, metavar="COMMAND")
    strike = sub.add_parser(
        "strike", parents=[JSON_FLAG], help="strike a new key and a new, empty wallet",
        description=WARNING + (
            "\nStrikes a new Ed25519 key and makes a new, empty wallet around it, sealed "
            "under the passphrase you choose (typed twice, or CZ_PASSPHRASE for a script). "
            "An existing wallet is never replaced without --replace."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    strike.add_argument(
        "--replace", action="store_true",
        help="replace the wallet already here (its save code is kept under replaced/)",
    )
    strike.set_defaults(handler=key_strike)
    show = sub.add_parser(
        "show", parents=[JSON_FLAG], help="print your address and public key",
        description="Your address (CZ-XXXX-XXXX-XXXX, a short checked id) and public key.",
    )
    show.set_defaults(handler=key_show)

    save_parser = commands.add_parser(
        "save", parents=[JSON_FLAG], help="write a fresh save code (to stdout or --out FILE)",
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
        "load", parents=[JSON_FLAG], help="make a save code this device's wallet",
        description=(
            "Open CODE (a file, or - for stdin) with its passphrase and keep it as this "
            "device's wallet. Two devices are two loads of one code (V.3). A wrong "
            "passphrase or a damaged code changes nothing."
        ),
    )
    load_parser.add_argument("code", metavar="CODE", help="the save code's file, or -")
    load_parser.add_argument(
        "--replace", action="store_true",
        help="replace the wallet already here (its save code is kept under replaced/)",
    )
    load_parser.set_defaults(handler=load)

    coll = commands.add_parser(
        "collection", parents=[JSON_FLAG], help="list your prints, marks, notes and proofs",
        description=(
            "Every print you hold: stamped ✓ with its serial (tradable), unstamped ⧗ "
            "(playable, not tradable until stamped); unstamped marks, bundles, notes, "
            "the fraud proofs your wallet keeps, and a stamp, claim or purchase sent but "
            "not answered yet (pending: the same command run again finishes it)."
        ),
    )
    coll.set_defaults(handler=collection)

    card_parser = commands.add_parser(
        "card", parents=[JSON_FLAG], help="print your ledger card, to be sent prints",
        description=(
            "Your ledger card (V.6 \"Copy my ledger card\"): your public key and address, "
            "nothing secret. Send it to whoever sends you prints: they endorse to it."
        ),
    )
    card_parser.add_argument("--out", metavar="FILE", help="write it to FILE")
    card_parser.set_defaults(handler=card)
