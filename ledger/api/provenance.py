"""Checking a league's account of one certificate's life (Book V.8: ``/provenance/SERIAL``).

Every proof of a :class:`~ledger.api.notary.Provenance` is checked on its own
(:func:`provenance_checks`): the issuer's event and its inclusion in the issuer's signed
checkpoint (the mint's stamp of a print and its issues again after a return, L-20; the
treasury's issues of a note), the chain of recorded hops of each issue, each hop's notary
receipt, each conflict's fraud proof against the recorded hop, and the holder named. A wallet
refuses an account with any failure (:func:`check_provenance`); the notary's page for people
marks each verified or not.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from ledger.address import address_of
from ledger.api.logs import FeedEvent
from ledger.api.notary import ConflictRecord, HopRecord, IssueRecord, Provenance, ReturnRecord
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.encoding import decode_b64
from ledger.endorsements import Chain, verify_league_chain
from ledger.errors import LedgerError, ProofError, VerificationError
from ledger.events import (
    NoteIssued,
    NoteReturned,
    PrintReissued,
    PrintReturned,
    PrintStamped,
    body_as,
)
from ledger.feed import signed_checkpoint
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.merkle import verify_inclusion
from ledger.print_runs import MISPRINT, MISPRINT_SERIAL


@dataclass(frozen=True, slots=True)
class ProofCheck:
    """One proof of an account and how its check ended (``error`` None: verified)."""

    #: What it proves, in words, and a short stable reference (``stamp``, ``issue-2``,
    #: ``chain-1``, ``hop-<notary event>``, ``conflict-<notary event>``, ``holder``).
    what: str
    ref: str
    error: LedgerError | None = None

    @property
    def verified(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class ProvenanceChecks:
    """Every proof of an account, checked; the holder the chain proves when it verified."""

    proofs: tuple[ProofCheck, ...]
    holder: PublicKey | None

    @property
    def verified(self) -> bool:
        return all(proof.verified for proof in self.proofs)

    def by_ref(self) -> dict[str, ProofCheck]:
        return {proof.ref: proof for proof in self.proofs}

    def first_error(self) -> LedgerError | None:
        return next((p.error for p in self.proofs if p.error is not None), None)


def _run(what: str, ref: str, check: Callable[[], object]) -> ProofCheck:
    try:
        check()
    except LedgerError as exc:
        return ProofCheck(what, ref, exc)
    return ProofCheck(what, ref)


def check_issued(
    certificate: PrintCertificate | NoteCertificate,
    index: int,
    leaf_hash: str,
    checkpoint_text: str,
    proof: Sequence[str],
    event: FeedEvent | None,
    *,
    origin: str,
    key: PublicKey,
) -> None:
    """The issuer's ``event`` at ``index`` (its leaf recomputed and signed by ``key``) issued
    ``certificate``, its leaf is ``leaf_hash``, and that leaf is included in a checkpoint of
    the issuer's log (``origin``) signed by ``key``."""
    what = "the mint's" if isinstance(certificate, PrintCertificate) else "the treasury's"
    if event is None or event.seq != index:
        raise VerificationError(f"{what} log serves no event {index}")
    recorded = event.verified(key)
    issued: PrintCertificate | NoteCertificate
    if not isinstance(certificate, PrintCertificate):
        issued = body_as(recorded, NoteIssued).certificate
    elif certificate.issue == 1:
        issued = body_as(recorded, PrintStamped).certificate
    else:
        issued = body_as(recorded, PrintReissued).certificate
    if issued != certificate:
        raise VerificationError(f"{what} event {index} issued another certificate")
    leaf = decode_b64(leaf_hash, what="leaf hash")
    if not hmac.compare_digest(recorded.leaf_hash, leaf):
        raise ProofError(f"the leaf hash shown is not {what} event {index}'s")
    checkpoint = signed_checkpoint(checkpoint_text, origin, key)
    verify_inclusion(
        index,
        checkpoint.size,
        leaf,
        [decode_b64(h, what="proof hash") for h in proof],
        checkpoint.root,
    )


def _check_conflict(conflict: ConflictRecord, chain: Chain | None) -> None:
    conflict.proof.verify()
    if chain is None:
        raise VerificationError(f"the conflict at hop {conflict.hop} is of no issue shown")
    hop = conflict.proof.first.hop
    if (
        hop != conflict.hop
        or hop > len(chain.endorsements)
        or not hmac.compare_digest(chain.endorsements[hop - 1].hash(), conflict.proof.first.hash())
    ):
        raise VerificationError(
            f"the conflict at hop {conflict.hop} is not against the recorded hop"
        )


def _check_receipt(record: HopRecord, manifest: LeagueManifest) -> None:
    if record.receipt.origin != f"{manifest.league}/notary":
        raise VerificationError(f"hop {record.endorsement.hop}'s receipt is another log's")
    record.receipt.check(PublicKey.from_text(manifest.notary), record.endorsement)


def _check_holder(life: Provenance, holder: PublicKey | None) -> None:
    if holder is None:
        raise VerificationError("no chain verified, so no holder is proved")
    if (life.holder is not None and PublicKey.from_text(life.holder) != holder) or (
        life.holder_address is not None and life.holder_address != address_of(holder)
    ):
        raise VerificationError("the league names another holder than the chain proves")


def _check_stamp(life: Provenance, manifest: LeagueManifest, event: FeedEvent | None) -> None:
    stamp = life.stamp
    assert stamp is not None
    if stamp.certificate.serial != life.serial:
        raise VerificationError(f"the stamp shown is of {stamp.certificate.serial}")
    check_issued(
        stamp.certificate,
        stamp.index,
        stamp.leaf_hash,
        stamp.checkpoint,
        stamp.proof,
        event,
        origin=f"{manifest.league}/mint",
        key=PublicKey.from_text(manifest.mint),
    )


def _check_issue(
    life: Provenance, manifest: LeagueManifest, record: IssueRecord, event: FeedEvent | None
) -> None:
    certificate = record.certificate
    if certificate.serial != life.serial:
        raise VerificationError(f"the issue shown is of {certificate.serial}")
    if isinstance(certificate, PrintCertificate) != (life.stamp is not None) or (
        isinstance(certificate, PrintCertificate) and certificate.issue == 1
    ):
        raise VerificationError(f"issue {certificate.issue} shown is no issue of {life.serial}")
    issuer, key = (
        ("mint", manifest.mint)
        if isinstance(certificate, PrintCertificate)
        else ("treasury", manifest.treasury)
    )
    check_issued(
        certificate,
        record.index,
        record.leaf_hash,
        record.checkpoint,
        record.proof,
        event,
        origin=f"{manifest.league}/{issuer}",
        key=PublicKey.from_text(key),
    )


def _issuer(life: Provenance, manifest: LeagueManifest) -> tuple[str, PublicKey]:
    """The issuer of ``life``'s certificate: the mint for a print, the treasury for a note."""
    if life.stamp is not None:
        return "mint", PublicKey.from_text(manifest.mint)
    return "treasury", PublicKey.from_text(manifest.treasury)


def _check_issue_numbers(life: Provenance) -> None:
    """Issues 1, 2, … each once, in order (a print's 1 is its stamp); every issue but the
    newest returned once, the newest at most once (a note back in the reserve)."""
    shown = [record.certificate.issue for record in life.issues]
    first = 2 if life.stamp is not None else 1
    if shown != list(range(first, first + len(shown))):
        raise VerificationError(f"the issues shown are not {first}, {first + 1}, …: {shown}")
    newest = first + len(shown) - 1
    returned = [record.issue for record in life.returns]
    if returned not in (list(range(1, newest)), list(range(1, newest + 1))):
        raise VerificationError(
            f"the returns shown ({returned}) are not one for each issue before the newest"
        )


def _check_return(
    life: Provenance,
    manifest: LeagueManifest,
    record: ReturnRecord,
    event: FeedEvent | None,
    holders: dict[int, PublicKey],
) -> None:
    """The issuer's own event returned ``record.issue`` at ``record.index``, on the notary's
    record named, and that issue's chain ends at the issuer's key."""
    issuer, key = _issuer(life, manifest)
    if event is None or event.seq != record.index:
        raise VerificationError(f"the {issuer}'s log serves no event {record.index}")
    recorded = event.verified(key)
    body: PrintReturned | NoteReturned = (
        body_as(recorded, PrintReturned)
        if life.stamp is not None
        else body_as(recorded, NoteReturned)
    )
    purchase = body.order_id if isinstance(body, PrintReturned) else body.purchase_id
    if (body.serial, body.issue, body.notarized, purchase) != (
        life.serial,
        record.issue,
        record.notarized,
        record.purchase_id,
    ):
        raise VerificationError(
            f"the {issuer}'s event {record.index} is not the return of {life.serial} issue "
            f"{record.issue} shown"
        )
    if holders.get(record.issue) != key:
        raise VerificationError(
            f"issue {record.issue}'s chain does not end at the {issuer}'s key it was returned to"
        )


def _chains(life: Provenance) -> dict[int, Chain]:
    """The chain of each issue, from its certificate (a print's stamp, or an issue shown) and
    the recorded hops of that issue."""
    certificates: list[PrintCertificate | NoteCertificate] = (
        [life.stamp.certificate] if life.stamp is not None else []
    )
    certificates += [record.certificate for record in life.issues]
    return {
        certificate.issue: Chain(
            certificate=certificate,
            endorsements=tuple(
                h.endorsement for h in life.hops if h.receipt.issue == certificate.issue
            ),
        )
        for certificate in certificates
    }


def _holder_proved(
    life: Provenance, manifest: LeagueManifest, holders: dict[int, PublicKey]
) -> PublicKey | None:
    """The current issue's proved holder (the treasury's key for a note back in reserve)."""
    if life.standing == "in-reserve":
        return PublicKey.from_text(manifest.treasury)
    if not holders:
        return None
    return holders.get(max(_chains(life)))


def provenance_checks(
    life: Provenance, manifest: LeagueManifest, events: Iterable[FeedEvent]
) -> ProvenanceChecks:
    """Every proof of ``life`` checked under ``manifest``, with ``events`` the issuer's log
    events it names (the stamp's, each issue's and each return's; one missing fails that
    proof)."""
    by_seq = {event.seq: event for event in events}
    proofs: list[ProofCheck] = []
    if life.stamp is not None:
        event = by_seq.get(life.stamp.index)
        proofs.append(
            _run(
                f"stamped at mint event {life.stamp.index}",
                "stamp",
                partial(_check_stamp, life, manifest, event),
            )
        )
    for issued in life.issues:
        issuer = "mint" if life.stamp is not None else "treasury"
        proofs.append(
            _run(
                f"issue {issued.certificate.issue} at {issuer} event {issued.index}",
                f"issue-{issued.certificate.issue}",
                partial(_check_issue, life, manifest, issued, by_seq.get(issued.index)),
            )
        )
    chains = _chains(life)
    holders: dict[int, PublicKey] = {}

    def verify(issue: int, chain: Chain) -> None:
        holders[issue] = verify_league_chain(chain, manifest)

    for issue, chain in chains.items():
        label = (
            "the chain of hops"
            if life.stamp is not None and len(chains) == 1
            else f"issue {issue}'s chain"
        )
        proofs.append(_run(label, f"chain-{issue}", partial(verify, issue, chain)))
    proofs.append(
        _run("the issues and returns in order", "issues", partial(_check_issue_numbers, life))
    )
    issuer = _issuer(life, manifest)[0]
    for returned in life.returns:
        proofs.append(
            _run(
                f"issue {returned.issue} returned at {issuer} event {returned.index}",
                f"return-{returned.issue}",
                partial(
                    _check_return, life, manifest, returned, by_seq.get(returned.index), holders
                ),
            )
        )
    for record in life.hops:
        proofs.append(
            _run(
                f"hop {record.endorsement.hop}'s receipt (notary event {record.receipt.index})",
                f"hop-{record.receipt.index}",
                partial(_check_receipt, record, manifest),
            )
        )
    for conflict in life.conflicts:
        against = chains.get(conflict.issue) or next(iter(chains.values()), None)
        proofs.append(
            _run(
                f"conflict at hop {conflict.hop} (notary event {conflict.index})",
                f"conflict-{conflict.index}",
                partial(_check_conflict, conflict, against),
            )
        )
    holder = _holder_proved(life, manifest, holders)
    proofs.append(_run("the holder named", "holder", partial(_check_holder, life, holder)))
    return ProvenanceChecks(tuple(proofs), holder)


def check_provenance(
    life: Provenance, manifest: LeagueManifest, serial: str, events: Iterable[FeedEvent]
) -> PublicKey | None:
    """An account of ``serial`` (a print's or a note's) refused at its first proof that fails,
    with ``events`` the issuer's log events it names (the stamp's in the mint's log, or each
    issue's in the treasury's). Returns the holder the chains prove (None for the print outside
    the runs, or a note back in the reserve)."""
    if life.serial != serial:
        raise VerificationError(f"the league answered for {life.serial}, not {serial}")
    if life.standing == "outside-runs":
        if life.stamp is None:
            return None  # the Misprint, not awarded yet: nothing to check
        certificate = life.stamp.certificate
        if (certificate.serial, certificate.finish, certificate.issue) != (
            MISPRINT_SERIAL,
            MISPRINT,
            1,
        ) or (life.hops or life.issues or life.returns or life.conflicts):
            raise VerificationError(
                f"the league shows {serial} outside the runs, yet not as the Misprint's award"
            )
    if life.stamp is None and not life.issues:
        raise VerificationError(f"the league shows no stamp or issue of {serial}")
    checks = provenance_checks(life, manifest, events)
    error = checks.first_error()
    if error is not None:
        raise error
    return checks.holder
