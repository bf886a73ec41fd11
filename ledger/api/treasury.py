"""What the treasury reads and answers (Book V.5, V.8; docs/architecture.md §4 and §5).

``POST /treasury/claim`` reads a :class:`ClaimRequest` (the faucet: unstamped marks to notes,
signed by the claimant's key, with proof of work bound to it) and answers a
:class:`ClaimAnswer` that always says what is left of the key's day. ``GET /treasury``
answers a :class:`TreasurySupply`: supply, reserve and circulation per denomination, which
sum to the note set's 1,500,000 marks by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ledger.api.mint import Item
from ledger.api.problems import Problem
from ledger.catalog import SET_RARITY, CardSet, Rarity
from ledger.certificates import EventIndex, NoteCertificate, PrintCertificate
from ledger.endorsements import Chain, Endorsement, UnixTime, verify_league_chain
from ledger.errors import ChainError, UnknownTitle
from ledger.fraud import FraudProof
from ledger.keys import SigningKey
from ledger.manifest import LeagueId, LeagueManifest, Policies
from ledger.note_set import Denomination
from ledger.print_runs import RunFinish, TitleText
from ledger.requests import Nonce, RequestId
from ledger.wire import HashText, KeyText, SignedModel, WireModel, WireTuple
from ledger.work import challenge, solve

#: Book V.5: the cheapest thing notes buy is a common single at M30. A claim's proof of work
#: is priced so that the marks of one such print cost at least the mint's base price of
#: stamping one (``claim_work``): buying with faucet notes is no cheaper a drain than
#: stamping (docs/economy.md).
CHEAPEST_SINGLE_MARKS = 30
#: Most marks one claim may ask for (the day's cap is the manifest's, and at most this).
MAX_CLAIM_MARKS = 1_000_000

Marks = Annotated[int, Field(ge=1, le=MAX_CLAIM_MARKS)]


class ClaimRequest(SignedModel):
    """Unstamped marks presented for notes by the claimant, signed by the claimant's key."""

    KIND: ClassVar[str] = "claim-request"
    WHAT = "claim request"

    kind: Literal["claim-request"]
    #: The league id and the hash of its manifest: a request for another league is refused.
    league: LeagueId
    manifest: HashText
    #: Unique per claimant: a replay answers the same notes and issues nothing new.
    request_id: RequestId
    #: Unix seconds when the claimant signed; too far from the treasury's clock is stale.
    time: UnixTime
    #: The key the notes are issued to; it signs this request.
    owner: KeyText
    #: Unstamped marks to convert (the day's remaining cap converts at most).
    marks: Marks
    #: One proof-of-work nonce worth ``claim_work(policies, marks)`` (``ledger.work``, index
    #: 0), bound to everything above.
    work: Nonce


def claim_work(policies: Policies, marks: int) -> int:
    """Expected hashes a claim of ``marks`` costs: the mint's base stamping price per
    :data:`CHEAPEST_SINGLE_MARKS` marks, rounded up (at least 1)."""
    return max(1, -(-policies.stamp_work * marks // CHEAPEST_SINGLE_MARKS))


def claim_request(
    owner: SigningKey,
    manifest: LeagueManifest,
    marks: int,
    *,
    request_id: str,
    at: int,
    work: int | None = None,
) -> ClaimRequest:
    """A signed claim of ``marks`` made at Unix time ``at``, with its proof of work solved
    (``work`` overrides the price, for tests of a short nonce)."""
    unsigned = {
        "league": manifest.league,
        "manifest": manifest.hash_text(),
        "request_id": request_id,
        "time": at,
        "owner": owner.public.to_text(),
        "marks": marks,
    }
    price = claim_work(manifest.policies, marks) if work is None else work
    nonce = solve(challenge({"kind": ClaimRequest.KIND, **unsigned}), 0, price)
    return ClaimRequest.sign(owner, **unsigned, work=nonce)


class Answer(BaseModel):
    """Base of the treasury's answers: plain JSON, unknown fields refused when parsed back."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FaucetDay(Answer):
    """The published faucet (marks per key per UTC day) and what is left of it today."""

    per_day: int
    claimed_today: int
    left_today: int
    day: str = Field(description="The UTC day counted, YYYY-MM-DD")
    resets_at: int = Field(description="Unix seconds of the next UTC midnight")


class ClaimAnswer(Answer):
    """The notes a claim was issued: ``marks`` of the ``requested``, at most what was left of
    the key's day, composed from the reserve largest denomination first."""

    request_id: str
    replayed: bool = Field(description="True when this answer repeats an earlier one")
    requested: int
    marks: int = Field(description="Marks converted: the sum of the notes' denominations")
    notes: list[NoteCertificate]
    faucet: FaucetDay

    @model_validator(mode="after")
    def _notes_make_the_marks(self) -> Self:
        if sum(note.denomination for note in self.notes) != self.marks:
            raise ValueError("the notes of a claim answer do not sum to its marks")
        return self


class DenominationSupply(Answer):
    """One denomination: how many notes exist, how many are in the reserve, how many out."""

    denomination: Denomination
    supply: int = Field(description="Notes of this denomination in the note set (fixed)")
    reserve: int = Field(description="Notes held by the treasury, issuable")
    circulation: int = Field(description="Notes issued and not returned")

    @model_validator(mode="after")
    def _reserve_and_circulation_are_the_supply(self) -> Self:
        if (
            self.reserve < 0
            or self.circulation < 0
            or self.reserve + self.circulation != (self.supply)
        ):
            raise ValueError(f"M{self.denomination}: reserve + circulation is not the supply")
        return self


class MarkTotals(Answer):
    """The same three counts in marks, over every denomination."""

    supply: int
    reserve: int
    circulation: int


class TreasurySupply(Answer):
    """``GET /treasury``: the currency's audit (Book V.8), with the treasury log's checkpoint."""

    league: str
    manifest: str
    denominations: list[DenominationSupply]
    marks: MarkTotals
    checkpoint: str = Field(description="The treasury log's latest signed checkpoint")

    @model_validator(mode="after")
    def _totals_sum(self) -> Self:
        for name in ("supply", "reserve", "circulation"):
            total = sum(d.denomination * getattr(d, name) for d in self.denominations)
            if total != getattr(self.marks, name):
                raise ValueError(f"the {name} in marks is not the sum of its denominations")
        return self

    @classmethod
    def of(
        cls,
        manifest: LeagueManifest,
        circulation: dict[int, int],
        checkpoint: str,
    ) -> TreasurySupply:
        """The supply of ``manifest``'s note set with ``circulation`` notes out per
        denomination."""
        denominations = [
            DenominationSupply(
                denomination=issue.denomination,
                supply=issue.count,
                reserve=issue.count - circulation.get(issue.denomination, 0),
                circulation=circulation.get(issue.denomination, 0),
            )
            for issue in manifest.note_set.issues
        ]
        return cls(
            league=manifest.league,
            manifest=manifest.hash_text(),
            denominations=denominations,
            marks=MarkTotals(
                supply=sum(d.denomination * d.supply for d in denominations),
                reserve=sum(d.denomination * d.reserve for d in denominations),
                circulation=sum(d.denomination * d.circulation for d in denominations),
            ),
            checkpoint=checkpoint,
        )


class ReturnedPrint(WireModel):
    """A print handed back to the mint for a finish upgrade (Book V.5, docs/architecture.md §3,
    L-20): its
    whole chain, the last hop the buyer's endorsement to the mint's key, and the ``seq`` of the
    notary's ``hop-recorded`` event that recorded that endorsement. The whole chain travels so
    that the mint checks offline, as anyone can, that the buyer held the print and signed it
    back, trusting the treasury's signature for nothing but the notary's index."""

    WHAT = "returned print"

    chain: Chain
    notarized: EventIndex

    @model_validator(mode="after")
    def _a_print_endorsed(self) -> Self:
        if not isinstance(self.chain.certificate, PrintCertificate):
            raise ValueError("a returned print's chain starts from a print certificate")
        if not self.chain.endorsements:
            raise ValueError("a returned print's chain ends with its endorsement to the mint")
        return self

    @property
    def certificate(self) -> PrintCertificate:
        """The print's certificate (of the issue returned)."""
        certificate = self.chain.certificate
        assert isinstance(certificate, PrintCertificate)  # the validator's
        return certificate

    @property
    def endorsement(self) -> Endorsement:
        """The chain's last hop: the buyer's endorsement to the mint's key."""
        return self.chain.endorsements[-1]


class MintOrder(SignedModel):
    """The treasury's order to the mint: stamp one print of ``title`` in ``finish`` to
    ``owner``, paid for with notes (Book V.5: "buying with notes returns a stamped print").
    Signed by the treasury's key; the mint stamps it inside the fixed runs and outside the
    owner's daily stamping allowance, once per ``order_id`` (the purchase id)."""

    KIND: ClassVar[str] = "mint-order"
    WHAT = "mint order"

    kind: Literal["mint-order"]
    league: LeagueId
    manifest: HashText
    #: The purchase id: the mint stamps each order once, and answers a replay the same.
    order_id: RequestId
    #: Unix seconds when the treasury signed (a claim only: an order is resent as it was).
    time: UnixTime
    #: The buyer, to whom the certificate is issued.
    owner: KeyText
    title: TitleText
    finish: RunFinish
    #: A finish upgrade (L-20): the standard print of ``title`` the buyer returned, its last
    #: hop to the mint's key as the notary recorded it. The mint takes it back in the same
    #: transaction as it stamps (or, its run exhausted, issues it again to ``owner``). Absent
    #: from the order when None, so a single's order is signed as it always was.
    returned: ReturnedPrint | None = Field(
        default=None, exclude_if=lambda returned: returned is None
    )


def mint_order(
    treasury: SigningKey,
    manifest: LeagueManifest,
    *,
    order_id: str,
    owner: str,
    title: str,
    finish: str,
    at: int,
    returned: ReturnedPrint | None = None,
) -> MintOrder:
    """The treasury's signed order of one print for ``owner`` (with the print returned, for
    a finish upgrade)."""
    fields: dict[str, object] = {"returned": returned} if returned is not None else {}
    return MintOrder.sign(
        treasury,
        league=manifest.league,
        manifest=manifest.hash_text(),
        order_id=order_id,
        time=at,
        owner=owner,
        title=title,
        finish=finish,
        **fields,
    )


class OrderAnswer(Answer):
    """The mint's answer to an order: the print stamped, or refused (an exhausted run)."""

    order_id: str
    replayed: bool = Field(description="True when this answer repeats an earlier one")
    item: Item
    reissued: PrintCertificate | None = Field(
        default=None,
        description="An upgrade refused (its run exhausted): the returned print, issued again "
        "to the buyer under its next issue (L-20)",
    )


#: Most orders one ``POST /mint/orders/batch`` carries.
MAX_ORDERS = 256


class MintOrders(WireModel):
    """Orders sent together (``POST /mint/orders/batch``): each answered as ``POST
    /mint/orders`` answers it alone, in one list, in order."""

    WHAT = "batch of mint orders"

    orders: Annotated[tuple[MintOrder, ...], WireTuple, Field(min_length=1, max_length=MAX_ORDERS)]


class OrderOutcome(Answer):
    """One order of a batch: its answer, or the problem ``POST /mint/orders`` would have
    answered it alone (exactly one of the two)."""

    answer: OrderAnswer | None = None
    problem: Problem | None = None

    @model_validator(mode="after")
    def _one_of_two(self) -> Self:
        if (self.answer is None) == (self.problem is None):
            raise ValueError("an order's outcome is an answer or a problem, not both")
        return self


class OrdersAnswer(Answer):
    """The mint's outcome of each order of a batch, in the batch's order."""

    outcomes: list[OrderOutcome]


#: Book V.5: singles by rarity, in marks (notes). Bundles are never sold for notes.
SINGLE_PRICES: dict[Rarity, int] = {
    Rarity.COMMON: 30,
    Rarity.UNCOMMON: 60,
    Rarity.RARE: 120,
    Rarity.SEALED: 240,
}
#: Book V.5: a finish upgrade, against a standard print returned, in marks (notes).
UPGRADE_PRICES: dict[str, int] = {"gilt": 80, "holofoil": 200}
#: The finishes an upgrade buys.
UpgradeFinish = Literal["gilt", "holofoil"]
#: Most notes one purchase may pay with.
MAX_PAYMENT_NOTES = 64
#: Most notes of change or refund one purchase is issued (a refund is the paid notes; change
#: composed from a reserve short of large notes could need many small ones: the treasury
#: waits for a reserve that makes it in at most this many).
MAX_CHANGE_NOTES = 256


def single_price(manifest: LeagueManifest, title: str) -> int:
    """The price in marks of a single of ``title`` (Book V.5), by the rarity of its set;
    :class:`UnknownTitle` for a title the league does not print."""
    run = manifest.print_runs.by_serial_title.get(title.upper())
    if run is None or run.title != title:
        raise UnknownTitle(f"the league prints no title {title!r}")
    return SINGLE_PRICES[SET_RARITY[CardSet(run.set)]]


class Upgrade(WireModel):
    """A finish upgrade (Book V.5 "finish upgrade (gilt M80, holofoil M200)", L-20): the
    finish bought and the standard print of the purchase's title returned for it, as a whole
    chain whose last hop is the buyer's endorsement to the mint's key ("comes back to its
    issuer", docs/architecture.md §3)."""

    WHAT = "upgrade"

    finish: UpgradeFinish
    returned: Chain


def purchase_price(manifest: LeagueManifest, title: str, upgrade: Upgrade | None) -> int:
    """The published price of a purchase (Book V.5): a single of ``title`` by rarity, or a
    finish upgrade by the finish; :class:`UnknownTitle` for a title the league does not
    print."""
    price = single_price(manifest, title)
    return price if upgrade is None else UPGRADE_PRICES[upgrade.finish]


def check_handed_to_issuer(
    chain: Chain, manifest: LeagueManifest, buyer: str, issuer: str, why: str
) -> None:
    """A chain the buyer hands to an issuer in a purchase: every signature and link verified
    offline under ``manifest``, its last hop ``buyer``'s own endorsement to ``issuer``'s key;
    a :class:`ChainError` otherwise.

    The last signer is what binds the hop to *this* purchase (L-21): a payer's hop to the
    treasury is public once a purchase opens (``purchase-opened`` keeps the chains), so a
    chain endorsed to the issuer by anyone but the request's signer is someone else's money
    or print, whoever copied it."""
    holder = verify_league_chain(chain, manifest)
    if not chain.endorsements or holder.to_text() != issuer:
        raise ChainError(f"{chain.serial} is not endorsed to {issuer}: {why}")
    if chain.endorsements[-1].from_ != buyer:
        raise ChainError(
            f"{chain.serial} is not the buyer's: its last endorsement is signed by another "
            f"key, and a purchase takes only what its buyer signed over (L-21)"
        )


def check_payment_chain(chain: Chain, manifest: LeagueManifest, buyer: str) -> NoteCertificate:
    """A note paid in a purchase (L-18, L-21): a note, its last hop ``buyer``'s own
    endorsement to the treasury's key; its certificate."""
    certificate = chain.certificate
    if not isinstance(certificate, NoteCertificate):
        raise ChainError(f"{chain.serial} is a print: a purchase is paid with notes")
    check_handed_to_issuer(
        chain,
        manifest,
        buyer,
        manifest.treasury,
        "a note pays only once its last endorsement is to the treasury's key",
    )
    return certificate


def check_returned_chain(chain: Chain, manifest: LeagueManifest, buyer: str) -> None:
    """An upgrade's returned print's chain (L-20), as the treasury checks it when the purchase
    opens and the mint again when the order comes: ending at the mint's key ("back to its
    issuer") with ``buyer``'s own endorsement."""
    check_handed_to_issuer(
        chain,
        manifest,
        buyer,
        manifest.mint,
        "a print returned for an upgrade goes back to its issuer, the mint's key",
    )


class BuyRequest(SignedModel):
    """A purchase with notes (Book V.5), signed by the buyer: a single of ``title`` (standard
    finish), or with ``upgrade`` a print of ``title`` in the gilt or holofoil finish against
    a standard print of it returned, paid with whole note chains endorsed to the treasury's
    key."""

    KIND: ClassVar[str] = "buy-request"
    WHAT = "buy request"

    kind: Literal["buy-request"]
    league: LeagueId
    manifest: HashText
    #: The purchase id: every step of the purchase is keyed by it; a replay answers the same.
    purchase_id: RequestId
    time: UnixTime
    #: The buyer: the print and the change are issued to this key; it signs this request.
    buyer: KeyText
    #: The single bought (Book V.5: "singles by rarity M30/M60/M120/M240").
    title: TitleText
    #: The notes paid: each a whole chain (certificate and every endorsement), the last one
    #: to the treasury's key.
    payment: Annotated[
        tuple[Chain, ...], WireTuple, Field(min_length=1, max_length=MAX_PAYMENT_NOTES)
    ]
    #: A finish upgrade (L-20). Absent from the request when None: a single's request is
    #: signed as it always was.
    upgrade: Upgrade | None = Field(default=None, exclude_if=lambda upgrade: upgrade is None)

    @model_validator(mode="after")
    def _notes_once(self) -> Self:
        if len({chain.serial for chain in self.payment}) != len(self.payment):
            raise ValueError("the payment names each note once")
        return self


def buy_request(
    buyer: SigningKey,
    manifest: LeagueManifest,
    title: str,
    payment: Sequence[Chain],
    *,
    purchase_id: str,
    at: int,
    upgrade: Upgrade | None = None,
) -> BuyRequest:
    """The buyer's signed purchase of a single of ``title`` paid with ``payment`` (or, with
    ``upgrade``, of its finish upgrade)."""
    fields: dict[str, object] = {"upgrade": upgrade} if upgrade is not None else {}
    return BuyRequest.sign(
        buyer,
        league=manifest.league,
        manifest=manifest.hash_text(),
        purchase_id=purchase_id,
        time=at,
        buyer=buyer.public.to_text(),
        title=title,
        payment=tuple(payment),
        **fields,
    )


class BuyAnswer(Answer):
    """How a purchase ended: the print and the exact change, the paid notes refunded (an
    exhausted run), or the payment rejected (the notary recorded another endorsement first)."""

    purchase_id: str
    replayed: bool = Field(
        description="True when this answer repeats an earlier one: the purchase was opened "
        "by an earlier request, this one opened nothing"
    )
    outcome: Literal["delivered", "refunded", "rejected"]
    price: int
    paid: int = Field(description="Marks paid: the sum of the paid notes' denominations")
    stamped: PrintCertificate | None = Field(description="The print, stamped to the buyer")
    change: list[NoteCertificate] = Field(
        description="Notes issued as change, summing to paid - price"
    )
    refund: list[NoteCertificate] = Field(description="The paid notes, issued back to the buyer")
    reason: str | None = None
    proofs: list[FraudProof] = Field(
        default_factory=list, description="Fraud proofs of a rejected payment"
    )
    returned: PrintCertificate | None = Field(
        default=None,
        description="An upgrade refunded: the print returned for it, issued again to the buyer "
        "under its next issue (L-20)",
    )
