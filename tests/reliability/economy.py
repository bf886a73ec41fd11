"""The model the economy machine checks the league against (tests/reliability/
test_economy_machine.py): every note and print the league ever issued, the chain its holder
has of it (certificate and every endorsement of the current issue, as a wallet keeps it),
and what the notary's holders projection must say of it.

The model moves an item only along a chain whose every hop is signed by the holder before
it (verified offline here, :meth:`Model.accept`), or by an issuer's signed answer (a claim, a
stamp, a purchase's change, refund or print); anything else the league does is a violation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ledger.api.notary import HolderRow
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain, verify_league_chain
from ledger.manifest import LeagueManifest


@dataclass
class Item:
    """One note or print as the model knows it."""

    chain: Chain
    #: Back at its issuer: a note paid to the treasury (in the reserve), a print returned to
    #: the mint for an upgrade. Its holder is then the issuer's key.
    returned: bool = False
    #: The notary's view: (issue, hops, holder) of the latest recorded hop, None before any.
    recorded: tuple[int, int, str] | None = None
    #: A note its holder endorsed to the treasury in a purchase that was rejected: that hop
    #: is signed and public (``purchase-opened``), so the wallet spends the note only by
    #: paying it again with that very chain (signing another hop would be fraud, V.7).
    bound: Chain | None = None

    @property
    def serial(self) -> str:
        return self.chain.serial

    @property
    def holder(self) -> str:
        links = self.chain.endorsements
        return links[-1].to if links else self.chain.certificate.issued_to

    @property
    def note(self) -> bool:
        return isinstance(self.chain.certificate, NoteCertificate)


class Violation(AssertionError):
    """The league did something the model does not allow."""


class Model:
    """Every item, by serial."""

    def __init__(self, manifest: LeagueManifest) -> None:
        self.manifest = manifest
        self.items: dict[str, Item] = {}

    # -- what issuers issue ----------------------------------------------------------------

    def issued(self, certificate: NoteCertificate | PrintCertificate) -> None:
        """An issuer's signed certificate: a new item, or the next issue of one back at its
        issuer. An issue of an item someone holds is a double issue."""
        known = self.items.get(certificate.serial)
        if known is not None:
            if known.chain.certificate == certificate:
                return  # the same issue answered again (a replay)
            if not known.returned or certificate.issue != known.chain.issue + 1:
                raise Violation(
                    f"{certificate.serial} issue {certificate.issue} issued to "
                    f"{certificate.issued_to[:16]} while the model has issue "
                    f"{known.chain.issue} held by {known.holder[:16]} "
                    f"({'back at its issuer' if known.returned else 'out'})"
                )
            known.chain = Chain(certificate=certificate, endorsements=())
            known.returned = False
            known.bound = None
            return
        if certificate.issue != 1:
            raise Violation(f"{certificate.serial} first seen at issue {certificate.issue}")
        self.items[certificate.serial] = Item(Chain(certificate=certificate, endorsements=()))

    # -- what holders sign -------------------------------------------------------------------

    def accept(self, chain: Chain) -> None:
        """The notary recorded ``chain``: it must extend the model's chain of the item (the
        current issue, every earlier hop the same), each hop signed by the holder before it."""
        item = self.items.get(chain.serial)
        if item is None:
            raise Violation(f"the notary recorded a hop of {chain.serial}, never issued")
        mine = item.chain
        if chain.certificate != mine.certificate or (
            chain.endorsements[: len(mine.endorsements)] != mine.endorsements
        ):
            if len(chain.endorsements) <= len(mine.endorsements) and (
                chain.certificate == mine.certificate
                and mine.endorsements[: len(chain.endorsements)] == chain.endorsements
            ):
                return  # an earlier prefix, already recorded
            raise Violation(
                f"the notary recorded a chain of {chain.serial} (issue {chain.issue}, "
                f"{len(chain.endorsements)} hops) that does not extend the holder's "
                f"(issue {mine.issue}, {len(mine.endorsements)} hops)"
            )
        if item.returned and len(chain.endorsements) > len(mine.endorsements):
            raise Violation(f"the notary recorded a hop of {chain.serial} after its return")
        holder = verify_league_chain(chain, self.manifest)
        item.chain = chain
        if chain.endorsements:
            item.recorded = (chain.issue, len(chain.endorsements), holder.to_text())

    def returned(self, serial: str) -> None:
        """The item is back at its issuer (paid, or returned for an upgrade)."""
        item = self.items[serial]
        issuer = self.manifest.treasury if item.note else self.manifest.mint
        if item.holder != issuer:
            raise Violation(f"{serial} taken back while {item.holder[:16]} holds it")
        item.returned = True
        item.bound = None

    # -- what the model expects ----------------------------------------------------------------

    def held_by(self, key: str) -> list[Item]:
        """What ``key`` holds and may sign to anyone (not returned, not bound)."""
        return [
            i for i in self.items.values() if i.holder == key and not i.returned and i.bound is None
        ]

    def bound_to_treasury(self, key: str) -> list[Item]:
        """Notes ``key`` signed to the treasury in a rejected purchase, not yet taken."""
        return [
            i
            for i in self.items.values()
            if i.bound is not None and not i.returned and i.bound.endorsements[-1].from_ == key
        ]

    def circulation(self) -> Counter[int]:
        """Notes out per denomination: issued and not back in the reserve."""
        out: Counter[int] = Counter()
        for item in self.items.values():
            certificate = item.chain.certificate
            if isinstance(certificate, NoteCertificate) and not item.returned:
                out[certificate.denomination] += 1
        return out

    def rows(self) -> dict[str, tuple[int, int, str]]:
        """What the notary's holders projection must list."""
        return {s: i.recorded for s, i in self.items.items() if i.recorded is not None}

    def compare_rows(self, rows: list[HolderRow]) -> None:
        """The notary's holders, row for row, against the model."""
        served = {r.serial: (r.issue, r.hops, r.holder) for r in rows}
        expected = self.rows()
        if served != expected:
            wrong = sorted(
                (s, expected.get(s), served.get(s))
                for s in expected.keys() | served.keys()
                if expected.get(s) != served.get(s)
            )
            raise Violation(
                "the notary's holders differ from the model (serial, model, notary): "
                + "; ".join(f"{s} {m} {n}" for s, m, n in wrong[:5])
            )

    def verify_chains(self, serials: list[str] | None = None) -> int:
        """Every item's chain verified offline to its holder (each hop signed by the holder
        before it): no key holds anything it did not receive by such a chain."""
        checked = 0
        for serial in serials if serials is not None else list(self.items):
            item = self.items[serial]
            holder = verify_league_chain(item.chain, self.manifest).to_text()
            if holder != item.holder:
                raise Violation(f"{serial}: the chain ends at {holder[:16]}")
            checked += 1
        return checked
