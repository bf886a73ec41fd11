"""The wallet's public summary, kept beside it in ``CZ_HOME`` so that the commands that only
read (``cz card``, ``cz key show``, ``cz collection``, ``cz notes``, ``cz campaign``,
``cz store``) need no passphrase: the key signs, it is not needed to show what the wallet holds.

``public.json`` (mode 0600, like the wallet) holds only what is public or harmless: the
ledger card (public key and address), the pinned league, the collection as ``cz collection``
shows it, the campaign record and the unstamped collection's own record (for ``cz store``).
Never the private key, never the passphrase. It is written each time the wallet is opened or
saved, and names the sealed wallet it summarises by its SHA-256: a summary of another wallet
file (an older or newer save) is not used, and the command asks for the passphrase as
before."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from typing import Any

from clients.wallet import Wallet, WalletHome
from ledger.errors import LedgerError

#: Beside ``wallet.czsave`` in the wallet's home.
PUBLIC_FILE = "public.json"
FORMAT = 2


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("ascii")).hexdigest()


def publish(home: WalletHome, wallet: Wallet, code: str | None = None) -> None:
    """Write the summary of ``wallet``, the wallet sealed as ``code`` (read from the home
    when not given) in ``home``."""
    from clients.cz_wallet import collection_view  # cz_wallet imports the session, which calls us

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
