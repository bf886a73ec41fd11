"""The facts of a treasury's ``reward-paid`` event (``ledger.audit.rewards`` checks them):
apart from ``ledger.audit.facts``, which builds them, so neither imports the other's checks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from ledger.api.rewards import RewardDue, reward_order_id
from ledger.errors import LedgerError
from ledger.events import RewardPaid
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.wire import hash_text


@dataclass(frozen=True, slots=True)
class PaidReward:
    """A table's payment in the treasury's log: its seq, the player and the due it paid."""

    seq: int
    player: str
    due: RewardDue


@dataclass(frozen=True, slots=True)
class MisprintAwarded:
    """The Misprint's award in the mint's log (L-24): the seq of its ``print-stamped`` event,
    the table the event names and the player the certificate is issued to. The tables' audit
    checks it went to the log's first settling Balance at Chair VI or above (L-41)."""

    seq: int
    table: str
    player: str


class Rewarded(NamedTuple):
    """A ``reward-paid`` event, its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    stream: str
    version: int
    table: str
    player: str
    due: RewardDue
    #: (serial, issue, denomination, receiver, hash_text of the certificate's signing bytes).
    notes: tuple[tuple[str, int, int, str, str], ...]
    #: The mint orders: (order id, owner, title, finish).
    orders: tuple[tuple[str, str, str, str], ...]
    #: Why it fails before the stateful checks (a signature, an order that is not the due's).
    early: str | None


def rewarded_fact(
    manifest: LeagueManifest,
    seq: int,
    stream: str,
    version: int,
    leaf_hash: bytes,
    body: RewardPaid,
) -> Rewarded:
    """The facts of one ``reward-paid`` event whose leaf and signature verified."""
    order = body.order
    early = None
    try:
        if manifest.tables is None:
            raise LedgerError("the manifest names no tables key, and a reward is paid")
        order.verify(PublicKey.from_text(manifest.tables))
        manifest.check_addressed("treasury", "the reward order", order.league, order.manifest)
        treasury = PublicKey.from_text(manifest.treasury)
        if len(body.orders) != len(order.due.prints):
            raise LedgerError(
                f"{len(body.orders)} mint orders for the {len(order.due.prints)} prints due"
            )
        for k, (mint_order, due) in enumerate(zip(body.orders, order.due.prints, strict=True)):
            mint_order.verify(treasury)
            manifest.check_addressed("mint", "the order", mint_order.league, mint_order.manifest)
            if (
                mint_order.order_id,
                mint_order.owner,
                mint_order.title,
                mint_order.finish,
                mint_order.returned,
            ) != (reward_order_id(order.table, k), order.player, due.title, due.finish, None):
                raise LedgerError(
                    f"mint order {k} ({mint_order.order_id}) is not print {k} of the due, "
                    f"{due.finish} {due.title}, to {order.player}"
                )
    except LedgerError as exc:
        early = f"table {order.table}'s reward: {exc.diagnostics()}"
    notes = tuple(
        (
            n.serial,
            n.issue,
            n.denomination,
            n.issued_to,
            hash_text(hashlib.sha256(n.signing_bytes).digest()),
        )
        for n in body.notes
    )
    orders = tuple((o.order_id, o.owner, o.title, o.finish) for o in body.orders)
    return Rewarded(
        seq, leaf_hash, stream, version, order.table, order.player, order.due, notes, orders, early
    )
