"""What a closed witnessed table puts in the wallet (``cz play --league``): its reward, paid
for real by the league's treasury (notes) and mint (prints) as docs/economy.md says, each
certificate checked and taken in once; the Misprint when the table won it (IV.6, L-24); and
its record, which ``cz table replay`` steps through. A reward still pending at the close is
taken in by a later ``cz play --league`` (:func:`collect`)."""

from __future__ import annotations

import json
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from apiclient.league import LeagueClient, check_certificate
from clients.cz_seats import TABLES_DIR
from clients.cz_session import Opened
from clients.witnessed import Fair, KeptTable, kept_tables
from game.window import record_json
from ledger.api.mint import Stamped
from ledger.api.rewards import RewardOutcome
from ledger.api.tables import MisprintOutcome
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain
from ledger.errors import VerificationError
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT_SERIAL
from ledger.words import plural

T = TypeVar("T")
#: What the player is told to type to come back to a table.
RESUME = "cz play --league --resume {table}"


class Run(Protocol):
    """How a call to the league is made: run on the one event loop, until it is answered."""

    def __call__(self, coroutine: Coroutine[Any, Any, T], /) -> T: ...


def misprint(opened: Opened, manifest: LeagueManifest, outcome: MisprintOutcome | None) -> str:
    """The Misprint's award, taken into the wallet when it is this player's (IV.6, L-24)."""
    if outcome is None:
        return ""
    if outcome.status != "awarded" or outcome.certificate is None:
        return f"the Misprint: {outcome.status} ({outcome.detail})"
    certificate = outcome.certificate
    wallet = opened.wallet
    certificate.verify(PublicKey.from_text(manifest.mint))
    if certificate.serial != MISPRINT_SERIAL or certificate.issued_to != wallet.public.to_text():
        raise VerificationError("the Misprint's certificate is not the one awarded to you")
    if certificate.serial not in wallet.prints:
        wallet.admit([Chain(certificate=certificate, endorsements=())])
        opened.save()
    return (
        f"the Misprint {MISPRINT_SERIAL} is yours: the mint's certificate ✓ is in your wallet "
        f"(cz provenance {MISPRINT_SERIAL})"
    )


@dataclass(frozen=True)
class Landed:
    """What a table's reward put in the wallet (or why nothing)."""

    status: str
    notes: list[str] = field(default_factory=list)
    prints: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    marks: int = 0
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "marks": self.marks,
            "notes": self.notes,
            "prints": self.prints,
            "refused": self.refused,
            "detail": self.detail,
        }

    def line(self, table: str) -> str:
        if self.status == "nothing":
            return f"reward: nothing — {self.detail}"
        if self.status == "pending":
            return (
                "reward: pending at the league (its treasury has not paid yet); the next cz play "
                f"--league takes it into your wallet (or {RESUME.format(table=table)})"
            )
        paid = (
            [f"M{self.marks} in {plural(len(self.notes), 'note')} (cz notes lists them)"]
            if self.notes
            else []
        )
        paid += self.prints
        lines = "reward, in your wallet now ✓: " + (", ".join(paid) or "nothing")
        if self.refused:
            lines += "; not stamped (the run is exhausted): " + ", ".join(self.refused)
        return lines


def reward(
    opened: Opened,
    manifest: LeagueManifest,
    outcome: RewardOutcome | None,
    verdict: str,
    *,
    duel: bool = False,
) -> Landed:
    """A closed table's reward taken into the wallet (Book IV, docs/economy.md): every note
    treasury-signed and issued to this key, every print mint-signed, in its run and issued to
    it; what the wallet holds already is not taken twice."""
    if outcome is None or outcome.status == "nothing":
        if duel:
            detail = "a duel pays nothing outside its own log, docs/rulings.md L-33"
        elif outcome is not None and outcome.detail:
            detail = outcome.detail
        elif verdict == "loss":
            detail = "a loss pays nothing"
        else:
            detail = (
                "nothing is due: a venue your witnessed campaign has not opened yet pays "
                "nothing, as offline, docs/rulings.md L-25"
            )
        return Landed("nothing", detail=detail)
    if outcome.status == "pending":
        return Landed("pending", detail=outcome.detail)
    wallet = opened.wallet
    me = wallet.public
    notes = list(outcome.notes)
    for note in notes:
        note.verify(PublicKey.from_text(manifest.treasury))
        manifest.check_certificate(note)
        if PublicKey.from_text(note.issued_to) != me:
            raise VerificationError(f"{note.serial}, a reward note, is issued to another key")
    certificates = []
    refused = []
    for answer in outcome.prints:
        item = answer.item
        if isinstance(item, Stamped):
            check_certificate(item.certificate, manifest, me)
            certificates.append(item.certificate)
        else:
            refused.append(f"{item.title} ({item.finish}): {item.reason}")
    held = set(wallet.prints) | set(wallet.notes)
    every: list[PrintCertificate | NoteCertificate] = [*notes, *certificates]
    new = [c for c in every if c.serial not in held]
    if new:
        wallet.admit(Chain(certificate=c, endorsements=()) for c in new)
        opened.save()
    return Landed(
        "paid",
        notes=[n.serial for n in notes],
        prints=[f"{c.title} ({c.finish}) {c.serial}" for c in certificates],
        refused=refused,
        marks=sum(n.denomination for n in notes),
    )


def record(opened: Opened, kept: KeptTable, fair: Fair) -> Path:
    """The table as a ``cz-table-record/1`` beside the offline ones: its deal (seeded, or at
    a Registrar's the explicit portfolio deal) and every action."""
    directory = opened.home.directory / TABLES_DIR
    directory.mkdir(mode=0o700, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    path = directory / f"{stamp}-{kept.venue}-league-{kept.table}.json"
    record = record_json(fair.table.table.deal_record(), list(fair.table.actions))
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def collect(run: Run, client: LeagueClient, manifest: LeagueManifest, opened: Opened) -> list[str]:
    """The rewards of closed tables that were pending at their close, taken into the wallet
    now if the league has paid them: a line for each."""
    lines = []
    for kept in kept_tables(opened.home.directory, manifest.league):
        if not kept.closed or kept.rewarded or kept.checked != "fair":
            continue
        view = run(client.table(kept.table))
        outcome = view.closing.reward if view.closing is not None else None
        verdict = view.closing.verdict if view.closing is not None else ""
        landed = reward(opened, manifest, outcome, verdict)
        if landed.status != "pending":
            kept.rewarded = True
            kept.save()
            lines.append(f"table {kept.table} at {kept.venue}: {landed.line(kept.table)}")
    return lines
