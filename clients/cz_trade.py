"""``cz send --to CARD ITEMS...`` and ``cz import SLIP``: trading by endorsement (Book V.6).

Sending endorses each item to the card's key and writes the slip; the items leave the wallet at
that instant, and the wallet is saved before the slip appears. Importing verifies the slip
offline against the pinned league's manifest, checks the seen-registry, has the league's notary
record it (unless ``--offline``), and admits all of it or none; a conflict is refused with its
fraud proof kept in the wallet.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from clients.cz_session import JSON_FLAG, Opened, emit, league_of, opened_wallet, pinned
from clients.cz_wallet import read_text
from clients.league import NotaryConflict
from ledger.address import address_of
from ledger.armor import LEDGER_CARD, SLIP
from ledger.cards import LedgerCard
from ledger.endorsements import Chain
from ledger.errors import FraudDetected, VerificationError
from ledger.fraud import FraudProof, SeenRegistry
from ledger.keys import PublicKey
from ledger.limits import MAX_ARMOR_BYTES
from ledger.slips import Slip, receive_slip


def send(args: argparse.Namespace) -> int:
    """Endorse ITEMS to CARD's key and write the slip."""
    to = LedgerCard.from_armor(read_text(args.to, MAX_ARMOR_BYTES[LEDGER_CARD], "ledger card"))
    serials = [s.strip().upper() for s in args.items]
    out = Path(args.out) if args.out else None
    with opened_wallet() as opened:
        slip = opened.wallet.send(serials, to.public_key, int(time.time()))
        text = slip.to_armor()
        if out is None:
            opened.save()  # the items have left: saved before the slip is printed
        else:
            _write_then_save(out, text, opened)
    data = {"to": to.address, "serials": serials, "file": args.out}
    if out is not None:
        emit(args, data, f"slip of {len(serials)} items to {to.address} written to {out}; "
                         "they have left your wallet")
    elif args.json:
        emit(args, {**data, "slip": text}, text)
    else:
        sys.stdout.write(text)
        sys.stderr.write(f"slip of {len(serials)} items to {to.address}: they have left your "
                         "wallet; hand the slip over by any channel\n")
    return 0


def _write_then_save(out: Path, text: str, opened: Opened) -> None:
    """The slip is synced under a temporary name, the wallet saved, then the slip renamed into
    place: a crash never loses both the items and the slip that carries them."""
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
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
    senders = sorted({address_of(PublicKey.from_text(c.endorsements[-1].from_)) for c in chains
                      if c.endorsements})
    items = [c.serial for c in chains]
    notarized = "not notarized (--offline)" if recorded is None else "notarized"
    emit(
        args,
        {"admitted": items, "from": senders, "notarized": recorded is not None,
         "recorded": recorded},
        f"admitted {len(items)} items from {', '.join(senders)}, {notarized}:\n"
        + "\n".join(f"  ✓ {s}" for s in items),
    )
    return 0


def add_trade(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``cz send`` and ``cz import``."""
    send_parser = commands.add_parser(
        "send", parents=[JSON_FLAG], help="endorse stamped prints to a ledger card: a slip",
        description=(
            "Endorse each ITEM (the serial of a stamped print you hold) to the key on CARD "
            "(their ledger card, a file or -) and write the slip (stdout, or --out FILE). "
            "The instant the slip is written the items leave your wallet (V.6): the "
            "endorsement is the transfer. Hand the slip over by any channel at all."
        ),
    )
    send_parser.add_argument("--to", required=True, metavar="CARD",
                             help="the receiver's ledger card (a file, or -)")
    send_parser.add_argument("items", nargs="+", metavar="ITEM", help="serials to send")
    send_parser.add_argument("--out", metavar="FILE", help="write the slip to FILE")
    send_parser.set_defaults(handler=send)

    imp = commands.add_parser(
        "import", parents=[JSON_FLAG], help="verify a slip and admit what it sends you",
        description=(
            "Verify SLIP (a file, or -) offline against the pinned league's manifest: the "
            "mint's signature and every endorsement hop, each chain ending at your key; "
            "check your seen-registry; then have the league's notary record it, checking "
            "every receipt. All of the slip is admitted or none of it; a print signed away "
            "twice is refused with the fraud proof kept in your wallet (V.6)."
        ),
    )
    imp.add_argument("slip", metavar="SLIP", help="the slip's file, or -")
    imp.add_argument("--offline", action="store_true",
                     help="admit on offline verification alone, without the notary")
    imp.set_defaults(handler=import_slip)

