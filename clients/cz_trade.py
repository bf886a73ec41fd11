"""``cz send --to CARD ITEMS...``, ``cz import SLIP`` and ``cz sync``: trading by endorsement
(Book V.6).

Sending asks the league's notary who holds each item (unless ``--offline``), endorses each item
to the card's key and writes the slip; the items leave the wallet at that instant, and the
wallet is saved before the slip appears. Importing verifies the slip offline against the pinned
league's manifest, checks the seen-registry, asks the notary whether the slip's chains are still
current, has the notary record them (unless ``--offline``), and admits all of it or none; a
conflict is refused with its fraud proof kept in the wallet. Syncing lets go of the items the
notary records sent on from this key since the wallet's save code was written (L-23).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from apiclient.league import LeagueClient, NotaryConflict
from clients.cz_session import JSON_FLAG, Opened, emit, league_of, opened_wallet, pinned
from clients.cz_wallet import read_text
from clients.wallet import LeaguePin, NotaryRecord, WalletError, notary_record, write_synced
from ledger.address import address_of
from ledger.armor import LEDGER_CARD, SLIP
from ledger.cards import LedgerCard
from ledger.endorsements import Chain
from ledger.errors import FraudDetected, VerificationError
from ledger.fraud import FraudProof, SeenRegistry
from ledger.keys import PublicKey
from ledger.limits import MAX_ARMOR_BYTES
from ledger.manifest import LeagueManifest
from ledger.slips import Slip, receive_slip
from ledger.words import plural

#: Provenances asked of the notary at once (a slip's items, a wallet's holdings).
ASK_AT_ONCE = 8


async def _records(
    client: LeagueClient, manifest: LeagueManifest, chains: Sequence[Chain]
) -> list[NotaryRecord]:
    """The notary's record of each chain's item, compared with the chain (L-23)."""
    gate = asyncio.Semaphore(ASK_AT_ONCE)

    async def one(chain: Chain) -> NotaryRecord:
        async with gate:
            life = await client.provenance(chain.serial)
        return notary_record(chain, life, manifest)

    return list(await asyncio.gather(*(one(c) for c in chains)))


async def _records_at(pin: LeaguePin, chains: Sequence[Chain]) -> list[NotaryRecord]:
    async with league_of(pin) as (client, manifest):
        return await _records(client, manifest, chains)


def send(args: argparse.Namespace) -> int:
    """Ask the notary who holds ITEMS, endorse them to CARD's key and write the slip."""
    to = LedgerCard.from_armor(read_text(args.to, MAX_ARMOR_BYTES[LEDGER_CARD], "ledger card"))
    serials = [s.strip().upper() for s in args.items]
    out = Path(args.out) if args.out else None
    with opened_wallet() as opened:
        held = opened.wallet.held_chains(serials, to.public_key)
        if args.offline:
            sys.stderr.write(
                "cz: warning: sent without asking the notary who holds them "
                "(--offline): the receiver's import will be the check\n"
            )
        else:  # L-23: never sign away what the notary records gone from this key
            for record in asyncio.run(_records_at(pinned(opened.wallet), held)):
                if record.moved or record.differs is not None:
                    raise WalletError(
                        f"refused: {record.says()}: this wallet no longer holds it (a save "
                        "code older than that hop? cz sync brings it up to date); nothing "
                        "was signed"
                    )
        slip = opened.wallet.send(serials, to.public_key, int(time.time()))
        text = slip.to_armor()
        if out is None:
            opened.save()  # the items have left: saved before the slip is printed
        else:
            _write_then_save(out, text, opened)
    data = {"to": to.address, "serials": serials, "file": args.out}
    what = f"slip of {plural(len(serials), 'item')} to {to.address}"
    if out is not None:
        emit(args, data, f"{what} written to {out}; they have left your wallet")
    elif args.json:
        emit(args, {**data, "slip": text}, text)
    else:
        sys.stdout.write(text)
        sys.stderr.write(f"{what}: they have left your wallet; hand the slip over by any channel\n")
    return 0


def _write_then_save(out: Path, text: str, opened: Opened) -> None:
    """The slip is synced under a temporary name, the wallet saved, then the slip renamed into
    place: a crash never loses both the items and the slip that carries them."""
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        write_synced(temporary, text)
        opened.save()
        os.replace(temporary, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


async def _notarize(opened: Opened, chains: tuple[Chain, ...]) -> int:
    """Have the pinned league's notary record ``chains``; check every receipt offline.
    Returns how many hops this import recorded. A conflict keeps its fraud proofs."""
    wallet = opened.wallet
    async with league_of(pinned(wallet)) as (client, manifest):
        for record in await _records(client, manifest, chains):
            if record.moved:  # L-23: superseded, not fraud; a differing hop is the notary's
                raise WalletError(
                    f"refused: this slip is superseded: {record.says()}, after the slip's "
                    f"hop {len(record.chain.endorsements)}; nothing was admitted (import "
                    "the newer slip, if it is yours)"
                )
        notary = PublicKey.from_text(manifest.notary)
        try:
            answer = await client.notarize(chains)
        except NotaryConflict as exc:
            proofs: list[FraudProof] = []
            for conflict in exc.conflicts:
                conflict.proof.verify()  # the notary's word is checked, not believed
                conflict.prior.check(notary, conflict.proof.first)
                proofs.append(conflict.proof)
            if not proofs:
                raise
            wallet.keep(proofs)
            opened.save()
            raise FraudDetected(
                f"refused: the notary recorded another endorsement first: "
                f"{proofs[0].describe()}; the fraud proof is kept in your wallet",
                tuple(proofs),
            ) from None
    hops = [e for chain in chains for e in chain.endorsements]
    if len(answer.receipts) != len(hops):
        raise VerificationError("the notary did not answer a receipt for every hop")
    for receipt, endorsement in zip(answer.receipts, hops, strict=True):
        if receipt.origin != f"{manifest.league}/notary":
            raise VerificationError("a receipt is of another log than the league's notary")
        receipt.check(notary, endorsement)
    return answer.recorded


def import_slip(args: argparse.Namespace) -> int:
    """Verify a slip, notarize it, admit it or refuse it with the fraud proof kept."""
    slip = Slip.from_armor(read_text(args.slip, MAX_ARMOR_BYTES[SLIP], "slip"))
    with opened_wallet() as opened:
        wallet = opened.wallet
        pin = pinned(wallet)
        registry = SeenRegistry.from_wire(wallet.seen.to_wire())  # changed only on admission
        try:
            chains = receive_slip(slip, pin.manifest, wallet.public, registry)
        except FraudDetected as exc:
            wallet.keep(exc.proofs)
            opened.save()
            raise FraudDetected(
                f"{exc.diagnostics()}; the fraud proof is kept in your wallet", exc.proofs
            ) from None
        wallet.check_new(chains)
        recorded = None if args.offline else asyncio.run(_notarize(opened, chains))
        wallet.seen = registry
        wallet.admit(chains)
        opened.save()
    senders = sorted(
        {
            address_of(PublicKey.from_text(c.endorsements[-1].from_))
            for c in chains
            if c.endorsements
        }
    )
    items = [c.serial for c in chains]
    notarized = "not notarized (--offline)" if recorded is None else "notarized"
    emit(
        args,
        {
            "admitted": items,
            "from": senders,
            "notarized": recorded is not None,
            "recorded": recorded,
        },
        f"admitted {plural(len(items), 'item')} from {', '.join(senders)}, {notarized}:\n"
        + "\n".join(f"  ✓ {s}" for s in items),
    )
    return 0


def sync(args: argparse.Namespace) -> int:
    """Let go of every item the notary records sent on from this key since (L-23)."""
    with opened_wallet() as opened:
        wallet = opened.wallet
        pin = pinned(wallet)
        held = [*wallet.prints.values(), *wallet.notes.values()]
        records = asyncio.run(_records_at(pin, held)) if held else []
        gone = [r for r in records if r.moved]
        for record in gone:
            wallet.leave(record)
        if gone:
            opened.save()
    differ = [r for r in records if r.differs is not None]
    lines = [f"  {r.chain.serial} left this wallet: {r.says()}" for r in gone]
    lines += [f"  {r.chain.serial} is kept, but {r.says()}: cz send refuses it" for r in differ]
    count = plural(len(records), "item")
    head = (
        f"checked {count} with the notary: {len(gone)} sent on from this key since, "
        "gone from this wallet:"
        if gone
        else f"checked {count} with the notary: up to date, nothing was sent on since"
    )
    emit(
        args,
        {
            "checked": len(records),
            "left": [
                {"serial": r.chain.serial, "hop": r.moved[-1].hop, "holder": r.holder} for r in gone
            ],
            "differs": [{"serial": r.chain.serial, "hop": r.differs} for r in differ],
        },
        "\n".join([head, *lines]),
    )
    return 0


def add_trade(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz send`` and ``cz import``."""
    send_parser = commands.add_parser(
        "send",
        parents=[JSON_FLAG],
        help="endorse stamped prints to a ledger card: a slip",
        description=(
            "Endorse each ITEM (the serial of a stamped print you hold) to the key on CARD "
            "(their ledger card, a file or -) and write the slip (stdout, or --out FILE). "
            "The instant the slip is written the items leave your wallet (V.6): the "
            "endorsement is the transfer. Hand the slip over by any channel at all. First "
            "the league's notary is asked who holds each item: one it records sent on from "
            "your key (by another device, or before the save code you loaded) is refused, "
            "nothing signed (cz sync lets it go); --offline skips the question (L-23)."
        ),
    )
    send_parser.add_argument(
        "--to", required=True, metavar="CARD", help="the receiver's ledger card (a file, or -)"
    )
    send_parser.add_argument("items", nargs="+", metavar="ITEM", help="serials to send")
    send_parser.add_argument("--out", metavar="FILE", help="write the slip to FILE")
    send_parser.add_argument(
        "--offline",
        action="store_true",
        help="sign without asking the notary (warned: the receiver's import is the check)",
    )
    send_parser.set_defaults(handler=send)

    imp = commands.add_parser(
        "import",
        parents=[JSON_FLAG],
        help="verify a slip and admit what it sends you",
        description=(
            "Verify SLIP (a file, or -) offline against the pinned league's manifest: the "
            "mint's signature and every endorsement hop, each chain ending at your key; "
            "check your seen-registry; then ask the league's notary for each item's record "
            "(a slip it records superseded, the item sent on since, is refused: L-23) and "
            "have it record the slip, checking every receipt. All of the slip is admitted "
            "or none of it; a print signed away twice is refused with the fraud proof kept "
            "in your wallet (V.6)."
        ),
    )
    imp.add_argument("slip", metavar="SLIP", help="the slip's file, or -")
    imp.add_argument(
        "--offline",
        action="store_true",
        help="admit on offline verification alone, without the notary",
    )
    imp.set_defaults(handler=import_slip)

    sync_parser = commands.add_parser(
        "sync",
        parents=[JSON_FLAG],
        help="let go of what the notary records sent on since",
        description=(
            "Bring this wallet up to date with the league's notary: every print or note "
            "it records sent on from your key since this wallet's save code was written "
            "(by another device, from a newer code) leaves the wallet, a line each, and its "
            "recorded hops join your seen-registry, so this wallet never signs it again "
            "(L-23). Every receipt is checked here. Run it after loading an older save "
            "code, or on a second device; nothing changes if the league does not answer."
        ),
    )
    sync_parser.set_defaults(handler=sync)
