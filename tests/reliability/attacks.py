"""The economy machine's attacker (tests/reliability/test_economy_machine.py): off-the-record
payments, double spends and double payments, public chains copied, evidence planted, hops
forged, requests replayed, claims sent together. A mixin of the machine: it uses the
machine's league, model and clients."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from apiclient.league import (
    LeagueProblem,
    NotaryConflict,
)
from ledger.api.notary import NotarizeAnswer
from ledger.api.treasury import (
    UPGRADE_PRICES,
    BuyRequest,
    ClaimAnswer,
    ClaimRequest,
    Upgrade,
    buy_request,
    single_price,
)
from ledger.certificates import NoteCertificate
from ledger.checkpoint import AddCheckpoint, Checkpoint, sign_checkpoint
from ledger.endorsements import Chain, Endorsement, endorse
from ledger.keys import SigningKey
from ledger.requests import StampRequest
from ledger.wire import hash_text
from tests.reliability.economy import Item, Violation
from tests.reliability.league import NAMES, asked
from tests.reliability.machine import T0, TOTALS, Sent, same


class Attacks:
    """The attacks, each a step the machine draws; every refusal checked against the model."""

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
