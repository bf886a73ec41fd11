"""The economy machine's invariants (tests/reliability/test_economy_machine.py): after every
step the supply, the notary's holders row by row, the feeds, the conflicts' bound; now and
then the deep check (provenance, chains, the treasury's fold, every projection rebuilt) and
``league audit``'s auditor. A mixin of the machine."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from auditor import audit_url
from ledger.api.notary import HolderRow, Holders
from ledger.api.treasury import (
    TreasurySupply,
)
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
from ledger.keys import PublicKey
from services.kernel.projections import rebuild
from services.mint.projection import PROJECTION as MINT_PROJECTION
from services.notary.projection import PROJECTION as NOTARY_PROJECTION
from services.treasury.app import TREASURY_LOG
from services.treasury.projection import PROJECTION as TREASURY_PROJECTION
from tests.reliability.economy import Violation
from tests.reliability.league import NAMES, asked
from tests.reliability.machine import LOGS, MAX_CONFLICTS_PER_HOP, SUPPLY, TOTALS


class Invariants:
    """What must hold of the league against the model."""

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
