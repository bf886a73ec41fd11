"""The state the service checkers share: each log (dense seqs, the root recomputed and matched
against every checkpoint: the one feed verifier, :mod:`ledger.feed`; cosignatures), the chains
of prints and notes, open purchases, and the returns waiting for the notary's hop they name.
Bounded per print, note issue, hop, open purchase and faucet day, never per page."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ledger.audit.facts import (
    AUDITED_SERVICES,
    WITNESSES,
    AuditFailure,
    Returned,
    _public,
)
from ledger.audit.report import Cosigned, ServiceReport
from ledger.audit.reward_facts import MisprintAwarded, PaidReward
from ledger.checkpoint import Checkpoint, CosignatureVerifier
from ledger.errors import LedgerError
from ledger.feed import LogTree, OutOfPlace, signed_checkpoint
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import RunFinish

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's


@dataclass(slots=True)
class _Expected:
    checkpoint: Checkpoint
    kept: bool


class _Log:
    """One service's log: dense seqs, verified events, the root at every checkpoint."""

    def __init__(
        self, service: str, origin: str, key: PublicKey, witnesses: dict[str, CosignatureVerifier]
    ) -> None:
        self.service = service
        self.origin = origin
        self.key = key
        self.tree = LogTree()
        self.witnesses = witnesses
        self.pending: dict[int, list[_Expected]] = {}
        self.matched = 0
        self.latest: Checkpoint | None = None
        self.cosigned: list[Cosigned] = []
        #: Whether a checkpoint of it was given (a log not served is left out of the report).
        self.served = False

    def fail(self, seq: int | None, reason: str) -> AuditFailure:
        return AuditFailure(self.service, seq, reason)

    def expect(self, checkpoint: Checkpoint, *, kept: bool) -> None:
        which = "the checkpoint kept from the previous audit" if kept else "the checkpoint"
        if checkpoint.origin != self.origin:
            raise self.fail(
                None, f"{which} names the origin {checkpoint.origin!r}, not {self.origin!r}"
            )
        try:
            signed_checkpoint(checkpoint, self.origin, self.key)
        except LedgerError as exc:
            raise self.fail(
                None,
                f"{which} of size {checkpoint.size} does not verify under "
                f"the {self.service} key: {exc.diagnostics()}",
            ) from None
        if checkpoint.size < self.tree.size:
            raise ValueError("give every checkpoint before the events it covers")
        self.served = True
        if not kept:
            self._cosignatures(checkpoint)
            if self.latest is None or checkpoint.size > self.latest.size:
                self.latest = checkpoint
        self.pending.setdefault(checkpoint.size, []).append(_Expected(checkpoint, kept))
        if checkpoint.size == 0:
            self._match(0)

    def _cosignatures(self, checkpoint: Checkpoint) -> None:
        """Every line by a known witness must verify (C2SP tlog-cosignature)."""
        for signature in checkpoint.note.signatures:
            for witness, verifier in self.witnesses.items():
                if not verifier.matches(signature):
                    continue
                try:
                    timestamp = verifier.timestamp(checkpoint.text, signature)
                except LedgerError as exc:
                    raise self.fail(
                        None,
                        f"the cosignature by the {witness} witness "
                        f"({verifier.name}) on its checkpoint of size "
                        f"{checkpoint.size} does not verify: "
                        f"{exc.diagnostics()}",
                    ) from None
                self.cosigned.append(Cosigned(witness, checkpoint.size, timestamp))

    def _match(self, size: int) -> None:
        for expected in self.pending.pop(size, ()):
            if not self.tree.matches(expected.checkpoint):
                seq = size - 1 if size else None
                if expected.kept:
                    raise self.fail(
                        seq,
                        f"the log's first {size} events do not hash to the "
                        f"root of the checkpoint kept from the previous audit "
                        f"(a rewritten log, or one restored from an older "
                        f"backup)",
                    )
                raise self.fail(
                    seq,
                    f"the log's first {size} events do not hash to the root "
                    f"of the checkpoint it serves at size {size}",
                )
            self.matched += 1

    def append(self, seq: int | None, leaf: bytes | None) -> None:
        """The next event's place: dense seqs, then its leaf into the tree."""
        try:
            if seq is not None:
                self.tree.place(seq)
        except OutOfPlace as exc:
            raise self.fail(seq, str(exc)) from None
        if leaf is not None:
            self.tree.append(leaf)
            if self.tree.size in self.pending:
                self._match(self.tree.size)

    def finish(self) -> ServiceReport:
        for size in sorted(self.pending):
            expected = self.pending[size][0]
            if expected.kept:
                raise self.fail(
                    self.tree.size,
                    f"the log ends after {self.tree.size} events, "
                    f"short of the checkpoint of size {size} kept "
                    f"from the previous audit (a truncated log, or "
                    f"one restored from an older backup)",
                )
            raise self.fail(
                self.tree.size,
                f"the feed ends after {self.tree.size} events, "
                f"short of the checkpoint it serves at size {size}",
            )
        return ServiceReport(
            self.service, self.tree.size, self.tree.root(), self.matched, tuple(self.cosigned)
        )


@dataclass(slots=True)
class _Print:
    """What the auditor keeps of one stamped print: enough to check the next hop."""

    issue: int
    holder: str
    #: hash_text of the last link (the certificate, then each recorded endorsement).
    prev: str
    #: hash_text of the certificate (the first link).
    certificate: str = ""
    hops: int = 0
    #: The seqs of its first and latest recorded hops in the notary's log.
    first_hop: int = -1
    last_hop: int = -1
    finish: str = ""
    #: The seq of the mint's print-returned event of this issue, once returned (L-20).
    returned: int = -1


@dataclass(slots=True)
class _Note:
    """What the auditor keeps of one note: its latest issue and whether it is out."""

    denomination: int
    issue: int
    out: bool


@dataclass(slots=True)
class _Purchase:
    """One purchase in its saga."""

    version: int
    price: int
    paid: int
    buyer: str
    returned: int = 0
    delivered: bool = False
    refused: bool = False
    #: The finish bought, and an upgrade's returned print (serial, issue) (L-20).
    finish: str = "standard"
    upgrade: tuple[str, int] | None = None
    #: The returned print as the mint issued it again on a refusal.
    reissued: tuple[str, str, str] | None = None
    #: Notes issued with it: (serial, issue, denomination), and their reason.
    issued: list[tuple[str, int, int]] = field(default_factory=list)
    reasons: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Taken:
    """A print the mint's log took back for an order not yet closed in the treasury's log
    (L-20): its serial and issue, the return's seq, and whom and at what seq the mint issued
    it again (``None``: not issued again)."""

    serial: str
    issue: int
    seq: int
    reissued: tuple[str, int] | None = None


@dataclass(slots=True)
class _Run:
    count: int = 0
    highest: int = 0
    highest_seq: int = 0


@dataclass(slots=True)
class _Recorded:
    seq: int
    digest: bytes


@dataclass(slots=True)
class _HoldersPage:
    """One page of the notary's projection, waiting for the log to reach its size."""

    after: str
    size: int
    rows: dict[str, tuple[int, int, str]]
    compared: bool = False


def _check_return_event(log: _Log, fact: Returned, stream: str, to: str, issuer: str) -> None:
    """A return (of a note to the treasury, or a print to the mint) recorded where its
    issuer's log records one (issue n's return is version 2n of the item's stream), carrying
    a valid endorsement of that item to the issuer's key."""
    n = fact.issue
    if fact.stream != stream or fact.version != 2 * n:
        raise log.fail(
            fact.seq,
            f"the return of issue {n} of {fact.serial} is recorded as "
            f"version {fact.version} of stream {fact.stream!r}, not "
            f"version {2 * n} of {stream!r}",
        )
    if fact.endorsed != fact.serial or fact.to != to or not fact.signed:
        raise log.fail(
            fact.seq,
            f"the return of {fact.serial} does not carry a valid "
            f"endorsement of it to the {issuer}'s key",
        )


@dataclass
class _State:
    """What the checkers of :class:`ledger.audit.Auditor` share: the manifest, each log, and
    what the services' events said so far that a later event (of the same service or another)
    is checked against. ``root`` is the pinned league root key (``None`` on first use: the
    manifest's own)."""

    manifest: LeagueManifest
    root: PublicKey | None = None
    _logs: dict[str, _Log] = field(init=False)
    _manifest_text: str = field(init=False)
    #: Each print's chain with the latest recorded hop (what the notary's holders list).
    _prints: dict[str, _Print] = field(init=False, default_factory=dict)
    #: Each issue of each print's chain: (serial, issue) -> its links (L-20).
    _print_chains: dict[tuple[str, int], _Print] = field(init=False, default_factory=dict)
    #: The latest issue of each print.
    _print_issue: dict[str, int] = field(init=False, default_factory=dict)
    #: What the mint's log did on each order (purchase id): the print taken back (serial,
    #: issue) and the print issued again (serial, certificate, receiver) (L-20).
    _order_returns: dict[str, tuple[str, int]] = field(init=False, default_factory=dict)
    _order_reissues: dict[str, tuple[str, str, str]] = field(init=False, default_factory=dict)
    #: The mint's returns whose order no closed purchase has accounted for yet: at the end
    #: each must be of a purchase still open with that upgrade (L-20).
    _unaccounted: dict[str, _Taken] = field(init=False, default_factory=dict)
    _print_returns: int = field(init=False, default=0)
    _print_notarized: int = field(init=False, default=0)
    _runs: dict[tuple[str, RunFinish], _Run] = field(init=False, default_factory=dict)
    _run_bounds: dict[tuple[str, str], tuple[str, int, int]] = field(
        init=False, default_factory=dict
    )
    _recorded: dict[tuple[str, int, int], _Recorded] = field(init=False, default_factory=dict)
    _hops: int = field(init=False, default=0)
    _conflicts: int = field(init=False, default=0)
    _verified: int = field(init=False, default=1)  # the manifest's root signature
    _holders: list[_HoldersPage] = field(init=False, default_factory=list)
    _holders_next: str | None = field(init=False, default="")
    _holders_waiting: int = field(init=False, default=-1)
    _compared: int = field(init=False, default=0)
    _evidence: dict[str, int] | None = field(init=False, default=None)
    _accused: AuditFailure | None = field(init=False, default=None)
    _notes: dict[str, _Note] = field(init=False, default_factory=dict)
    #: Each issue of each note's chain, for the notary's hops: (serial, issue) -> its links.
    _note_chains: dict[tuple[str, int], _Print] = field(init=False, default_factory=dict)
    #: Each note's chain with the latest recorded hop (what the notary's holders list).
    _note_holding: dict[str, _Print] = field(init=False, default_factory=dict)
    _out: Counter[int] = field(init=False, default_factory=Counter)
    _faucet: dict[tuple[str, str], int] = field(init=False, default_factory=dict)
    #: Returns waiting for the notary's log: its seq -> (the returning service, its seq,
    #: serial, issue, hop, digest of the endorsement). One return per notary seq: a second
    #: naming the same seq fails.
    _returning: dict[int, tuple[str, int, str, int, int, bytes]] = field(
        init=False, default_factory=dict
    )
    _purchases: dict[str, _Purchase] = field(init=False, default_factory=dict)
    _closed: Counter[str] = field(init=False, default_factory=Counter)
    _issues: int = field(init=False, default=0)
    _returns: int = field(init=False, default=0)
    _claimed: int = field(init=False, default=0)
    _note_hops: int = field(init=False, default=0)
    #: Witnessed tables' rewards paid (``ledger.audit.rewards``): by table, and the notes each
    #: listed, (serial, issue) -> (table, certificate digest), until their issue is read.
    _rewards: dict[str, PaidReward] = field(init=False, default_factory=dict)
    _reward_notes: dict[tuple[str, int], tuple[str, str]] = field(init=False, default_factory=dict)
    #: The treasury's reward orders, order id -> (owner, title, finish), and the mint's prints
    #: stamped on a reward's order id, order id -> (owner, title, finish, the mint's seq).
    _reward_orders: dict[str, tuple[str, str, str]] = field(init=False, default_factory=dict)
    _reward_stamps: dict[str, tuple[str, str, str, int]] = field(init=False, default_factory=dict)
    #: The Misprint's award in the mint's log, once read (the tables' audit checks its table).
    _misprint: MisprintAwarded | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        try:
            self.root = self.manifest.verify_root(self.root)
        except LedgerError as exc:
            raise AuditFailure("manifest", None, exc.diagnostics()) from None
        self._manifest_text = json.dumps(self.manifest.to_wire())
        keys = {name: _public(getattr(self.manifest, name)) for name in WITNESSES}
        league = self.manifest.league
        self._logs = {
            name: _Log(
                name,
                f"{league}/{name}",
                keys[name],
                {w: CosignatureVerifier(f"{league}/{w}", keys[w]) for w in WITNESSES if w != name},
            )
            for name in AUDITED_SERVICES
        }

    def _log(self, service: str) -> _Log:
        try:
            return self._logs[service]
        except KeyError:
            raise ValueError(f"no audited service is called {service!r}") from None

    def size(self, service: str) -> int:
        """How many events of ``service`` were audited so far."""
        return self._log(service).tree.size

    def _await_hop(self, log: _Log, fact: Returned) -> None:
        """A return (a note's to the treasury, a print's to the mint) waits for the notary's
        hop it names; no two returns name one hop."""
        other = self._returning.get(fact.notarized)
        if other is not None:
            raise log.fail(
                fact.seq,
                f"the return of {fact.serial} (issue {fact.issue}) names "
                f"the notary's hop at seq {fact.notarized}, which the "
                f"{other[0]}'s return at seq {other[1]} names too",
            )
        self._returning[fact.notarized] = (
            log.service,
            fact.seq,
            fact.serial,
            fact.issue,
            fact.hop,
            fact.digest,
        )

    def _check_returns(self) -> None:
        """Every return matched to the notary's hop it names, unless that hop lies past the
        notary's audited log (not matched this run); every print the mint took back and not
        yet accounted for by a closed purchase taken for a purchase still open with that
        upgrade, and issued again only to its buyer (L-20)."""
        size = self.size("notary")
        for notarized, (service, seq, serial, issue, _, _) in self._returning.items():
            if notarized < size:
                raise AuditFailure(
                    service,
                    seq,
                    f"the return of {serial} (issue {issue}) names the notary's "
                    f"hop at seq {notarized}, which its log (audited to "
                    f"{size} events) never matched to it",
                )
        treasury = self._logs["treasury"].served or self._logs["treasury"].tree.size > 0
        for order, taken in self._unaccounted.items():
            what = f"{taken.serial} (issue {taken.issue}) taken back for order {order!r}"
            if not treasury:
                raise AuditFailure(
                    "mint",
                    taken.seq,
                    f"{what}, but the treasury serves no log: a return without "
                    f"a purchase cannot be accounted for (L-20)",
                )
            purchase = self._purchases.get(order)
            if purchase is None or purchase.upgrade != (taken.serial, taken.issue):
                raise AuditFailure(
                    "mint",
                    taken.seq,
                    f"{what}, which names no purchase opened with that print "
                    f"returned for an upgrade (L-20)",
                )
            if taken.reissued is not None and taken.reissued[0] != purchase.buyer:
                raise AuditFailure(
                    "mint",
                    taken.reissued[1],
                    f"{taken.serial} issued again for order {order!r} to "
                    f"{taken.reissued[0]}, who is not its buyer (L-20)",
                )
