"""Logs of a league built in memory with real signatures, and the ways the auditor's tests
stamp, trade, issue, buy and return in them (tests/ledger/audit/test_*.py)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from ledger.api.logs import Feed, FeedEvent
from ledger.api.notary import HolderRow, Holders
from ledger.api.treasury import Upgrade, buy_request
from ledger.audit import AuditFailure, Auditor
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.endorsements import Chain, endorse
from ledger.events import (
    ConflictRefused,
    EventBody,
    HopRecorded,
    NoteIssued,
    NoteReturned,
    OrderRefused,
    PaymentNotarized,
    PaymentReturned,
    PrintDelivered,
    PrintReissued,
    PrintReturned,
    PrintStamped,
    PurchaseClosed,
    PurchaseOpened,
)
from ledger.fraud import FraudProof
from ledger.keys import SigningKey
from ledger.leaf import Event, canonical_leaf
from ledger.merkle import LeafHashes, leaf_hash
from tests.ledger.factories import League, chain_of, key

AT = datetime(2026, 12, 2, 15, 51, 34, 123456, tzinfo=UTC)


class Log:
    """A service's log in memory: events signed and hashed as the event store does."""

    def __init__(self, league: League, service: str, signer: SigningKey) -> None:
        self.origin = f"{league.manifest.league}/{service}"
        self.service = service
        self.signer = signer
        self.events: list[FeedEvent] = []
        self.versions: Counter[str] = Counter()

    def append(self, body: EventBody, *, edit: dict[str, object] | None = None) -> FeedEvent:
        stream = body.stream()
        self.versions[stream] += 1
        fields = {
            "seq": len(self.events),
            "stream": stream,
            "stream_version": self.versions[stream],
            "type": body.TYPE,
            "body": body.to_wire(),
            "recorded_at": AT,
        }
        leaf = canonical_leaf(**fields)  # type: ignore[arg-type]
        event = Event(**fields, leaf_hash=leaf_hash(leaf), signature=self.signer.sign_raw(leaf))  # type: ignore[arg-type]
        served = FeedEvent.of(event)
        if edit:  # the row edited after signing: the served body no longer matches its leaf
            served = served.model_copy(update={"body": {**served.body, **edit}})
        self.events.append(served)
        return served

    def checkpoint(self, size: int | None = None, signer: SigningKey | None = None) -> Checkpoint:
        size = len(self.events) if size is None else size
        leaves = [
            leaf_hash(
                canonical_leaf(
                    seq=e.seq,
                    stream=e.stream,
                    stream_version=e.stream_version,
                    type=e.type,
                    body=e.body,
                    recorded_at=AT,
                )
            )
            for e in self.events[:size]
        ]
        root = LeafHashes(leaves).root()
        return sign_checkpoint(self.origin, size, root, signer or self.signer)


class World:
    """A league's mint and notary logs, and how prints are stamped and traded in them."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.mint = Log(league, "mint", league.mint)
        self.treasury = Log(league, "treasury", league.treasury)
        self.notary = Log(league, "notary", league.notary)
        self.hops: dict[tuple[str, int], int] = {}

    def stamp(
        self,
        holder: SigningKey,
        serial: str,
        *,
        title: str = "Model-A",
        card_set: str = "begotten",
        finish: str = "standard",
        signer: SigningKey | None = None,
    ) -> Chain:
        certificate = self.league.print_certificate(
            holder,
            serial,
            title=title,
            card_set=card_set,
            finish=finish,
            event=len(self.mint.events),
        )
        if signer is not None:
            certificate = type(certificate).sign(signer, **certificate.body())
        self.mint.append(PrintStamped(certificate=certificate, request_id="request-0001"))
        return Chain(certificate=certificate, endorsements=())

    def record(self, chain: Chain, hop: int) -> None:
        self.hops[(chain.serial, hop)] = len(self.notary.events)
        self.notary.append(HopRecorded(issue=1, endorsement=chain.endorsements[hop - 1]))

    def refuse(self, recorded: Chain, other: Chain, hop: int) -> None:
        proof = FraudProof(first=recorded.endorsements[hop - 1], second=other.endorsements[hop - 1])
        self.notary.append(
            ConflictRefused(issue=1, prior=self.hops[(recorded.serial, hop)], proof=proof)
        )

    def audit(self, *, kept: dict[str, Checkpoint] | None = None, page: int = 1) -> Auditor:
        auditor = Auditor(self.league.manifest, self.league.root.public)
        for service, checkpoint in (kept or {}).items():
            auditor.checkpoint(service, checkpoint, kept=True)
        logs = (
            (self.mint, self.treasury, self.notary)
            if self.treasury.events
            else (self.mint, self.notary)
        )
        for log in logs:
            auditor.checkpoint(log.service, log.checkpoint())
            for start in range(0, len(log.events), page):
                auditor.add(log.service, log.events[start : start + page])
        return auditor

    def issue(
        self,
        holder: SigningKey,
        serial: str,
        *,
        issue: int = 1,
        reason: str = "claim",
        request_id: str = "claim-0001",
        signer: SigningKey | None = None,
    ) -> Chain:
        """A note issued by the treasury (its next event)."""
        certificate = NoteCertificate.sign(
            signer or self.league.treasury,
            serial=serial,
            denomination=int(serial.split("-")[1][1:]),
            issued_to=holder.public.to_text(),
            issue=issue,
            event=len(self.treasury.events),
            manifest=self.league.manifest.hash_text(),
        )
        self.treasury.append(
            NoteIssued(certificate=certificate, request_id=request_id, reason=reason)
        )  # type: ignore[arg-type]
        return Chain(certificate=certificate, endorsements=())

    def record_note(self, chain: Chain, hop: int) -> int:
        """The notary records hop ``hop`` of a note's chain; its seq."""
        seq = len(self.notary.events)
        self.notary.append(
            HopRecorded(issue=chain.certificate.issue, endorsement=chain.endorsements[hop - 1])
        )
        return seq


def failure(world: World, **kwargs: object) -> AuditFailure:
    with pytest.raises(AuditFailure) as caught:
        world.audit(**kwargs).report()  # type: ignore[arg-type]
    assert "\n" not in caught.value.diagnostics()
    return caught.value


a, b, c, d = key(10), key(11), key(12), key(13)


def traded(world: World) -> Chain:
    """Two prints stamped; the first traded a→b→c, and a's second signature (to d) refused."""
    chain = world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(b, "CZ-MODEL-A-0002")
    to_c = chain_of(chain.certificate, a, b, c)
    world.record(to_c, 1)
    world.record(to_c, 2)
    world.refuse(to_c, chain_of(chain.certificate, a, d), 1)
    return to_c


def holders_page(
    world: World,
    rows: dict[str, tuple[int, int, str]],
    size: int | None = None,
) -> Holders:
    return Holders(
        holders=[
            HolderRow(serial=s, issue=i, hops=h, holder=k) for s, (i, h, k) in sorted(rows.items())
        ],
        log_size=len(world.notary.events) if size is None else size,
        next_after=None,
    )


def audit_with_holders(world: World, *pages: tuple[str, Holders]) -> Auditor:
    auditor = Auditor(world.league.manifest, world.league.root.public)
    for after, page in pages:
        auditor.holders(after, page)
    for log in (world.mint, world.notary):
        auditor.checkpoint(log.service, log.checkpoint())
        auditor.add(log.service, log.events)
    return auditor


def pages_of(log: Log, size: int = 2) -> list[str]:
    return [
        Feed(
            events=log.events[i : i + size], next_after=log.events[i : i + size][-1].seq
        ).model_dump_json()
        for i in range(0, len(log.events), size)
    ]


def mutations(world: World) -> list[tuple[str, str]]:
    """Pages of the notary's and the mint's feeds, clean and with each kind of defect."""
    out = [("mint", page) for page in pages_of(world.mint)]
    out += [("notary", page) for page in pages_of(world.notary)]
    raw = json.loads(pages_of(world.mint, 1)[0])
    event = raw["events"][0]

    def edited(
        service: str,
        change: dict[str, object],
        body: dict[str, object] | None = None,
        certificate: dict[str, object] | None = None,
    ) -> tuple[str, str]:
        e = copy.deepcopy(event)
        e.update(change)
        if body:
            e["body"].update(body)
        if certificate:
            e["body"]["certificate"].update(certificate)
        return service, json.dumps({"events": [e], "next_after": 0})

    out += [
        edited("mint", {"seq": 5}),
        edited("mint", {"seq": "0"}),
        edited("mint", {"recorded_at": "2026-02-30T15:51:34.123456Z"}),
        edited("mint", {"recorded_at": "0999-12-02T15:51:34.123456Z"}),
        edited("mint", {"signature": event["signature"][:-2] + "AA"}),
        edited("mint", {"leaf_hash": event["leaf_hash"].lower()}),
        edited("mint", {"type": "hop-recorded"}),
        edited("mint", {"stream": "print/CZ-MODEL-A-0009"}),
        edited("mint", {}, body={"request_id": "ré"}),
        edited("mint", {}, body={"extra": 1}),
        edited("mint", {}, certificate={"issue": 1.0}),
        edited("mint", {}, certificate={"event": 2**60}),
        edited("mint", {}, certificate={"title": "Faithful"}),
        ("mint", '{"events": [], "next_after": 1.5}'),
        ("mint", "not json"),
        ("mint", '{"events": [{"seq": 0}], "next_after": 0}'),
    ]
    # A run of good events, then one whose own signature fails, then more: the fast path
    # verifies a run's signatures together, and must stop where the reference path does.
    for service, log, bad in (
        ("notary", world.notary, 1),
        ("mint", world.mint, 1),
        ("notary", world.notary, 0),
    ):
        page = json.loads(pages_of(log, 3)[0])
        page["events"][bad]["signature"] = page["events"][bad]["signature"][:-2] + "AA"
        out.append((service, json.dumps(page)))
    return out


treasury_key = key(3)  # tests.ledger.factories.make_league's treasury


def purchase(
    world: World,
    buyer: SigningKey,
    paid: list[Chain],
    *,
    price: int = 30,
    change: tuple[str, ...] = ("CZ-M5-000001", "CZ-M5-000002", "CZ-M5-000003", "CZ-M5-000004"),
    misnamed: int = 0,
    stamped: bool = True,
) -> None:
    """A purchase's saga as the treasury writes it: the paid chains (each already endorsed to
    the treasury) notarized, the print (a common single, M30) delivered, the notes returned,
    the change issued."""
    pid = "purchase-0001"
    seqs = [world.record_note(chain, len(chain.endorsements)) for chain in paid]
    request = buy_request(
        buyer, world.league.manifest, "Tally", paid, purchase_id=pid, at=1_700_000_000
    )
    total = sum(int(chain.serial.split("-")[1][1:]) for chain in paid)
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=price, paid=total))
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    serial = "CZ-TALLY-0001"  # the first Tally the mint stamps
    printed = (
        world.stamp(buyer, serial, title="Tally", card_set="base").certificate
        if stamped
        else world.league.print_certificate(
            buyer, serial, title="Tally", card_set="base", finish="standard", event=0
        )
    )
    assert isinstance(printed, PrintCertificate)
    log.append(PrintDelivered(purchase_id=pid, certificate=printed))
    for chain, seq in zip(paid, seqs, strict=True):
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=chain.certificate.issue,
                endorsement=chain.endorsements[-1],
                notarized=seq + misnamed,
                purchase_id=pid,
            )
        )
    log.append(PaymentReturned(purchase_id=pid, notes=tuple(c.serial for c in paid)))
    notes = [
        world.issue(buyer, serial, reason="change", request_id=pid).certificate for serial in change
    ]
    log.append(PurchaseClosed(purchase_id=pid, outcome="delivered", notes=tuple(notes)))  # type: ignore[arg-type]


def both_paid(world: World, first: Chain, second: Chain) -> list[Chain]:
    """Both of treasury_world's M25s paid to the treasury by a (M50 for a single of M30: M20
    of change): a's second, and the first, which a paid b and b paid back (hop 2 recorded)."""
    back = endorse(first, b, a.public, 1_700_000_050)
    world.record_note(back, 2)
    return [
        chain_of(second.certificate, a, treasury_key),
        endorse(back, a, treasury_key.public, 1_700_000_100),
    ]


def treasury_world(world: World) -> list[Chain]:
    """a claims 50 marks (2 x M25), b 1 mark; a pays b one M25 at the notary."""
    first = world.issue(a, "CZ-M25-000001")
    second = world.issue(a, "CZ-M25-000002")
    world.issue(b, "CZ-M1-000001", request_id="claim-0002")
    to_b = chain_of(first.certificate, a, b)
    world.record_note(to_b, 1)
    return [to_b, second]


def refunded(world: World, buyer: SigningKey, paid: list[Chain], *, short: int = 0) -> None:
    """A purchase whose run was exhausted, as the treasury writes it: each paid note returned
    and issued again to the buyer (issue n+1), then the purchase closed refunded."""
    pid = "purchase-0002"
    seqs = [world.record_note(chain, len(chain.endorsements)) for chain in paid]
    request = buy_request(
        buyer, world.league.manifest, "Tally", paid, purchase_id=pid, at=1_700_000_000
    )
    total = sum(int(chain.serial.split("-")[1][1:]) for chain in paid)
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=30, paid=total))
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    log.append(OrderRefused(purchase_id=pid, reason="the run is exhausted"))
    notes = []
    for chain, seq in zip(paid[: len(paid) - short], seqs, strict=False):
        n = chain.certificate.issue
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=n,
                endorsement=chain.endorsements[-1],
                notarized=seq,
                purchase_id=pid,
            )
        )
        notes.append(
            world.issue(
                buyer, chain.serial, issue=n + 1, reason="refund", request_id=pid
            ).certificate
        )
    log.append(PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes)))  # type: ignore[arg-type]


mint_key = key(2)  # tests.ledger.factories.make_league's mint


def returned_to_mint(
    world: World, holder: SigningKey, order: str = "purchase-0004", *, notarized: int | None = None
) -> Chain:
    """A print stamped to ``holder``, endorsed to the mint's key, notarized (unless
    ``notarized`` names another seq for it), and taken back by the mint for ``order``."""
    chain = world.stamp(holder, "CZ-MODEL-A-0001")
    back = chain_of(chain.certificate, holder, mint_key)
    if notarized is None:
        notarized = len(world.notary.events)
        world.notary.append(HopRecorded(issue=1, endorsement=back.endorsements[0]))
    world.mint.append(
        PrintReturned(
            serial=chain.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=notarized,
            order_id=order,
        )
    )
    return back


def reissue(world: World, holder: SigningKey, order: str = "purchase-0004") -> PrintCertificate:
    certificate = world.league.print_certificate(
        holder, "CZ-MODEL-A-0001", issue=2, event=len(world.mint.events)
    )
    world.mint.append(PrintReissued(certificate=certificate, order_id=order))
    return certificate


def upgrade(
    world: World,
    buyer: SigningKey,
    back: Chain,
    pid: str = "purchase-0004",
    *,
    reissued: PrintCertificate | None = None,
    closed: bool = True,
) -> list[int]:
    """A gilt upgrade of ``back``'s print as the treasury writes it, paid M100 (a's and d's
    claimed M25s): opened, and unless not ``closed`` refused (handing back ``reissued``) and
    refunded in full. The seqs of the payment's hops at the notary."""
    issued = [
        (holder, world.issue(holder, f"CZ-M25-00000{n}", request_id=f"claim-000{n}").certificate)
        for n, holder in ((1, a), (2, a), (3, d), (4, d))
    ]
    # The buyer pays (L-21): a note of another key is paid to the buyer first, those hops
    # recorded after the buyer's own payment hops.
    gifts = [chain_of(note, holder, buyer) for holder, note in issued if holder != buyer]
    paid = [chain_of(note, buyer, treasury_key) for holder, note in issued if holder == buyer]
    paid += [endorse(gift, buyer, treasury_key.public, 1_700_000_050) for gift in gifts]
    seqs = [world.record_note(chain, 1) for chain in paid[: len(paid) - len(gifts)]]
    for gift in gifts:
        world.record_note(gift, 1)
    seqs += [world.record_note(chain, 2) for chain in paid[len(paid) - len(gifts) :]]
    request = buy_request(
        buyer,
        world.league.manifest,
        "Model-A",
        paid,
        purchase_id=pid,
        at=1_700_000_000,
        upgrade=Upgrade(finish="gilt", returned=back),
    )
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=80, paid=100))
    if not closed:
        return seqs
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    log.append(OrderRefused(purchase_id=pid, reason="the run is exhausted", reissued=reissued))
    notes = []
    for chain, seq in zip(paid, seqs, strict=True):
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=1,
                endorsement=chain.endorsements[-1],
                notarized=seq,
                purchase_id=pid,
            )
        )
        notes.append(
            world.issue(buyer, chain.serial, issue=2, reason="refund", request_id=pid).certificate
        )
    log.append(PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes)))  # type: ignore[arg-type]
    return seqs
