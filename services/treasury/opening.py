"""Opening a purchase: the buyer's request checked and its first step built (Book V.5).

What a purchase's request is answered on before the saga (``services.treasury.buying``)
drives it: everything that needs no database, checked off the event loop (:func:`check`: the
league, the buyer's signature, the published price, every paid chain and an upgrade's
returned print verified offline), then ``purchase-opened`` built in the purchase writer's
transaction (:func:`opening`) against what the log holds: a purchase id already opened for the
same request is a replay (it opens nothing, and the saga answers how that purchase ended);
for another request it is refused (the kernel's answered-requests layer,
``services.kernel.answered``); each paid note of its current issue, out and paid into no
other open purchase; an upgrade's print never returned into another purchase (L-20); the
change composable from the reserve.
"""

from __future__ import annotations

from ledger.api.rewards import REWARD_ORDER_PREFIX
from ledger.api.treasury import (
    MAX_CHANGE_NOTES,
    BuyRequest,
    Upgrade,
    check_payment_chain,
    check_returned_chain,
    purchase_price,
)
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.errors import (
    ChainError,
    RunExhaustedError,
    StaleIssueError,
    VerificationError,
)
from ledger.events import PurchaseOpened
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from services.kernel.answered import Words, replayed
from services.treasury.treasury import make_change
from services.treasury.writing import Group, OpeningKey, Planned, Reads

#: How the treasury's refusal of a purchase id reused names it (``services.kernel.answered``).
WORDS = Words(request="purchase", id="purchase id", by="", clock="the treasury's clock")


def check(manifest: LeagueManifest, request: BuyRequest) -> int:
    """The purchase's price, once everything that needs no database is checked (CPU-bound:
    every chain's signatures)."""
    manifest.check_addressed("treasury", "the purchase", request.league, request.manifest)
    if request.purchase_id.startswith(REWARD_ORDER_PREFIX):
        # The mint answers an order id once: a purchase's id never takes a reward print's.
        raise VerificationError(
            f"purchase ids starting {REWARD_ORDER_PREFIX!r} are the treasury's own (the mint "
            f"orders of witnessed tables' rewards): choose another"
        )
    request.verify(PublicKey.from_text(request.buyer))
    price = purchase_price(manifest, request.title, request.upgrade)
    if request.upgrade is not None:
        _check_returned(manifest, request, request.upgrade)
    paid = 0
    for chain in request.payment:
        paid += check_payment_chain(chain, manifest, request.buyer).denomination
    if paid < price:
        raise VerificationError(
            f"the payment of {paid} marks is short of the price of {request.title}, "
            f"{price} marks (Book V.5)"
        )
    return price


def _check_returned(manifest: LeagueManifest, request: BuyRequest, upgrade: Upgrade) -> None:
    """An upgrade's returned print (L-20): a standard print of the title, the buyer's, its
    last hop the buyer's endorsement to the mint's key ("goes back to its issuer")."""
    chain = upgrade.returned
    certificate = chain.certificate
    if not isinstance(certificate, PrintCertificate):
        raise VerificationError(
            f"{chain.serial} is a note: an upgrade returns a standard print of the title"
        )
    if (certificate.title, certificate.finish) != (request.title, "standard"):
        raise VerificationError(
            f"{chain.serial} is a {certificate.finish} {certificate.title}: a {upgrade.finish}"
            f" {request.title} is bought against a standard {request.title} returned "
            f"(Book V.5 finish upgrade)"
        )
    check_returned_chain(chain, manifest, request.buyer)


def opening(request: BuyRequest, price: int) -> Reads:
    """The build of ``request``'s purchase opened (its one step), or of nothing for a
    replay, with what it reads (read for every opening of its group at once)."""
    paid = sum(
        chain.certificate.denomination
        for chain in request.payment
        if isinstance(chain.certificate, NoteCertificate)
    )
    opened = PurchaseOpened(
        purchase_id=request.purchase_id, request=request, price=price, paid=paid
    )
    upgrade = request.upgrade
    returned = None if upgrade is None else (upgrade.returned.serial, upgrade.returned.issue)

    async def build(group: Group) -> list[Planned]:
        found = await group.opening(
            request.purchase_id, [chain.serial for chain in request.payment], returned
        )
        if replayed(found.prior, request.hash(), request.purchase_id, WORDS):
            return []
        _check_notes(request, found.notes)
        if upgrade is not None and found.print_returned is not None:
            chain = upgrade.returned
            raise StaleIssueError(
                f"{chain.serial} issue {chain.issue} was returned to the mint in purchase "
                f"{found.print_returned}: it cannot be returned again"
            )
        reserve = {d: row.reserve for d, row in (await group.supply()).items()}
        change = make_change(paid - price, reserve) if paid > price else []
        if change is None or len(change) > MAX_CHANGE_NOTES:
            raise RunExhaustedError(
                f"the reserve cannot make {paid - price} marks of change now; pay with "
                f"notes nearer the price"
            )
        return [(opened, 0)]

    key = OpeningKey(
        request.purchase_id, tuple(chain.serial for chain in request.payment), returned
    )
    return Reads(key, build)


def _check_notes(request: BuyRequest, found: dict[str, tuple[int, str | None, str | None]]) -> None:
    """Each paid note of its current issue, out, and paid into no other open purchase."""
    for chain in request.payment:
        issue, holder, paying = found.get(chain.serial, (0, None, None))
        if issue != chain.issue or holder is None:
            raise StaleIssueError(
                f"{chain.serial} issue {chain.issue} is spent: the note came back to the "
                f"treasury" + (f" and its current issue is {issue}" if issue > chain.issue else "")
            )
        if paying is not None:
            raise StaleIssueError(
                f"{chain.serial} issue {chain.issue} is being spent in purchase {paying}"
            )
        if holder != chain.certificate.issued_to:  # pragma: no cover (the log's own)
            raise ChainError(f"{chain.serial} was not issued to the chain's first holder")
