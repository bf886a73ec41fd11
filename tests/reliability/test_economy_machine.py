"""The league's economy under attack, as a state machine (hypothesis ``RuleBasedStateMachine``):
nothing stolen, nothing lost, no honest key convicted, nothing hidden from the audit.

A real league: the mint, the treasury and the notary each served on its own port in this
process over one real PostgreSQL database, calling each other over HTTP
(tests/reliability/league.py). Every request is built and signed with the ledger's builders
and sent by the player's client (apiclient/league.py), never mocked.

The actors:

* honest keys, each a wallet that keeps the chain of what it holds and signs every hop once
  (a request lost to a kill is sent again as it was signed, never signed anew): they claim
  notes, stamp prints, buy singles and finish upgrades, and trade with each other and with the
  attacker;
* an attacker with many keys, which replays any earlier request, signs conflicting
  endorsements of its own holdings (to two of its keys at once, or to one of its keys while
  paying the treasury with the same note), copies every public chain of the feeds (the payment
  chains and returned prints of every ``purchase-opened``) into its own purchases and
  notarizations, forges hops of honest holdings, and sends duplicate claims and purchases at
  once;
* the operator's accidents: a service killed between steps (its server closed at once,
  cancelling the request in flight, its following and resumer stopped where they were) and
  started again on the same database, and the whole league restarted.

After every step (``check``): the treasury serves a supply of exactly M1,500,000 whose
circulation is the notes the model has out (Book V.8); the notary's holders projection is,
row for row, the model's (each item has exactly one holder, the one its own chain of
signatures names, V.6); the chains touched verify offline to their holders; no fraud proof in
the notary's or the treasury's log convicts an honest key (V.7). Every few steps and at the
end (``deep``): every item's provenance names the model's holder, every chain verifies, the
treasury's log folds to its supply and every projection rebuilds to its tables; and
``league audit``'s auditor (auditor/, ledger/audit/) passes over the three
logs, in this process.

Short form in CI (a few dozen steps); ``RELIABILITY_LONG=1`` runs at least
:data:`LONG_STEPS` steps over several leagues and rewrites the figures of docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import secrets
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from apiclient.league import (
    LeagueClient,
    LeagueProblem,
    LeagueUnreachable,
    NotaryConflict,
    stamp_request,
)
from auditor import audit_url
from ledger.api.mint import StampAnswer, Stamped
from ledger.api.notary import HolderRow, Holders, NotarizeAnswer
from ledger.api.treasury import (
    UPGRADE_PRICES,
    BuyAnswer,
    BuyRequest,
    ClaimAnswer,
    ClaimRequest,
    TreasurySupply,
    Upgrade,
    buy_request,
    claim_request,
    single_price,
)
from ledger.api.witness import EvidenceList
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import AddCheckpoint, Checkpoint, sign_checkpoint
from ledger.endorsements import Chain, Endorsement, endorse
from ledger.events import (
    NOTARY_EVENTS,
    TREASURY_EVENTS,
    ConflictRefused,
    NoteIssued,
    NoteReturned,
    PaymentRejected,
    PurchaseOpened,
    parse_event,
)
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from ledger.requests import StampRequest
from ledger.wire import hash_text
from services.kernel.database import scratch_database
from services.kernel.founding import load_manifest
from services.kernel.projections import rebuild
from services.mint.app import MINT_LOG
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.app import NOTARY_LOG
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import TREASURY_LOG
from services.treasury.projection import PROJECTION as TREASURY_PROJECTION
from tests.reliability.economy import Item, Model, Violation
from tests.reliability.figures import long_form, record
from tests.reliability.league import NAMES, RUNS, League, asked, found

#: L-22: the notary logs at most this many refused conflicts per (serial, issue, hop).
MAX_CONFLICTS_PER_HOP = 4
#: Book V.5: the note set is M1,500,000, fixed.
SUPPLY = 1_500_000
#: Wallet times: endorsement times are claims only (nothing orders by them).
T0 = 1_800_000_000
HONEST = 4
ATTACKERS = 4
TITLES = tuple(RUNS)
CLAIMS = (5, 25, 30, 50, 80, 100, 200, 300)

#: The long form's floor of steps in all (the issue's target), over leagues of
#: :data:`LONG_EXAMPLE_STEPS` steps each.
LONG_STEPS = 2_000
LONG_EXAMPLE_STEPS = 250
#: The short form: hypothesis tries the simplest example first (every rule's simplest
#: arguments: claims, and restarts), then a random one (derandomized in CI).
SHORT_STEPS = 30
SHORT_EXAMPLES = 3
#: The long form's games: another every run, unless ``RELIABILITY_SEED`` names the seed of a
#: run to play again (as far as a league's timing lets a game be played again).
LONG_SEED = int(os.environ.get("RELIABILITY_SEED") or secrets.randbits(32))
#: Every this many steps the deep check runs, and the audit every :data:`AUDIT_EVERY` (less
#: often in the long form, whose leagues grow larger).
DEEP_EVERY = 25 if long_form() else 10
AUDIT_EVERY = 125 if long_form() else 50

LOGS = {"mint": MINT_LOG, "treasury": TREASURY_LOG, "notary": NOTARY_LOG}


@dataclass
class Totals:
    """What every machine of this run did, for the figures."""

    examples: int = 0
    steps: int = 0
    checks: int = 0
    deep: int = 0
    kills: int = 0
    #: Kills that cut an honest request off without its answer.
    cut: int = 0
    restarts: int = 0
    audits: int = 0
    attacks: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)


TOTALS = Totals()


@dataclass
class Sent:
    """A request sent and its answer, kept for the attacker to replay."""

    kind: str
    request: ClaimRequest | StampRequest | BuyRequest | list[Chain]
    answer: ClaimAnswer | StampAnswer | BuyAnswer | NotarizeAnswer


def marks(chain: Chain) -> int:
    """The denomination of a note's chain (0 for a print's)."""
    certificate = chain.certificate
    return certificate.denomination if isinstance(certificate, NoteCertificate) else 0


def same(a: Any, b: Any) -> bool:
    """Two answers equal but for ``replayed``."""
    strip = {"replayed", "faucet", "allowance"}  # the key's day as of now, not as then
    return bool(a.model_dump(exclude=strip) == b.model_dump(exclude=strip))


class EconomyMachine(RuleBasedStateMachine):
    """One league, its honest players and its attacker."""

    server_url: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        TOTALS.examples += 1
        self.loop = asyncio.new_event_loop()
        self.stack = contextlib.ExitStack()
        try:
            self._found()
        except BaseException:
            self.stack.close()
            raise

    def _found(self) -> None:
        home = Path(self.stack.enter_context(tempfile.TemporaryDirectory(prefix="cz-machine-")))
        database = self.stack.enter_context(scratch_database(self.server_url, "cz_machine"))
        self.audit_dir = home / "audit"
        self.league = League(found(home / "league", database))
        self.manifest: LeagueManifest = load_manifest(self.league.settings["mint"])
        self.treasury_key = PublicKey.from_text(self.manifest.treasury)
        self.mint_key = PublicKey.from_text(self.manifest.mint)
        self.honest = [SigningKey.generate() for _ in range(HONEST)]
        self.attacker = [SigningKey.generate() for _ in range(ATTACKERS)]
        self.honest_keys = {k.public.to_text() for k in self.honest}
        self.attacker_keys = {k.public.to_text() for k in self.attacker}
        self.model = Model(self.manifest)
        self.sent: list[Sent] = []
        self.public: list[Chain] = []
        #: The chains of rejected purchases: signed to an issuer, public, never taken (a
        #: victim's bound notes among them), which the attacker copies most.
        self.rejected: list[Chain] = []
        self.opened: dict[str, list[Chain]] = {}
        self.cursors = {"notary": -1, "treasury": -1}
        self.convicted: set[str] = set()
        self.conflicts: Counter[tuple[str, int, int]] = Counter()
        self.touched: set[str] = set()
        self.ids = itertools.count(1)
        self.steps = 0
        self.trace: list[str] = []
        #: The long form's leagues each play another game, even hypothesis's simplest, and
        #: every long run other games (:data:`LONG_SEED`).
        self.salt = f"{LONG_SEED}-{TOTALS.examples}" if long_form() else "0"
        self.broken = False
        self.run(self._open())

    # -- plumbing ---------------------------------------------------------------------------

    def run(self, coroutine: Awaitable[Any]) -> Any:
        try:
            return self.loop.run_until_complete(coroutine)
        except BaseException:
            self.broken = True
            raise

    async def _open(self) -> None:
        await self.league.start_all()
        self.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        self.clients = {
            name: LeagueClient(url, session=self.session) for name, url in self.league.urls.items()
        }

    def teardown(self) -> None:
        try:
            if not self.broken:  # a failed step's error is the report, not the teardown's
                self.run(self._deep())
                self.run(self._audit())
            else:
                print("the steps of the failed league:", *self.trace[-60:], sep="\n  ")
        finally:
            try:
                self.run(self.session.close())
                self.run(self.league.kill_all())
            finally:
                self.loop.close()
                self.stack.close()

    def new_id(self, what: str) -> str:
        return f"{what}-{next(self.ids):05d}-{time.monotonic_ns() % 10**9}"

    async def evidence_kept(self) -> int:
        """Evidence every witness keeps: none, since no log of this league forks (a witness
        keeps only a pair that convicts the log by itself; nothing can be planted)."""
        kept = 0
        for name in NAMES:
            listed = await asked(
                lambda n=name: self.clients[n]._json(  # type: ignore[misc]
                    EvidenceList, "GET", f"/{n}/evidence"
                )
            )
            if listed.evidence:
                raise Violation(
                    f"the {name}'s witness keeps evidence against an honest log: "
                    f"{listed.evidence[0].kind}"
                )
            kept += len(listed.evidence)
        return kept

    @property
    def mint(self) -> LeagueClient:
        return self.clients["mint"]

    @property
    def treasury(self) -> LeagueClient:
        return self.clients["treasury"]

    @property
    def notary(self) -> LeagueClient:
        return self.clients["notary"]

    def pick(self, keys: list[SigningKey], index: int) -> SigningKey:
        return keys[index % len(keys)]

    def everyone(self) -> list[SigningKey]:
        return self.honest + self.attacker

    # -- requests, their answers applied to the model ------------------------------------------

    def claim_of(self, owner: SigningKey, marks: int) -> ClaimRequest:
        return claim_request(
            owner, self.manifest, marks, request_id=self.new_id("claim"), at=int(time.time())
        )

    async def claimed(self, request: ClaimRequest) -> ClaimAnswer:
        answer = await asked(lambda: self.treasury.claim(request))
        self.apply_claim(request, answer)
        return answer

    def apply_claim(self, request: ClaimRequest, answer: ClaimAnswer) -> None:
        if answer.marks != request.marks:
            raise Violation(f"a claim of M{request.marks} was issued M{answer.marks}")
        for note in answer.notes:
            note.verify(self.treasury_key)
            if note.issued_to != request.owner:
                raise Violation(f"{note.serial} of a claim issued to another key")
            self.model.issued(note)
            self.touched.add(note.serial)
        self.sent.append(Sent("claim", request, answer))

    def pay(self, owner: SigningKey, price: int) -> list[Chain] | None:
        """Notes of ``owner`` worth at least ``price``, each endorsed to the treasury (a note
        bound to the treasury by a rejected purchase paid with the chain signed then)."""
        key = owner.public.to_text()
        notes = [i.bound for i in self.model.bound_to_treasury(key) if i.bound is not None]
        notes += [
            endorse(i.chain, owner, self.treasury_key, T0)
            for i in self.model.held_by(key)
            if i.note
        ]
        notes.sort(key=lambda chain: -marks(chain))
        chosen: list[Chain] = []
        for chain in notes:
            if sum(map(marks, chosen)) >= price:
                break
            chosen.append(chain)
        return chosen if sum(map(marks, chosen)) >= price else None

    def standard_print(self, owner: SigningKey, title: str | None = None) -> Item | None:
        for item in self.model.held_by(owner.public.to_text()):
            certificate = item.chain.certificate
            if (
                isinstance(certificate, PrintCertificate)
                and certificate.finish == "standard"
                and (title is None or certificate.title == title)
            ):
                return item
        return None

    async def bought(self, request: BuyRequest) -> BuyAnswer:
        answer = await asked(lambda: self.treasury.buy(request))
        self.apply_buy(request, answer)
        return answer

    def apply_buy(
        self, request: BuyRequest, answer: BuyAnswer, *, rejectable: bool = False
    ) -> None:
        """A purchase's answer applied; only an honest purchase paid with a note received
        off the record (``rejectable``) may be rejected, the proofs convicting its payer."""
        TOTALS.outcomes[answer.outcome] += 1
        honest = request.buyer in self.honest_keys
        if answer.outcome == "rejected":
            if honest and not rejectable:
                raise Violation(
                    f"an honest purchase {request.purchase_id} was rejected: {answer.reason}"
                )
            convicted = {proof.verify().to_text() for proof in answer.proofs}
            if not convicted or convicted & self.honest_keys:
                raise Violation(
                    f"{request.purchase_id} rejected convicting {sorted(k[:16] for k in convicted)}"
                )
            for chain in request.payment:  # signed and public now: bound to the treasury
                item = self.model.items[chain.serial]
                if item.bound is None and item.holder == request.buyer and not item.returned:
                    item.bound = chain
            self.sent.append(Sent("buy", request, answer))
            return
        paid = sum(map(marks, request.payment))
        if answer.paid != paid:
            raise Violation(f"{request.purchase_id}: paid M{paid}, answered M{answer.paid}")
        for chain in request.payment:
            self.model.accept(chain)
            self.model.returned(chain.serial)
            self.touched.add(chain.serial)
        if request.upgrade is not None:
            self.model.accept(request.upgrade.returned)
            self.model.returned(request.upgrade.returned.serial)
            self.touched.add(request.upgrade.returned.serial)
        if answer.outcome == "delivered":
            if answer.stamped is None or answer.stamped.issued_to != request.buyer:
                raise Violation(f"{request.purchase_id} delivered no print to its buyer")
            if sum(n.denomination for n in answer.change) != paid - answer.price:
                raise Violation(f"{request.purchase_id}: change is not paid - price")
            answer.stamped.verify(self.mint_key)
            self.model.issued(answer.stamped)
            self.touched.add(answer.stamped.serial)
            issued = answer.change
        else:
            if sorted(n.serial for n in answer.refund) != sorted(c.serial for c in request.payment):
                raise Violation(f"{request.purchase_id}: the refund is not the paid notes")
            issued = answer.refund
            if request.upgrade is not None:
                if answer.returned is None:
                    raise Violation(
                        f"{request.purchase_id}: an upgrade refunded without its "
                        "print handed back (L-20)"
                    )
                issued = [*issued, answer.returned]  # type: ignore[list-item]
        for certificate in issued:
            if certificate.issued_to != request.buyer:
                raise Violation(
                    f"{certificate.serial} of {request.purchase_id} issued to another key"
                )
            self.model.issued(certificate)
            self.touched.add(certificate.serial)
        self.sent.append(Sent("buy", request, answer))

    async def stamped(self, request: StampRequest) -> StampAnswer:
        answer = await asked(lambda: self.mint.stamp(request))
        for item in answer.items:
            if isinstance(item, Stamped):
                item.certificate.verify(self.mint_key)
                if item.certificate.issued_to != request.owner:
                    raise Violation(f"{item.certificate.serial} stamped to another key")
                self.model.issued(item.certificate)
                self.touched.add(item.certificate.serial)
        self.sent.append(Sent("stamp", request, answer))
        return answer

    async def notarized(self, chains: list[Chain]) -> NotarizeAnswer:
        answer = await asked(lambda: self.notary.notarize(chains))
        for chain in chains:
            self.model.accept(chain)
            self.touched.add(chain.serial)
        self.sent.append(Sent("notarize", chains, answer))
        return answer

    async def refused(self, call: Callable[[], Awaitable[Any]], what: str) -> LeagueProblem:
        """``call`` must be refused with a problem (4xx): it is an attack."""
        try:
            answer = await asked(call)
        except LeagueProblem as problem:
            if problem.status >= 500:
                raise
            return problem
        raise Violation(f"{what} was accepted: {answer!r}"[:2000])

    # -- honest players ------------------------------------------------------------------------

    @initialize()
    def fund(self) -> None:
        """Every player starts with a claim and a print."""
        for key in self.everyone():
            self.run(self.claimed(self.claim_of(key, 300)))
            self.run(self.stamped(stamp_request(key, self.manifest, [("Tally", "standard")])))

    def claim(self, who: int, marks: int) -> None:
        self.run(self.claimed(self.claim_of(self.pick(self.everyone(), who), marks)))

    def stamp(self, who: int, title: str, finish: str, count: int) -> None:
        owner = self.pick(self.everyone(), who)
        self.run(self.stamped(stamp_request(owner, self.manifest, [(title, finish)] * count)))

    def buy(self, who: int, title: str, copies: int) -> None:
        """A single bought by an honest key (the same request sent ``copies`` times at once:
        every copy answers the same)."""
        buyer = self.pick(self.honest, who)
        payment = self.pay(buyer, single_price(self.manifest, title))
        if payment is None:
            return
        request = buy_request(
            buyer,
            self.manifest,
            title,
            payment,
            purchase_id=self.new_id("buy"),
            at=int(time.time()),
        )
        self.run(self.bought_at_once(request, copies))

    async def bought_at_once(self, request: BuyRequest, copies: int) -> None:
        answers = await asyncio.gather(
            *(asked(lambda: self.treasury.buy(request)) for _ in range(copies))
        )
        for answer in answers[1:]:
            if not same(answer, answers[0]):
                raise Violation(f"copies of {request.purchase_id} answered differently")
        self.apply_buy(request, answers[0])

    def upgrade(self, who: int, finish: str) -> None:
        """A finish upgrade (L-20): a standard print returned to the mint and notes."""
        buyer = self.pick(self.honest, who)
        item = self.standard_print(buyer)
        payment = self.pay(buyer, UPGRADE_PRICES[finish])
        if item is None or payment is None:
            return
        title = item.chain.certificate.title  # type: ignore[union-attr]
        returned = endorse(item.chain, buyer, self.mint_key, T0)
        request = buy_request(
            buyer,
            self.manifest,
            title,
            payment,
            purchase_id=self.new_id("upgrade"),
            at=int(time.time()),
            upgrade=Upgrade(finish=finish, returned=returned),
        )  # type: ignore[arg-type]
        self.run(self.bought(request))

    def trade(self, who: int, to: int, which: int) -> None:
        """An honest key endorses one of its items to another key (honest or the attacker's)
        and has the hop notarized."""
        holder = self.pick(self.honest, who)
        receiver = self.pick(self.everyone(), to)
        held = self.model.held_by(holder.public.to_text())
        if not held or receiver == holder:
            return
        item = held[which % len(held)]
        self.run(self.notarized([endorse(item.chain, holder, receiver.public, T0)]))

    def offline_scam(self, which: int, victim: int, title: str) -> None:
        """The attacker pays an honest key with a note off the record (an endorsement the
        honest key does not notarize) and records it to an accomplice first; the honest key
        pays the treasury with it and its own notes: the purchase is rejected, the proof
        convicting the attacker, never the honest key; the honest key's own notes stay its
        own, bound to the treasury by the public hops it signed (their chains are what the
        attacker copies next, copy_public_chain)."""
        owned = [(k, i) for k, i in self.attacker_items() if i.note]
        if not owned:
            return
        key, item = owned[which % len(owned)]
        honest = self.pick(self.honest, victim)
        accomplice = self.pick([k for k in self.attacker if k != key], victim)
        denomination = item.chain.certificate.denomination  # type: ignore[union-attr]
        price = single_price(self.manifest, title)
        own = self.pay(honest, price - denomination) if price > denomination else []
        if own is None:
            return
        TOTALS.attacks["offline scam"] += 1
        offline = endorse(item.chain, key, honest.public, T0)
        self.run(self.notarized([endorse(item.chain, key, accomplice.public, T0 + 3)]))
        request = buy_request(
            honest,
            self.manifest,
            title,
            [endorse(offline, honest, self.treasury_key, T0), *own],
            purchase_id=self.new_id("scammed"),
            at=int(time.time()),
        )
        answer = self.run(asked(lambda: self.treasury.buy(request)))
        if answer.outcome != "rejected":
            raise Violation(
                f"{request.purchase_id} paid with a note recorded to another key "
                f"was {answer.outcome}"
            )
        self.apply_buy(request, answer, rejectable=True)

    # -- the attacker ------------------------------------------------------------------------

    def attacker_items(self) -> list[tuple[SigningKey, Item]]:
        return [(k, i) for k in self.attacker for i in self.model.held_by(k.public.to_text())]

    def double_spend(self, which: int, to: int, ways: int) -> None:
        """The attacker signs one of its items away ``ways`` ways at one hop (to its keys and
        to honest ones) and sends them all at once: one is recorded, every other refused with
        the fraud proof convicting the attacker; at most 4 refusals logged per hop (L-22)."""
        owned = self.attacker_items()
        if not owned:
            return
        key, item = owned[which % len(owned)]
        others = [k for k in self.everyone() if k != key]
        TOTALS.attacks["double spend"] += 1
        chains = [
            endorse(item.chain, key, self.pick(others, to + n).public, T0 + n) for n in range(ways)
        ]
        self.run(self.race(chains))

    async def race(self, chains: list[Chain]) -> None:
        results = await asyncio.gather(
            *(asked(lambda c=c: self.notary.notarize([c])) for c in chains),  # type: ignore[misc]
            return_exceptions=True,
        )
        won = [c for c, r in zip(chains, results, strict=True) if isinstance(r, NotarizeAnswer)]
        lost = [r for r in results if not isinstance(r, NotarizeAnswer)]
        if len(won) != 1 or not all(isinstance(r, NotaryConflict) for r in lost):
            raise Violation(f"a double spend answered {results!r}"[:2000])
        for refusal in lost:
            assert isinstance(refusal, NotaryConflict)
            for conflict in refusal.conflicts:
                self.convicted.add(conflict.proof.verify().to_text())
        self.model.accept(won[0])
        self.touched.add(won[0].serial)

    def double_pay(self, title: str, to: int) -> None:
        """The attacker pays the treasury with notes and, at once, signs the first of them to
        another of its keys: either the purchase is delivered (or refunded) and the hop refused
        as fraud, or the hop recorded and the payment rejected, never both."""
        for key in self.attacker:
            payment = self.pay(key, single_price(self.manifest, title))
            if payment is not None:
                break
        else:
            return
        TOTALS.attacks["double pay"] += 1
        other = self.pick([k for k in self.attacker if k != key], to)
        first = self.model.items[payment[0].serial]
        if first.bound is not None:
            return
        aside = endorse(first.chain, key, other.public, T0 + 7)
        request = buy_request(
            key,
            self.manifest,
            title,
            payment,
            purchase_id=self.new_id("double"),
            at=int(time.time()),
        )
        self.run(self.pay_twice(request, aside))

    async def pay_twice(self, request: BuyRequest, aside: Chain) -> None:
        bought, hop = await asyncio.gather(
            asked(lambda: self.treasury.buy(request)),
            asked(lambda: self.notary.notarize([aside])),
            return_exceptions=True,
        )
        if isinstance(bought, BaseException):
            raise bought
        if bought.outcome == "rejected":
            if not isinstance(hop, NotarizeAnswer):
                raise Violation(f"{request.purchase_id} rejected but the other hop refused too")
            self.model.accept(aside)
            self.touched.add(aside.serial)
        elif not isinstance(hop, NotaryConflict):
            raise Violation(
                f"{request.purchase_id} {bought.outcome} and the same note's other "
                f"hop answered {hop!r}"[:2000]
            )
        else:
            for conflict in hop.conflicts:
                self.convicted.add(conflict.proof.verify().to_text())
        self.apply_buy(request, bought)

    def copy_public_chain(self, which: int, who: int, title: str, own: bool) -> None:
        """A chain from the feeds (a payment or a returned print of a ``purchase-opened``,
        of a rejected purchase three times in four when there is one: never taken, so still
        its signer's to pay with) paid or returned in the attacker's own purchase (with its
        own notes too, or alone), and sent to the notary as it is: the purchase is refused
        (L-21: a purchase takes only what its buyer signed over); what the notary records is
        a hop its holder signed."""
        pool = self.rejected if self.rejected and which % 4 else self.public
        if not pool:
            return
        chain = pool[which % len(pool)]
        # Not the chain's own signer: a key paying with its own signed chain is no attack.
        key = self.pick(
            [k for k in self.attacker if k.public.to_text() != chain.endorsements[-1].from_], who
        )
        TOTALS.attacks["copied chain"] += 1
        extra = (self.pay(key, 30) or []) if own else []
        extra = [c for c in extra if c.serial != chain.serial]
        if isinstance(chain.certificate, NoteCertificate):
            request = buy_request(
                key,
                self.manifest,
                title,
                [chain, *extra],
                purchase_id=self.new_id("copy"),
                at=int(time.time()),
            )
        else:
            payment = self.pay(key, UPGRADE_PRICES["gilt"]) or extra or [chain]
            request = buy_request(
                key,
                self.manifest,
                chain.certificate.title,
                payment,
                purchase_id=self.new_id("copy"),
                at=int(time.time()),
                upgrade=Upgrade(finish="gilt", returned=chain),
            )
        self.run(self.refused(lambda: self.treasury.buy(request), "a purchase with a copied chain"))
        self.run(self.notarize_copy(chain))

    async def notarize_copy(self, chain: Chain) -> None:
        try:
            answer = await asked(lambda: self.notary.notarize([chain]))
        except LeagueProblem as problem:
            if problem.status >= 500:
                raise
            return
        if answer.recorded:
            self.model.accept(chain)  # a hop its own holder signed: the model allows it
            self.touched.add(chain.serial)

    def plant_evidence(self, log: int, witness: int, old: int, garbage: int, own: bool) -> None:
        """A log's genuine public checkpoint (or one the attacker signs under the log's origin)
        submitted to another service's witness from a random old size with a garbage proof:
        refused or cosigned as it is, and no witness keeps anything (evidence convicts the log
        by itself or is not kept)."""
        TOTALS.attacks["planted evidence"] += 1
        self.run(
            self.planted(NAMES[log % 3], NAMES[(log + 1 + witness % 2) % 3], old, garbage, own)
        )

    async def planted(self, log: str, witness: str, old: int, garbage: int, own: bool) -> None:
        genuine = Checkpoint.from_note(
            await asked(lambda: self.clients[log].checkpoint(service=log))
        )
        checkpoint = (
            genuine
            if not own
            else sign_checkpoint(genuine.origin, genuine.size, genuine.root, self.attacker[0])
        )
        body = str(
            AddCheckpoint(
                old % (genuine.size + 1),
                tuple(bytes([garbage, i]) * 16 for i in range(garbage % 5)),
                checkpoint,
            )
        )
        async with self.session.post(
            f"{self.league.urls[witness]}/{witness}/witness/add-checkpoint", data=body
        ) as response:
            if response.status >= 500 and response.status != 503:
                raise Violation(
                    f"the {witness}'s witness answered {response.status}: {await response.text()}"
                )
            if own and response.status == 200:
                raise Violation(
                    f"the {witness}'s witness cosigned a checkpoint the attacker signed"
                )
        await self.evidence_kept()

    def forge(self, which: int, who: int, signer: bool) -> None:
        """An honest key's item endorsed by the attacker, naming the holder as the signer
        (a bad signature) or itself (a broken chain): the notary refuses it, and so does the
        treasury as payment."""
        owned = [i for k in self.honest for i in self.model.held_by(k.public.to_text())]
        if not owned:
            return
        item = owned[which % len(owned)]
        key = self.pick(self.attacker, who)
        TOTALS.attacks["forged hop"] += 1
        links = item.chain.endorsements
        prev = links[-1].hash() if links else item.chain.certificate.hash()
        forged = Endorsement.sign(
            key,
            serial=item.serial,
            hop=len(links) + 1,
            prev=hash_text(prev),
            to=key.public.to_text(),
            time=T0,
            **{"from": item.holder if signer else key.public.to_text()},
        )
        chain = Chain(certificate=item.chain.certificate, endorsements=(*links, forged))
        self.run(self.refused(lambda: self.notary.notarize([chain]), "a forged hop"))
        if item.note:
            to_treasury = Chain(
                certificate=chain.certificate,
                endorsements=(
                    *links,
                    forged.model_copy(update={"to": self.manifest.treasury}),
                ),
            )
            request = buy_request(
                key,
                self.manifest,
                "Tally",
                [to_treasury],
                purchase_id=self.new_id("forged"),
                at=int(time.time()),
            )
            self.run(self.refused(lambda: self.treasury.buy(request), "a forged payment"))

    def replay(self, which: int, copies: int) -> None:
        """Any earlier request sent again, ``copies`` times at once: the same answer, nothing
        done twice (a notarization of a chain whose issue has since come back to its issuer
        is refused as history instead, 409 stale-issue)."""
        if not self.sent:
            return
        sent = self.sent[which % len(self.sent)]
        TOTALS.attacks["replay"] += 1
        self.run(self.replayed(sent, copies))

    async def replayed(self, sent: Sent, copies: int) -> None:
        async def again() -> Any:
            request = sent.request
            if isinstance(request, ClaimRequest):
                return await asked(lambda: self.treasury.claim(request))
            if isinstance(request, StampRequest):
                return await asked(lambda: self.mint.stamp(request))
            if isinstance(request, BuyRequest):
                return await asked(lambda: self.treasury.buy(request))
            try:
                return await asked(lambda: self.notary.notarize(request))
            except LeagueProblem as problem:
                # A chain of an issue since back at its issuer is history: refused, 409
                # stale-issue (docs/api.md, L-17), not receipted again; nothing is recorded.
                history = any(
                    (item := self.model.items[c.serial]).chain.issue > c.issue or item.returned
                    for c in request
                )
                if problem.slug != "stale-issue" or not history:
                    raise
                return problem

        for answer in await asyncio.gather(*(again() for _ in range(copies))):
            if isinstance(answer, LeagueProblem):
                TOTALS.outcomes["notarization replayed: stale-issue"] += 1
            elif isinstance(answer, NotarizeAnswer):
                if answer.recorded != 0:
                    raise Violation("a notarization replayed recorded a hop again")
            elif not same(answer, sent.answer):
                raise Violation(f"a {sent.kind} replayed answered differently")

    def claims_at_once(self, who: list[int], marks: int, copies: int) -> None:
        """Several keys' claims at once, each sent ``copies`` times: every one issued, once."""
        requests = [self.claim_of(self.pick(self.everyone(), w), marks) for w in who]
        TOTALS.attacks["duplicate claims"] += 1
        self.run(self.claims_together(requests, copies))

    async def claims_together(self, requests: list[ClaimRequest], copies: int) -> None:
        sends = [r for r in requests for _ in range(copies)]
        answers = await asyncio.gather(
            *(self.treasury.claim(r) for r in sends), return_exceptions=True
        )
        for answer in answers:
            if isinstance(answer, LeagueProblem):
                raise Violation(
                    f"a claim sent with others at once was refused: "
                    f"{answer.status} {answer.slug}: {answer}"
                )
            if isinstance(answer, BaseException):
                raise answer
        firsts: dict[str, ClaimAnswer] = {}
        for request, answer in zip(sends, answers, strict=True):
            assert isinstance(answer, ClaimAnswer)
            kept = firsts.setdefault(request.request_id, answer)
            if not same(kept, answer):
                raise Violation(f"copies of claim {request.request_id} answered differently")
        for request in requests:
            self.apply_claim(request, firsts[request.request_id])

    # -- the operator's accidents ------------------------------------------------------------

    def kill(self, service: str, work: str | None, yields: int) -> None:
        """``service`` killed with an honest request in flight (a purchase, an upgrade, a
        claim or a trade; after a pause of 0.2 * (``yields``/40)^3 s), then started again on its
        database: the request, sent again as it was signed, is answered once."""
        TOTALS.kills += 1
        self.run(self.killed(service, work, yields))

    async def killed(self, service: str, work: str | None, yields: int) -> None:
        key = self.honest[TOTALS.kills % len(self.honest)]
        call: Callable[[], Awaitable[Any]] | None = None
        finish: Callable[[], Awaitable[Any]] | None = None
        if (
            work == "upgrade"
            and (item := self.standard_print(key)) is not None
            and (payment := self.pay(key, UPGRADE_PRICES["gilt"])) is not None
        ):
            request = buy_request(
                key,
                self.manifest,
                item.chain.certificate.title,  # type: ignore[union-attr]
                payment,
                purchase_id=self.new_id("killed"),
                at=int(time.time()),
                upgrade=Upgrade(
                    finish="gilt", returned=endorse(item.chain, key, self.mint_key, T0)
                ),
            )
            call = lambda: self.treasury.buy(request)  # noqa: E731
            finish = lambda: self.bought(request)  # noqa: E731
        elif work in ("buy", "upgrade") and (payment := self.pay(key, 30)) is not None:
            request = buy_request(
                key,
                self.manifest,
                "Tally",
                payment,
                purchase_id=self.new_id("killed"),
                at=int(time.time()),
            )
            call = lambda: self.treasury.buy(request)  # noqa: E731
            finish = lambda: self.bought(request)  # noqa: E731
        elif work == "trade" and (held := self.model.held_by(key.public.to_text())):
            chain = endorse(
                held[0].chain,
                key,
                self.honest[0].public if key != self.honest[0] else self.honest[1].public,
                T0,
            )
            call = lambda: self.notary.notarize([chain])  # noqa: E731
            finish = lambda: self.notarized([chain])  # noqa: E731
        elif work is not None:
            claim = self.claim_of(key, 50)
            call = lambda: self.treasury.claim(claim)  # noqa: E731
            finish = lambda: self.claimed(claim)  # noqa: E731
        flight = asyncio.ensure_future(call()) if call is not None else None
        # Not a timing assertion: how far the request got when the service died varies with
        # the pause (0 to 200 ms, mostly short: a purchase's saga takes 20 to 200 ms here), and
        # any is fine.
        await asyncio.sleep(0.2 * (yields / 40) ** 3)
        await self.league.kill(service)
        if flight is not None:
            try:
                await flight
            except (LeagueUnreachable, LeagueProblem):
                TOTALS.cut += 1  # the request got no answer: sent again below
        await self.league.start(service)
        if finish is not None:
            await finish()

    def restart(self) -> None:
        """The whole league stopped at once and started again."""
        TOTALS.restarts += 1
        self.run(self.league.kill_all())
        self.run(self.league.start_all())

    # -- the schedule ----------------------------------------------------------------------

    @rule(seed=st.integers(0, 2**64 - 1))
    def step(self, seed: int) -> None:
        """One action, drawn by weight with its arguments from ``seed`` and the step's number
        (so that even hypothesis's simplest example, every seed 0, plays a varied game), and
        in the long form the league's number."""
        rng = random.Random(f"{seed}/{self.steps}/{self.salt}")
        name = rng.choices(list(ACTIONS), weights=[w for w, _ in ACTIONS.values()])[0]
        arguments = ACTIONS[name][1](rng)
        shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        self.trace.append(f"{self.steps}: {name}({shown})")
        getattr(self, name)(**arguments)

    # -- the invariants ----------------------------------------------------------------------

    @invariant()
    def check(self) -> None:
        self.steps += 1
        TOTALS.steps += 1
        TOTALS.checks += 1
        self.run(self._check())
        if self.steps % DEEP_EVERY == 0:
            self.run(self._deep())
        if self.steps % AUDIT_EVERY == 0:
            self.run(self._audit())
            if long_form():
                print(
                    f"economy machine: {TOTALS.steps} steps, {TOTALS.audits} audits, "
                    f"{TOTALS.kills} kills, {len(self.model.items)} items in this league",
                    flush=True,
                )

    async def _check(self) -> None:
        supply = await asked(lambda: self._supply())
        if (
            supply.marks.supply != SUPPLY
            or supply.marks.reserve + supply.marks.circulation != SUPPLY
        ):
            raise Violation(f"the supply is {supply.marks}, not M{SUPPLY}")
        out = self.model.circulation()
        served = {d.denomination: d.circulation for d in supply.denominations if d.circulation}
        if served != dict(out):
            raise Violation(f"the treasury's circulation {served} is not the model's {dict(out)}")
        self.model.compare_rows(await self._holders())
        self.model.verify_chains(sorted(self.touched))
        self.touched.clear()
        await self._feeds()
        honest = self.convicted & self.honest_keys
        if honest:
            raise Violation(f"honest keys convicted: {sorted(k[:16] for k in honest)}")

    async def _supply(self) -> TreasurySupply:
        _, _, text = await self.treasury._call("GET", "/treasury")
        return TreasurySupply.model_validate_json(text)

    async def _holders(self) -> list[HolderRow]:
        rows: list[HolderRow] = []
        after: str | None = ""
        while after is not None:
            params: dict[str, Any] = {"limit": 1000, **({"after": after} if after else {})}
            page = await asked(
                lambda p=params: self.notary._json(  # type: ignore[misc]
                    Holders, "GET", "/notary/holders", params=p
                )
            )
            rows += page.holders
            after = page.next_after
        return rows

    async def _feeds(self) -> None:
        """New events of the notary's and the treasury's feeds, each verified: every fraud
        proof's convicted key kept, every public chain of a purchase kept for the attacker."""
        keys = {"notary": PublicKey.from_text(self.manifest.notary), "treasury": self.treasury_key}
        kinds = {"notary": NOTARY_EVENTS, "treasury": TREASURY_EVENTS}
        for service in ("notary", "treasury"):
            league = self.clients[service]
            while True:
                after = self.cursors[service]
                feed = await asked(
                    lambda c=league, a=after, s=service: c.events(  # type: ignore[misc]
                        a, 100, service=s
                    )
                )
                for served in feed.events:
                    body = parse_event(served.verified(keys[service]), kinds[service])
                    self.cursors[service] = served.seq
                    if isinstance(body, ConflictRefused):
                        self.convicted.add(body.proof.verify().to_text())
                        hop = (body.proof.first.serial, body.issue, body.proof.first.hop)
                        self.conflicts[hop] += 1
                        if self.conflicts[hop] > MAX_CONFLICTS_PER_HOP:
                            raise Violation(
                                f"{self.conflicts[hop]} conflicts logged at {hop} "
                                f"(L-22: at most {MAX_CONFLICTS_PER_HOP})"
                            )
                    elif isinstance(body, PaymentRejected):
                        self.convicted.update(p.verify().to_text() for p in body.proofs)
                        self.rejected.extend(self.opened.get(body.purchase_id, []))
                    elif isinstance(body, PurchaseOpened):
                        chains = list(body.request.payment)
                        if body.request.upgrade is not None:
                            chains.append(body.request.upgrade.returned)
                        self.public.extend(chains)
                        self.opened[body.purchase_id] = chains
                if len(feed.events) < 100:
                    break

    async def _deep(self) -> None:
        """Every item's provenance names the model's holder, every chain verifies, the
        treasury's log folds to its supply and every projection rebuilds to its tables."""
        TOTALS.deep += 1
        self.model.verify_chains()
        for serial, item in self.model.items.items():
            for _ in range(600):  # the notary may not have followed the latest issue yet (30 s)
                life = await asked(lambda s=serial: self.notary.provenance(s))  # type: ignore[misc]
                if life.holder == item.holder:
                    break
                await asyncio.sleep(0.05)
            else:
                raise Violation(
                    f"{serial}: the notary's provenance names "
                    f"{(life.holder or '')[:16]}, the model {item.holder[:16]}"
                )
        await self._treasury_log()
        await self.evidence_kept()
        for name, projection in (
            ("mint", MINT_PROJECTION),
            ("treasury", TREASURY_PROJECTION),
            ("notary", NOTARY_PROJECTION),
        ):
            store = self.league.servers[name].app[LOGS[name]]
            rebuilt = await rebuild(store, projection, commit=False)  # type: ignore[misc]
            if not rebuilt.agrees:
                raise Violation(f"the {name}'s projection is not what its log folds to")

    async def _treasury_log(self) -> None:
        """The treasury's log: no note issued while out, every return of the issue out, and
        what is out is the model's circulation."""
        store = self.league.servers["treasury"].app[TREASURY_LOG]
        out: Counter[int] = Counter()
        holding: dict[str, int] = {}
        after = -1
        while True:
            events = await store.read(after, 1000)
            for event in events:
                body = parse_event(event, TREASURY_EVENTS)
                if isinstance(body, NoteIssued):
                    serial = body.certificate.serial
                    if serial in holding:
                        raise Violation(f"the treasury's log issues {serial} while it is out")
                    holding[serial] = body.certificate.issue
                    out[body.certificate.denomination] += 1
                elif isinstance(body, NoteReturned):
                    if holding.pop(body.serial, None) != body.issue:
                        raise Violation(f"the treasury's log returns {body.serial} not out")
                    out[int(body.serial.split("-")[1][1:])] -= 1
                after = event.seq
            if len(events) < 1000:
                break
        if +out != self.model.circulation():
            raise Violation("the treasury's log's circulation is not the model's")

    async def _audit(self) -> None:
        """``league audit`` of the three services (its auditor, in this process), once each
        log's checkpoint covers it."""
        TOTALS.audits += 1
        for name in NAMES:
            size = (await self.league.servers[name].app[LOGS[name]].head()).size
            for _ in range(1500):  # a guard (30 s), not a timing assertion
                checkpoint = await asked(
                    lambda n=name: self.clients[n].signed_checkpoint(  # type: ignore[misc]
                        service=n
                    )
                )
                if checkpoint.size >= size:
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError(f"no {name} checkpoint covering {size} events was signed")
        outcome = await audit_url(
            self.league.urls["mint"], self.audit_dir, workers=0, services=self.league.urls
        )
        if outcome.report.treasury is None or outcome.report.compared is None:
            raise Violation("the audit read no treasury log or no holders")


def _n(rng: random.Random) -> int:
    return rng.randrange(10**6)


#: The actions, by weight, and how each draws its arguments.
ACTIONS: dict[str, tuple[float, Callable[[random.Random], dict[str, Any]]]] = {
    "claim": (2, lambda r: {"who": _n(r), "marks": r.choice(CLAIMS)}),
    "stamp": (
        2,
        lambda r: {
            "who": _n(r),
            "title": r.choice(TITLES),
            "finish": r.choice(["standard"] * 3 + ["gilt"]),
            "count": r.randint(1, 3),
        },
    ),
    "buy": (3, lambda r: {"who": _n(r), "title": r.choice(TITLES), "copies": r.randint(1, 3)}),
    "upgrade": (2, lambda r: {"who": _n(r), "finish": r.choice(["gilt", "gilt", "holofoil"])}),
    "trade": (3, lambda r: {"who": _n(r), "to": _n(r), "which": _n(r)}),
    "double_spend": (2, lambda r: {"which": _n(r), "to": _n(r), "ways": r.choice([2, 2, 3, 7])}),
    "double_pay": (2, lambda r: {"title": r.choice(TITLES), "to": _n(r)}),
    "copy_public_chain": (
        2,
        lambda r: {
            "which": _n(r),
            "who": _n(r),
            "title": r.choice(TITLES),
            "own": r.random() < 0.5,
        },
    ),
    "offline_scam": (1.5, lambda r: {"which": _n(r), "victim": _n(r), "title": r.choice(TITLES)}),
    "plant_evidence": (
        1,
        lambda r: {
            "log": _n(r),
            "witness": _n(r),
            "old": _n(r),
            "garbage": r.randrange(256),
            "own": r.random() < 0.3,
        },
    ),
    "forge": (1, lambda r: {"which": _n(r), "who": _n(r), "signer": r.random() < 0.5}),
    "replay": (2, lambda r: {"which": _n(r), "copies": r.randint(1, 3)}),
    "claims_at_once": (
        1,
        lambda r: {
            "who": [_n(r) for _ in range(r.randint(2, 4))],
            "marks": r.choice(CLAIMS),
            "copies": r.randint(2, 3),
        },
    ),
    "kill": (
        2.5,
        lambda r: {
            "service": r.choice(NAMES),
            "work": r.choice(["buy", "upgrade", "claim", "trade", None]),
            "yields": r.randint(0, 40),
        },
    ),
    "restart": (0.5, lambda r: {}),
}


def machine_settings(steps: int, examples: int) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        # No shrinking: a league's timing is not replayed exactly, so a shrunk example is
        # not the failure's; the failed league's steps are printed instead (teardown).
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )


def test_the_economy_holds_under_attack_kills_and_restarts(server_url: str) -> None:
    """# V.5-V.8, L-17, L-20, L-21: honest players, an attacker replaying, double spending,
    copying public chains, forging and racing duplicates, and services killed between steps
    and restarted: after every step the supply is exactly M1,500,000 and its circulation the
    notes out, every item has exactly one holder (the notary's, the model's), every holding
    is the end of a chain of its holders' own signatures, no honest key is convicted, and
    league audit passes (every few steps and at the end)."""
    EconomyMachine.server_url = server_url
    started = time.monotonic()
    if long_form():
        print(f"economy machine: RELIABILITY_SEED={LONG_SEED}", flush=True)
        while TOTALS.steps < LONG_STEPS:
            run_state_machine_as_test(
                EconomyMachine, settings=machine_settings(LONG_EXAMPLE_STEPS, 2)
            )
    else:
        run_state_machine_as_test(
            EconomyMachine, settings=machine_settings(SHORT_STEPS, SHORT_EXAMPLES)
        )
    assert TOTALS.steps > 0
    assert TOTALS.audits > 0
    record(
        "economy_machine",
        {
            "examples (leagues)": TOTALS.examples,
            "steps": TOTALS.steps,
            "invariant checks": TOTALS.checks,
            "deep checks": TOTALS.deep,
            "kills": TOTALS.kills,
            "requests cut by a kill": TOTALS.cut,
            "league restarts": TOTALS.restarts,
            "audits": TOTALS.audits,
            "attacks": sum(TOTALS.attacks.values()),
            "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(TOTALS.outcomes.items())),
            "attacks by kind": ", ".join(f"{k} {v}" for k, v in sorted(TOTALS.attacks.items())),
            "violations": 0,
            "seconds": round(time.monotonic() - started),
            **({"seed": LONG_SEED} if long_form() else {}),
        },
    )
