"""The typed bodies of every service's events: what a log's feed says, as protocol objects.

Each event type is one strict model; :func:`parse_event` reads a recorded event's body as the
model its type names, so a projection, ``league verify`` and an offline auditor all read the
same fields the same way. The bytes signed for an event are :mod:`ledger.leaf`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal, TypeVar

from pydantic import Field

from ledger.api.rewards import MAX_REWARD_NOTES, MAX_REWARD_PRINTS, RewardOrder, reward_stream
from ledger.api.treasury import MAX_CHANGE_NOTES, MAX_PAYMENT_NOTES, BuyRequest, MintOrder
from ledger.certificates import (
    EventIndex,
    IssueNumber,
    NoteCertificate,
    PrintCertificate,
    SerialText,
)
from ledger.endorsements import Endorsement
from ledger.errors import SchemaError
from ledger.fraud import FraudProof
from ledger.leaf import Event, NewEvent
from ledger.requests import RequestId
from ledger.wire import WireModel, WireTuple

B = TypeVar("B", bound="EventBody")


class EventBody(WireModel):
    """Base of every event body; ``TYPE`` is the event's ``type`` in the log."""

    TYPE: ClassVar[str]

    def stream(self) -> str:
        """The stream the event belongs to (the thing whose life it records)."""
        raise NotImplementedError

    def new_event(self, expected_version: int) -> NewEvent:
        """The event to append, expecting its stream at ``expected_version``."""
        return NewEvent(self.stream(), expected_version, self.TYPE, self.to_wire())


# -- the mint ----------------------------------------------------------------------------------


class PrintStamped(EventBody):
    """A print stamped from its run (Book V.4): the certificate issued, and the request."""

    TYPE: ClassVar[str] = "print-stamped"
    WHAT = "print-stamped event"

    certificate: PrintCertificate
    #: The owner's request id that presented the print (the owner is the certificate's), or
    #: the treasury's order id when ``ordered``.
    request_id: RequestId
    #: Stamped on the treasury's signed order (a purchase with notes, Book V.5), outside the
    #: owner's daily stamping allowance. Absent from the body when false, so a stamp's bytes
    #: are what they always were.
    ordered: bool = Field(default=False, exclude_if=lambda ordered: not ordered)

    def stream(self) -> str:
        return print_stream(self.certificate.serial)


def print_stream(serial: str) -> str:
    """The mint's stream of one print: its stamp, then its returns and issues again,
    alternating (L-20). Issue n is the stream's version 2n-1 and its return version 2n, as a
    note's in the treasury's log: the log itself refuses a second return of one issue."""
    return f"print/{serial}"


class PrintReturned(EventBody):
    """A print handed back to the mint for a finish upgrade (Book V.5, docs/architecture.md §3 "a
    print returned for a finish upgrade ... comes back to its issuer", L-20): the chain of
    ``issue`` is history from now on, and the mint holds the print."""

    TYPE: ClassVar[str] = "print-returned"
    WHAT = "print-returned event"

    serial: SerialText
    #: The issue whose chain ends here.
    issue: IssueNumber
    #: The endorsement to the mint's key, as the notary recorded it.
    endorsement: Endorsement
    #: The ``seq`` of the notary's ``hop-recorded`` event that recorded it.
    notarized: EventIndex
    #: The treasury's order (the purchase id) that took it back.
    order_id: RequestId

    def stream(self) -> str:
        return print_stream(self.serial)


class PrintReissued(EventBody):
    """A returned print issued again under its next issue (L-20): only to the buyer whose
    upgrade was refused (its run exhausted), in the transaction that took it back."""

    TYPE: ClassVar[str] = "print-reissued"
    WHAT = "print-reissued event"

    certificate: PrintCertificate
    #: The treasury's order (the purchase id) refused.
    order_id: RequestId

    def stream(self) -> str:
        return print_stream(self.certificate.serial)


#: The mint log's event types.
MINT_EVENTS: Mapping[str, type[EventBody]] = {
    PrintStamped.TYPE: PrintStamped,
    PrintReturned.TYPE: PrintReturned,
    PrintReissued.TYPE: PrintReissued,
}


# -- the notary ------------------------------------------------------------------------------


def item_stream(serial: str) -> str:
    """The notary's stream of one item: its recorded hops and refused conflicts."""
    return f"item/{serial}"


class HopRecorded(EventBody):
    """The first endorsement recorded at (serial, issue, hop): it moves the item to ``to``
    (Book V.6: "the first endorsement recorded at each hop wins")."""

    TYPE: ClassVar[str] = "hop-recorded"
    WHAT = "hop-recorded event"

    #: The issue of the certificate the chain starts from (a re-issue starts a new chain).
    issue: IssueNumber
    endorsement: Endorsement

    def stream(self) -> str:
        return item_stream(self.endorsement.serial)


class ConflictRefused(EventBody):
    """A different endorsement at a recorded hop, refused: ``proof.first`` is the recorded
    one, ``proof.second`` the refused one, both signed by the same holder (Book V.7)."""

    TYPE: ClassVar[str] = "conflict-refused"
    WHAT = "conflict-refused event"

    issue: IssueNumber
    #: The ``seq`` of the notary's ``hop-recorded`` event that holds ``proof.first``.
    prior: EventIndex
    proof: FraudProof

    def stream(self) -> str:
        return item_stream(self.proof.first.serial)


#: The notary log's event types.
NOTARY_EVENTS: Mapping[str, type[EventBody]] = {
    HopRecorded.TYPE: HopRecorded,
    ConflictRefused.TYPE: ConflictRefused,
}


# -- the treasury ----------------------------------------------------------------------------


def note_stream(serial: str) -> str:
    """The treasury's stream of one note: its issues and returns, alternating. Issue n is the
    stream's version 2n-1 and its return version 2n, so appending issue n expects version
    2(n-1): the log itself refuses a second issue of a note still out."""
    return f"note/{serial}"


class NoteIssued(EventBody):
    """A note issued from the reserve (Book V.5): the treasury-signed certificate of its next
    issue, made out to the receiver, and the request it answers."""

    TYPE: ClassVar[str] = "note-issued"
    WHAT = "note-issued event"

    certificate: NoteCertificate
    #: The claim's request id (the faucet), the purchase id (change), or the table id (a
    #: witnessed table's reward).
    request_id: RequestId
    #: Why it was issued: a faucet claim counts against the receiver's day; change (a
    #: purchase's), refund (a paid note issued back when the run was exhausted) and reward
    #: (a witnessed table's, ``ledger.rewards``) do not.
    reason: Literal["claim", "change", "refund", "reward"]

    def stream(self) -> str:
        return note_stream(self.certificate.serial)


class NoteReturned(EventBody):
    """A note paid back to the treasury, back in the reserve: the chain of ``issue`` is
    history from now on (Book V.5: "the notes you spent go back to the treasury to be
    re-issued")."""

    TYPE: ClassVar[str] = "note-returned"
    WHAT = "note-returned event"

    serial: SerialText
    #: The issue whose chain ends here.
    issue: IssueNumber
    #: The endorsement to the treasury's key, as the notary recorded it.
    endorsement: Endorsement
    #: The ``seq`` of the notary's ``hop-recorded`` event that recorded it.
    notarized: EventIndex
    #: The purchase the note paid for.
    purchase_id: RequestId

    def stream(self) -> str:
        return note_stream(self.serial)


def purchase_stream(purchase_id: str) -> str:
    """The treasury's stream of one purchase: one event per step of its saga."""
    return f"purchase/{purchase_id}"


class PurchaseStep(EventBody):
    """Base of the purchase saga's events: each names its purchase."""

    purchase_id: RequestId

    def stream(self) -> str:
        return purchase_stream(self.purchase_id)


class PurchaseOpened(PurchaseStep):
    """A purchase accepted for its saga (Book V.5 "buying with notes"): the buyer's signed
    request (the payment chains with it), the price and the marks paid."""

    TYPE: ClassVar[str] = "purchase-opened"
    WHAT = "purchase-opened event"

    request: BuyRequest
    price: Annotated[int, Field(ge=1)]
    paid: Annotated[int, Field(ge=1)]


class PaymentNotarized(PurchaseStep):
    """The notary recorded every paid note's endorsement to the treasury: the ``seq`` of each
    hop-recorded event in the notary's log, in payment order (the last hop of each chain)."""

    TYPE: ClassVar[str] = "payment-notarized"
    WHAT = "payment-notarized event"

    notarized: Annotated[
        tuple[EventIndex, ...], WireTuple, Field(min_length=1, max_length=MAX_PAYMENT_NOTES)
    ]
    #: A finish upgrade: the ``seq`` of the hop-recorded event of the returned print's
    #: endorsement to the mint (L-20). Absent from the body when None.
    returned: EventIndex | None = Field(default=None, exclude_if=lambda seq: seq is None)


class PaymentRejected(PurchaseStep):
    """The notary refused the payment (another endorsement recorded first, or a chain that
    is history): nothing was paid, nothing is delivered."""

    TYPE: ClassVar[str] = "payment-rejected"
    WHAT = "payment-rejected event"

    reason: Annotated[str, Field(max_length=2000)]
    proofs: Annotated[tuple[FraudProof, ...], WireTuple, Field(max_length=MAX_PAYMENT_NOTES)] = ()


class OrderSigned(PurchaseStep):
    """The treasury's signed order to the mint (sent as it is until the mint answers)."""

    TYPE: ClassVar[str] = "order-signed"
    WHAT = "order-signed event"

    order: MintOrder


class PrintDelivered(PurchaseStep):
    """The mint stamped the order: the print, issued to the buyer."""

    TYPE: ClassVar[str] = "print-delivered"
    WHAT = "print-delivered event"

    certificate: PrintCertificate


class OrderRefused(PurchaseStep):
    """The mint refused the order for good (an exhausted run): the payment is refunded."""

    TYPE: ClassVar[str] = "order-refused"
    WHAT = "order-refused event"

    reason: Annotated[str, Field(max_length=2000)]
    #: A finish upgrade refused: the returned print as the mint issued it again to the buyer
    #: (L-20). Absent from the body when None.
    reissued: PrintCertificate | None = Field(
        default=None, exclude_if=lambda certificate: certificate is None
    )


class PaymentReturned(PurchaseStep):
    """The paid notes are back in the reserve (their ``note-returned`` events are in the same
    transaction)."""

    TYPE: ClassVar[str] = "payment-returned"
    WHAT = "payment-returned event"

    notes: Annotated[
        tuple[SerialText, ...], WireTuple, Field(min_length=1, max_length=MAX_PAYMENT_NOTES)
    ]


class PurchaseClosed(PurchaseStep):
    """The purchase ended: delivered with its change, refunded, or rejected. ``notes`` are the
    change or the refund, issued in the same transaction."""

    TYPE: ClassVar[str] = "purchase-closed"
    WHAT = "purchase-closed event"

    outcome: Literal["delivered", "refunded", "rejected"]
    notes: Annotated[
        tuple[NoteCertificate, ...], WireTuple, Field(max_length=MAX_CHANGE_NOTES)
    ] = ()


#: The purchase saga's event types.
PURCHASE_EVENTS: tuple[type[PurchaseStep], ...] = (
    PurchaseOpened,
    PaymentNotarized,
    PaymentRejected,
    OrderSigned,
    PrintDelivered,
    OrderRefused,
    PaymentReturned,
    PurchaseClosed,
)


class RewardPaid(EventBody):
    """The treasury paid a witnessed table's reward (``ledger.rewards``): the tables service's
    signed order, the notes issued to the player (each also a ``note-issued`` event of this
    transaction, reason ``reward``, after this one) and the treasury's signed orders to the
    mint of the reward's prints (sent as they are until answered). At version 0 of stream
    ``reward/<table>``: the log itself refuses a second payment of a table."""

    TYPE: ClassVar[str] = "reward-paid"
    WHAT = "reward-paid event"

    order: RewardOrder
    notes: Annotated[tuple[NoteCertificate, ...], WireTuple, Field(max_length=MAX_REWARD_NOTES)]
    orders: Annotated[tuple[MintOrder, ...], WireTuple, Field(max_length=MAX_REWARD_PRINTS)]

    def stream(self) -> str:
        return reward_stream(self.order.table)


#: The treasury log's event types.
TREASURY_EVENTS: Mapping[str, type[EventBody]] = {
    NoteIssued.TYPE: NoteIssued,
    NoteReturned.TYPE: NoteReturned,
    **{step.TYPE: step for step in PURCHASE_EVENTS},
    RewardPaid.TYPE: RewardPaid,
}


def parse_event(event: Event, types: Mapping[str, type[EventBody]]) -> EventBody:
    """``event``'s body as the model of its type; a type not in ``types`` is refused."""
    model = types.get(event.type)
    if model is None:
        raise SchemaError(f"event {event.seq} has the unknown type {event.type!r}")
    return model.from_wire(event.body)


def body_as(event: Event, model: type[B]) -> B:
    """``event``'s body as ``model``, which its type must name."""
    if event.type != model.TYPE:
        raise SchemaError(f"event {event.seq} is a {event.type!r}, not a {model.TYPE!r}")
    return model.from_wire(event.body)
