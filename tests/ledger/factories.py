"""Builders for the protocol tests: a league with real keys, certificates and chains.

Everything is built with real Ed25519 signatures from fixed seeds, so a failure reproduces.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.keys import SigningKey
from ledger.manifest import LeagueManifest, build_manifest


def key(n: int) -> SigningKey:
    """A deterministic signing key: seed = n repeated."""
    return SigningKey(bytes([n]) * 32)


@dataclass(frozen=True)
class League:
    """A league's keys and its manifest."""

    root: SigningKey
    mint: SigningKey
    treasury: SigningKey
    notary: SigningKey
    manifest: LeagueManifest

    def print_certificate(
        self,
        holder: SigningKey,
        serial: str = "CZ-MODEL-A-0042",
        *,
        title: str = "Model-A",
        card_set: str = "begotten",
        finish: str = "standard",
        issue: int = 1,
        event: int = 7,
    ) -> PrintCertificate:
        return PrintCertificate.sign(
            self.mint,
            serial=serial,
            title=title,
            set=card_set,
            finish=finish,
            issued_to=holder.public.to_text(),
            issue=issue,
            event=event,
            manifest=self.manifest.hash_text(),
        )

    def note_certificate(
        self, holder: SigningKey, serial: str = "CZ-M25-000001", *, issue: int = 1
    ) -> NoteCertificate:
        return NoteCertificate.sign(
            self.treasury,
            serial=serial,
            denomination=int(serial.split("-")[1][1:]),
            issued_to=holder.public.to_text(),
            issue=issue,
            event=3,
            manifest=self.manifest.hash_text(),
        )


def make_league(**overrides: object) -> League:
    root, mint, treasury, notary = key(1), key(2), key(3), key(4)
    settings: dict[str, object] = {"league": "test-league", "name": "Test League", **overrides}
    manifest = build_manifest(
        root,
        mint=mint.public,
        treasury=treasury.public,
        notary=notary.public,
        **settings,  # type: ignore[arg-type]
    )
    return League(root, mint, treasury, notary, manifest)


def chain_of(
    certificate: PrintCertificate | NoteCertificate, holder: SigningKey, *recipients: SigningKey
) -> Chain:
    """A chain from ``certificate`` (issued to ``holder``) endorsed to each recipient in turn."""
    chain = Chain(certificate=certificate, endorsements=())
    for n, recipient in enumerate(recipients, start=1):
        chain = endorse(chain, holder, recipient.public, 1_700_000_000 + n)
        holder = recipient
    return chain
