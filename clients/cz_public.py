"""The wallet's public summary, kept beside it in ``CZ_HOME`` so that the commands that only
read (``cz card``, ``cz key show``, ``cz collection``, ``cz notes``, ``cz campaign``,
``cz store``) need no passphrase: the key signs, it is not needed to show what the wallet holds.

``public.json`` (mode 0600, like the wallet) holds only what is public or harmless: the
ledger card (public key and address), the pinned league, the collection as ``cz collection``
shows it, the campaign record and the unstamped collection's own record (for ``cz store``).
Never the private key, never the passphrase. It is written each time the wallet is opened or
saved, and names the sealed wallet it summarises by its SHA-256: a summary of another wallet
file (an older or newer save) is not used, and the command asks for the passphrase as
before.

What the summary shows is written here too, once, for the summary and for the commands that
open the wallet: one print as ``--json`` shows it (:func:`print_item`), the wallet's counts
(:func:`summary`) and ``cz collection`` whole (:func:`collection_view`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from datetime import UTC, datetime
from typing import Any

from clients.wallet import Wallet, WalletHome
from game.window.economy.prints import Print
from ledger.address import address_of
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.errors import LedgerError
from ledger.words import plural

#: Beside ``wallet.czsave`` in the wallet's home.
PUBLIC_FILE = "public.json"
FORMAT = 2


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("ascii")).hexdigest()


def publish(home: WalletHome, wallet: Wallet, code: str | None = None) -> None:
    """Write the summary of ``wallet``, the wallet sealed as ``code`` (read from the home
    when not given) in ``home``."""
    sealed = home.read_code() if code is None else code
    data, text = collection_view(wallet)
    content = {
        "format": FORMAT,
        "wallet_sha256": _digest(sealed),
        "card": wallet.card.to_armor(),
        "address": wallet.card.address,
        "key": wallet.card.key,
        "collection": data,
        "collection_text": text,
        "campaign": wallet.campaign.to_json(),
        "unstamped": wallet.collection.to_json(),
    }
    path = home.directory / PUBLIC_FILE
    temporary = path.with_name(PUBLIC_FILE + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(content, out, ensure_ascii=False)
    os.replace(temporary, path)


def current(home: WalletHome) -> dict[str, Any] | None:
    """The summary of the wallet now in ``home``, or None (no wallet, no summary, or a
    summary of another wallet file than the one there now)."""
    if not home.exists():
        return None
    try:
        content = json.loads((home.directory / PUBLIC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        return None
    with contextlib.suppress(OSError, LedgerError):
        if content.get("wallet_sha256") == _digest(home.read_code()):
            return content
    return None


# -- what the summary shows: the wallet as cz collection lists it ------------------------------


def print_item(p: Print) -> dict[str, Any]:
    """One print as ``--json`` shows it (collection, store, bundles, rewards)."""
    return {"title": p.title, "finish": p.finish.value, "stamped": p.stamped, "serial": p.serial}


def summary(wallet: Wallet) -> dict[str, Any]:
    prints = wallet.collection.prints
    return {
        "marks": wallet.collection.marks,
        "bundles": wallet.collection.bundles,
        "stamped": sum(p.stamped for p in prints),
        "unstamped": sum(not p.stamped for p in prints),
        "notes": len(wallet.notes),
        "fraud_proofs": len(wallet.proofs),
    }


def summary_text(wallet: Wallet) -> str:
    s = summary(wallet)
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
        "pending_claim": None
        if claim is None
        else {
            "request_id": claim.request_id,
            "marks": claim.marks,
            "time": claim.time,
        },
        "pending_buy": None
        if buy is None
        else {
            "purchase_id": buy.purchase_id,
            "title": buy.title,
            "time": buy.time,
            "finish": buy.upgrade.finish if buy.upgrade else "standard",
            "returned_print": buy.upgrade.returned.serial if buy.upgrade else None,
            "paid": sum(
                c.certificate.denomination
                for c in buy.payment
                if isinstance(c.certificate, NoteCertificate)
            ),
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
            what = (
                f"a {buy.upgrade.finish} upgrade of {buy.title}, {returned} returned to the mint,"
            )
            again = f"cz buy --upgrade {returned} --finish {buy.upgrade.finish}"
        lines.append(
            f"  pending: {what} (purchase {buy.purchase_id}) sent at {_when(buy.time)}, not "
            f"answered yet, paid M{paid['paid']} with {', '.join(paid['paid_notes'])}: "
            f"{again} finishes it"
        )
    return data, lines


def collection_view(wallet: Wallet) -> tuple[dict[str, Any], str]:
    """``cz collection`` of ``wallet``: its ``--json`` document and its text."""
    address = address_of(wallet.public)
    pin = wallet.league
    league = (
        None
        if pin is None
        else {
            "url": pin.url,
            "league": pin.manifest.league,
            "name": pin.manifest.name,
            "root": address_of(pin.root),
        }
    )
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
        **summary(wallet),
        "prints": [print_item(p) for p in wallet.collection.prints],
        "note_list": notes,
        "bound_notes": bound,
        "bound_prints": [
            {"serial": c.serial, "title": c.certificate.title}
            for c in wallet.bound_prints.values()
            if isinstance(c.certificate, PrintCertificate)
        ],
        "fraud_proof_list": [{"says": p.describe(), "proof": p.to_wire()} for p in wallet.proofs],
        "campaign": wallet.campaign.to_json()["record"],
        "pending_stamp": wallet.pending is not None,
    }
    pending, pending_lines = _pending(wallet)
    data.update(pending)
    lines = [
        f"{address}  "
        + (
            f"league {pin.manifest.name!r} at {pin.url} (root {address_of(pin.root)})"
            if pin
            else "no league set (cz league set URL)"
        ),
        summary_text(wallet),
    ]
    if wallet.campaign.record:  # wins, losses and Balances apart, never added (IV.6)
        lines.append(
            "campaign: "
            + ", ".join(
                f"{venue.name} {t.wins} won, {t.losses} lost, {t.balances} Balanced"
                for venue, t in wallet.campaign.record
            )
        )
    for p in sorted(
        wallet.collection.prints, key=lambda p: (not p.stamped, p.title, p.serial or "")
    ):
        lines.append(f"  {p.label()}")
    for note in notes:
        lines.append(f"  ✓ M{note['denomination']} note {note['serial']}")
    for note in bound:
        lines.append(
            f"  ⇢ M{note['denomination']} note {note['serial']}, bound to the "
            "treasury: its hop there is signed (a rejected purchase); cz buy pays "
            "it first"
        )
    for item in data["bound_prints"]:
        lines.append(
            f"  ⇢ {item['title']} {item['serial']}, bound to the mint: its hop there "
            f"is signed (a rejected upgrade); cz buy --upgrade {item['serial']} "
            "returns it"
        )
    for proof in wallet.proofs:
        lines.append(f"  fraud proof: {proof.describe()}")
    lines += pending_lines
    return data, "\n".join(lines)
