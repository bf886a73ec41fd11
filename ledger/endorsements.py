"""Endorsements and chains: ownership is a signature chain (docs/architecture.md §3, Book V.6).

An endorsement moves one certificate from the holder after hop n-1 to a new key at hop n: it
names the serial, the hop (1-based), ``prev`` = the hash of the previous link (the certificate
for hop 1, the previous endorsement otherwise), ``from``, ``to`` and ``time``, and is signed by
``from``. ``time`` is integer Unix seconds (UTC): JSON integers canonicalize one way, and a
wallet's clock is only a claim, so nothing here orders by it.

A chain is a certificate and every endorsement since. :func:`verify_chain` checks all of it
offline and returns the holder; nothing else in this module decides who holds what.
"""

from __future__ import annotations

import hmac
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ledger.certificates import Certificate, NoteCertificate, PrintCertificate, SerialText
from ledger.errors import ChainError, StaleIssueError
from ledger.keys import PublicKey, SigningKey
from ledger.limits import MAX_HOPS_PER_CHAIN
from ledger.manifest import LeagueManifest
from ledger.wire import HashText, KeyText, SignedModel, WireModel, WireTuple, hash_text

#: Unix seconds, 1970 up to the end of year 9999.
UnixTime = Annotated[int, Field(ge=0, le=253_402_300_799)]
Hop = Annotated[int, Field(ge=1, le=MAX_HOPS_PER_CHAIN)]


class Endorsement(SignedModel):
    """One hop of a chain, signed by the holder it moves the certificate away from."""

    KIND: ClassVar[str] = "endorsement"
    WHAT = "endorsement"

    kind: Literal["endorsement"]
    serial: SerialText
    hop: Hop
    prev: HashText
    from_: KeyText = Field(alias="from")
    to: KeyText
    time: UnixTime


class Chain(WireModel):
    """A certificate and every endorsement of it, in hop order."""

    WHAT = "chain"

    certificate: Annotated[PrintCertificate | NoteCertificate, Field(discriminator="kind")]
    endorsements: Annotated[
        tuple[Endorsement, ...], WireTuple, Field(max_length=MAX_HOPS_PER_CHAIN)
    ]

    @property
    def serial(self) -> str:
        return self.certificate.serial

    @property
    def issue(self) -> int:
        """The certificate's issue number: only the current issue's chain is spendable."""
        return self.certificate.issue


def verify_chain(
    chain: Chain,
    issuer_key: PublicKey,
    *,
    current_issue: int | None = None,
    certificate_known: bool = False,
) -> PublicKey:
    """Verify every link of ``chain`` offline and return the current holder.

    Checks the issuer's signature on the certificate, then at each hop n: the serial, the hop
    number, ``prev`` = hash of link n-1, ``from`` = the holder after hop n-1 (``issued_to``
    for hop 1) and ``from``'s signature. With ``current_issue`` (as the issuer's log says), a
    chain of an older issue is refused as history (:class:`StaleIssueError`).

    ``certificate_known`` is for a caller that already holds this very certificate, its
    signature included, as the issuer's own verified log issued it (the notary, from the
    feed it follows): the issuer's signature on it is then not checked a second time.
    """
    certificate = chain.certificate
    if not certificate_known:
        certificate.verify(issuer_key)
    if current_issue is not None:
        _check_issue(certificate, current_issue)
    holder = PublicKey.from_text(certificate.issued_to)
    prev = certificate.hash()
    for n, endorsement in enumerate(chain.endorsements, start=1):
        if endorsement.serial != certificate.serial:
            raise ChainError(
                f"hop {n} endorses {endorsement.serial}, not the chain's {certificate.serial}"
            )
        if endorsement.hop != n:
            raise ChainError(f"link {n} of {certificate.serial} says it is hop {endorsement.hop}")
        if not hmac.compare_digest(endorsement.prev, hash_text(prev)):
            raise ChainError(f"hop {n} of {certificate.serial} does not link to the hop before")
        signer = PublicKey.from_text(endorsement.from_)
        if signer != holder:
            raise ChainError(
                f"hop {n} of {certificate.serial} is signed away by a key that did not hold it"
            )
        endorsement.verify(signer)
        holder = PublicKey.from_text(endorsement.to)
        prev = endorsement.hash()
    return holder


def _check_issue(certificate: Certificate, current_issue: int) -> None:
    if certificate.issue < current_issue:
        raise StaleIssueError(
            f"{certificate.serial} issue {certificate.issue} is history: "
            f"the current issue is {current_issue}"
        )
    if certificate.issue > current_issue:
        raise ChainError(
            f"{certificate.serial} issue {certificate.issue} has not been issued "
            f"(the current issue is {current_issue})"
        )


def verify_league_chain(
    chain: Chain,
    manifest: LeagueManifest,
    *,
    current_issue: int | None = None,
    certificate_known: bool = False,
) -> PublicKey:
    """:func:`verify_chain` under a league: the certificate must fit the manifest's runs or
    note set and be signed by the manifest's mint (prints) or treasury (notes)."""
    manifest.check_certificate(chain.certificate)
    return verify_chain(
        chain,
        manifest.issuer_key(chain.certificate),
        current_issue=current_issue,
        certificate_known=certificate_known,
    )


def endorse(chain: Chain, holder: SigningKey, to: PublicKey, time: int) -> Chain:
    """Sign ``chain``'s certificate over to ``to`` and return the longer chain.

    ``holder`` must be the last ``to`` (or ``issued_to``); the chain's earlier links are not
    re-verified here: verify a chain when it arrives, not every time it leaves.
    """
    links = chain.endorsements
    last_holder = links[-1].to if links else chain.certificate.issued_to
    if not hmac.compare_digest(last_holder, holder.public.to_text()):
        raise ChainError(f"{chain.serial} is not held by the signing key; it cannot endorse it")
    if len(links) >= MAX_HOPS_PER_CHAIN:
        raise ChainError(f"{chain.serial} has reached {MAX_HOPS_PER_CHAIN} hops")
    prev = links[-1].hash() if links else chain.certificate.hash()
    endorsement = Endorsement.sign(
        holder,
        serial=chain.serial,
        hop=len(links) + 1,
        prev=hash_text(prev),
        to=to.to_text(),
        time=time,
        **{"from": holder.public.to_text()},
    )
    return Chain(certificate=chain.certificate, endorsements=(*links, endorsement))
