"""What an audit verified: the report :meth:`ledger.audit.Auditor.report` returns, and its text."""

from __future__ import annotations

from dataclasses import dataclass, field

from ledger.audit.reward_facts import MisprintAwarded, PaidReward

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


@dataclass(frozen=True, slots=True)
class Cosigned:
    """A witness's valid cosignature on a served checkpoint."""

    witness: str
    size: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ServiceReport:
    """What was verified of one service's log."""

    service: str
    events: int
    root: bytes
    checkpoints: int
    cosigned: tuple[Cosigned, ...] = ()


@dataclass(frozen=True, slots=True)
class TreasuryFigures:
    """The treasury's figures derived from its log."""

    issues: int
    returns: int
    #: Per denomination (largest first): (notes in the set, in the reserve, out).
    denominations: tuple[tuple[int, int, int, int], ...]
    claimed: int
    #: Purchases closed, by outcome, and those still in their saga.
    purchases: dict[str, int]
    open_purchases: int
    note_hops: int
    #: Note returns naming a notary hop past the notary's audited log (not matched).
    unmatched_returns: int

    def lines(self) -> list[str]:
        supply = sum(d * (reserve + out) for d, _, reserve, out in self.denominations)
        reserve = "; ".join(
            f"M{d}: {r} in reserve, {o} out of {n}" for d, n, r, o in self.denominations
        )
        closed = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.purchases.items()))
        out = [
            f"treasury: {self.issues} note issues ({self.claimed} marks claimed at the faucet, "
            f"within its daily cap), {self.returns} returns, every issue number dense and no "
            f"note issued while out; supply {supply:,} marks after every event",
            f"treasury reserve: {reserve}",
            f"treasury purchases: {closed or 'none closed'}, paid and changed or refunded "
            f"exactly; {self.open_purchases} still in their saga; {self.note_hops} hops of "
            f"notes on valid chains",
        ]
        if self.unmatched_returns:
            out.append(
                f"treasury: {self.unmatched_returns} returns name notary hops past its "
                f"audited log (not matched this run)"
            )
        return out


@dataclass(frozen=True, slots=True)
class AuditReport:
    """A passed audit: per service what was verified, and the economy's counts."""

    services: tuple[ServiceReport, ...]
    prints: int
    hops: int
    conflicts: int
    holders: int
    #: Serials whose holder in the notary's projection was compared (None: not served).
    compared: int | None = None
    #: Ed25519 signatures verified (events, certificates, endorsements, checkpoints, manifest).
    verifications: int = 0
    #: Witness evidence pages read, per witness (None: not served).
    evidence: dict[str, int] | None = None
    #: The treasury's figures (None: it serves no log).
    treasury: TreasuryFigures | None = None
    #: Prints returned to the mint for finish upgrades, and issued again on a refusal (L-20).
    returned_prints: int = 0
    reissued_prints: int = 0
    #: Prints returned whose notary hop was read and matched (the others name hops past the
    #: notary's audited log: not matched this run, never reported notarized).
    notarized_prints: int = 0
    #: Witnessed tables' rewards the treasury paid, by table (``ledger.audit.rewards``): the
    #: tables' audit pairs them with the tables log's records.
    rewards: dict[str, PaidReward] = field(default_factory=dict)
    #: The Misprint's award in the mint's log, if it is awarded: the tables' audit checks that
    #: its table is the tables log's first settling Balance at Chair VI or above (L-41).
    misprint: MisprintAwarded | None = None

    def lines(self) -> list[str]:
        """The report a person reads, one line per service, then the economy."""
        out = []
        for s in self.services:
            line = (
                f"{s.service}: {s.events} events verified (signatures, leaf hashes, Merkle "
                f"root), {s.checkpoints} checkpoints matched"
            )
            witnessed = sorted({(c.witness, c.size) for c in s.cosigned})
            if witnessed:
                line += "; cosigned by " + ", ".join(f"{w} at size {n}" for w, n in witnessed)
            else:
                line += "; no witness cosignature on its served checkpoint"
            out.append(line)
        out.append(
            f"economy: {self.prints} prints, every serial unique and inside its run; "
            f"{self.hops} hops on valid chains, {self.conflicts} conflicts with valid fraud "
            f"proofs; {self.holders} holders"
        )
        if self.returned_prints:
            out.append(
                f"upgrades: {self.returned_prints} prints returned to the mint, each "
                f"once per issue for a purchase of that upgrade, "
                f"{self.notarized_prints} on their notarized hop; "
                f"{self.reissued_prints} issued again to a refused upgrade's buyer"
            )
            unmatched = self.returned_prints - self.notarized_prints
            if unmatched:
                out.append(
                    f"mint: {unmatched} print returns name notary hops past its audited "
                    f"log (not matched this run)"
                )
        if self.compared is None:
            out.append("holders: the notary serves no holders pages; not compared")
        else:
            out.append(
                f"holders: all {self.compared} in the notary's projection equal to "
                f"those derived from the events"
            )
        if self.treasury is None:
            out.append("treasury: not served; not audited")
        else:
            out.extend(self.treasury.lines())
        if self.evidence is not None:
            out.append("evidence: none kept by " + ", ".join(sorted(self.evidence)))
        return out


@dataclass(frozen=True, slots=True)
class MintCensus:
    """What the mint's audited log stamped: per run (title, finish) the prints drawn from it
    (their numbers dense from the run's first), the prints stamped (misprints too) and the keys
    the mint issued them to (each print's latest issue)."""

    stamped: dict[tuple[str, str], int]
    prints: int
    owners: int
