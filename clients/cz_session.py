"""What every wallet and league command of ``cz`` shares: the passphrase, the opened wallet,
the pinned league, output as text or ``--json``, and a progress bar on a terminal."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from clients.cz_public import current, publish
from clients.wallet import LeaguePin, Wallet, WalletError, WalletHome, unseal
from ledger.address import address_of
from ledger.errors import BadSignatureError, LedgerError, WrongPassphraseError
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest

if TYPE_CHECKING:  # the league client (aiohttp) is imported by the commands that call it
    from apiclient.league import LeagueClient

#: A script's passphrase (otherwise ``cz`` asks on the terminal and never echoes it).
PASSPHRASE_ENV = "CZ_PASSPHRASE"  # noqa: S105 (a variable name, not a secret)
#: The passphrase a caller in this process hands to the commands it runs, in place of asking
#: (``cz web``: typed into its Unlock form, kept in its process only). While it is set, even to
#: the empty string (a locked wallet), nothing is asked on the terminal.
HANDED_PASSPHRASE: ContextVar[str | None] = ContextVar("HANDED_PASSPHRASE", default=None)

#: ``--json`` for every wallet and league command (argparse ``parents=``).
JSON_FLAG = argparse.ArgumentParser(add_help=False)
JSON_FLAG.add_argument(
    "--json", action="store_true", help="print the result as one JSON document (for scripts)"
)

T = TypeVar("T")


def seed(text: str) -> int:
    """``--seed N`` of every command that deals or plays: a whole number from 0 to 2**63 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError("a seed is a whole number from 0 to 2**63 - 1")
    return value


class RootChanged(LedgerError):
    """The league now signs with another root key than the one pinned on first use."""


def ask_passphrase(prompt: str = "passphrase: ", *, confirm: bool = False) -> str:
    """The passphrase handed in (:data:`HANDED_PASSPHRASE`), else ``$CZ_PASSPHRASE``, else typed
    on the terminal (twice with ``confirm``)."""
    handed = HANDED_PASSPHRASE.get()
    if handed is not None:
        if not handed:
            raise WalletError("the wallet is locked: unlock it with its passphrase first")
        return handed
    given = os.environ.get(PASSPHRASE_ENV)
    if given is not None:
        if not given:
            raise WalletError(f"{PASSPHRASE_ENV} is set but empty")
        return given
    if not _has_terminal():
        raise WalletError(
            f"no passphrase: type it on a terminal, or set {PASSPHRASE_ENV} for a script"
        )
    try:
        first = getpass.getpass(prompt)  # on the terminal itself, never echoed
        if confirm and getpass.getpass("the same passphrase again: ") != first:
            raise WalletError("the two passphrases differ: nothing was written")
    except EOFError:
        raise WalletError("no passphrase was typed") from None
    if not first:
        raise WalletError("a passphrase is not empty")
    return first


def _has_terminal() -> bool:
    """Whether a passphrase can be typed: a controlling terminal (getpass reads /dev/tty,
    so ``cz load - < code`` still asks), else stdin itself a terminal."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return sys.stdin.isatty()
    os.close(fd)
    return True


@dataclass(slots=True)
class Opened:
    """A wallet opened from its home, with the passphrase to seal it back."""

    home: WalletHome
    wallet: Wallet
    passphrase: str

    def save(self) -> None:
        self.home.write(self.wallet, self.passphrase)
        publish(self.home, self.wallet)


#: Passphrases typed on a terminal before a command gives up.
TRIES = 3


def _unseal_asking(home: WalletHome, code: str) -> tuple[Wallet, str]:
    """The wallet, opened with the passphrase: ``$CZ_PASSPHRASE`` once, else typed on the
    terminal, asked again after a wrong one (:data:`TRIES` in all)."""
    asking = HANDED_PASSPHRASE.get() is None and os.environ.get(PASSPHRASE_ENV) is None
    tries = TRIES if asking and _has_terminal() else 1
    for attempt in range(1, tries + 1):
        phrase = ask_passphrase()
        try:
            return unseal(code, phrase), phrase
        except WrongPassphraseError:
            if attempt < tries:
                sys.stderr.write(f"wrong passphrase, try again ({tries - attempt} left)\n")
                sys.stderr.flush()
    # Without the passphrase a changed byte and a wrong passphrase look the same.
    raise WrongPassphraseError(
        f"wrong passphrase: the wallet in {home.directory} does not open with this passphrase"
        + (f" ({tries} tries)" if tries > 1 else "")
        + " (or its file was altered); nothing changed"
    )


@contextlib.contextmanager
def opened_wallet() -> Iterator[Opened]:
    """The home's wallet, its lock held until the command ends (changes are saved with
    :meth:`Opened.save`, explicitly, at the moments the command chooses)."""
    home = WalletHome.default()
    with home.lock():
        code = home.read_code()  # "no wallet" before asking for a passphrase
        wallet, phrase = _unseal_asking(home, code)
        publish(home, wallet, code)  # the summary of the wallet as saved
        yield Opened(home, wallet, phrase)


def public_summary() -> dict[str, Any] | None:
    """The public summary of this home's wallet (``clients.cz_public``), read without the
    passphrase, or None when there is none for the wallet there now (the command then opens
    the wallet). Says so on stderr, in one line, when it is used."""
    summary = current(WalletHome.default())  # replaced whole, and checked against the wallet
    if summary is not None:
        sys.stderr.write(
            "(from the public summary of your wallet as of its last save: no passphrase needed)\n"
        )
        sys.stderr.flush()
    return summary


def read_only(from_summary: Callable[[dict[str, Any]], T], from_wallet: Callable[[Wallet], T]) -> T:
    """What a command that only reads shows: taken from the public summary when there is a
    current one (no passphrase), else from the opened wallet."""
    summary = public_summary()
    if summary is not None:
        return from_summary(summary)
    with opened_wallet() as opened:
        return from_wallet(opened.wallet)


def pinned(wallet: Wallet) -> LeaguePin:
    if wallet.league is None:
        raise WalletError("no league is set: cz league set URL")
    return wallet.league


def root_changed(url: str, pinned_root: PublicKey, served: LeagueManifest) -> RootChanged:
    return RootChanged(
        f"REFUSED: the league at {url} is signed by root key "
        f"{address_of(PublicKey.from_text(served.root))}, but this wallet pinned "
        f"{address_of(pinned_root)} on first use; a league's root key never changes, so this "
        "is another league or an impostor (nothing was sent to it)"
    )


@contextlib.asynccontextmanager
async def league_of(pin: LeaguePin) -> AsyncIterator[tuple[LeagueClient, LeagueManifest]]:
    """The pinned league, its manifest fetched and checked against the pin: the same root
    key (loudly refused otherwise) and the very manifest the wallet verifies against."""
    from apiclient.league import MAX_RETRIES, LeagueClient

    async with LeagueClient(pin.url, retries=MAX_RETRIES) as client:
        try:
            manifest = await client.manifest(pin.root)
        except BadSignatureError:
            served = await client.manifest()
            raise root_changed(client.shown_url, pin.root, served) from None
        if manifest.hash_text() != pin.manifest.hash_text():
            raise RootChanged(
                f"REFUSED: the league at {client.shown_url} serves another manifest than the "
                "one this wallet pinned, under the same root key; nothing was sent to it"
            )
        yield client, manifest


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """``data`` as JSON with ``--json``, else ``text`` for a person."""
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


class Progress:
    """A one-line bar on stderr, drawn only when stderr is a terminal."""

    WIDTH = 30

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.shown = self.stream.isatty() and total > 0
        self.label = label
        self.total = total

    def at(self, done: int) -> None:
        """Draw the bar at ``done`` of ``total`` (callable from a worker thread)."""
        if self.shown:
            filled = self.WIDTH * min(done, self.total) // self.total
            bar = "#" * filled + "." * (self.WIDTH - filled)
            self.stream.write(f"\r{self.label} [{bar}] {done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
