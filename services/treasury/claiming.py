"""The faucet: unstamped marks become notes from the reserve (Book V.5).

Everything that needs no database is checked first, per claim (league, signature, proof of
work at the claim's price). Claims then wait for the treasury's one writer (the kernel's
:class:`GroupWriter`), which decides every claim waiting in one event-log transaction under
the log's lock, in arrival order, through the kernel's answered-requests layer
(``services.kernel.answered``): a replay is answered from the stored answer, and a copy of
a claim decided earlier in the same transaction as a replay of that copy's grant (a request
id reused for another body is refused), so a claim sent twice at once is granted once and
answered the same twice, never refused by its own grant and never failing its group;
otherwise the claim must be fresh, the key must have marks left today (the manifest's
``faucet_marks_per_day``, counted on the UTC day of the database's clock), and it converts
the smaller of what it asks and what is left, composed from the reserve largest denomination
first. Each note is issued as a ``note-issued`` event: a fresh treasury-signed certificate of
the note's next issue, made out to the claimant.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from ledger.api.treasury import ClaimAnswer, ClaimRequest, FaucetDay, claim_work
from ledger.certificates import NoteCertificate
from ledger.errors import (
    AllowanceExhausted,
    InsufficientWork,
    LedgerError,
    RequestIdReused,
    RunExhaustedError,
    StaleRequest,
)
from ledger.events import NoteIssued
from ledger.keys import PublicKey
from ledger.leaf import NewEvent
from ledger.manifest import LeagueManifest
from ledger.work import challenge, meets
from services.eventlog import StoreTransaction
from services.kernel import answered
from services.kernel.answered import Answers, Held, Stored, Words, resets_at
from services.kernel.writer import GroupWriter, Locked, run_group
from services.treasury import tables
from services.treasury.projection import PROJECTION, TreasuryChanges, TreasuryProjection
from services.treasury.treasury import Treasury, issue_queue, make_change

#: How far a claim's signing time may be from the treasury's clock, either way (seconds).
MAX_CLOCK_SKEW = answered.MAX_CLOCK_SKEW
#: Most claims decided in one transaction; claims beyond wait for the next one.
MAX_GROUP_CLAIMS = 200
#: Most claims waiting for the writer; a claim beyond is refused as overloaded (503).
MAX_WAITING_CLAIMS = 4 * MAX_GROUP_CLAIMS
#: Refusals decided before a claim issues anything: they fail that claim alone.
REFUSALS = (RequestIdReused, StaleRequest, AllowanceExhausted, RunExhaustedError)


@dataclass(frozen=True, slots=True)
class Presented:
    """A claim that passed every check needing no database."""

    request: ClaimRequest
    hash: bytes

    @property
    def owner(self) -> str:
        return self.request.owner

    @property
    def id_key(self) -> tuple[str, str]:
        return (self.request.owner, self.request.request_id)


def present(treasury: Treasury, request: ClaimRequest) -> Presented:
    """Check the league, the claimant's signature and the proof of work."""
    manifest = treasury.manifest
    manifest.check_addressed("treasury", "the claim", request.league, request.manifest)
    request.verify(PublicKey.from_text(request.owner))
    price = claim_work(manifest.policies, request.marks)
    if not meets(challenge(request.to_wire()), 0, request.work, price):
        raise InsufficientWork(
            f"work: the nonce is not worth the {price} expected hashes a claim of "
            f"{request.marks} marks costs (ledger.api.treasury.claim_work)"
        )
    return Presented(request, request.hash())


#: How the treasury's refusals of a claim name it (``services.kernel.answered``).
WORDS = Words(
    request="claim",
    clock="the treasury's clock",
    spent="claimed its {per_day} marks",
    reopens="the faucet opens again",
)


def faucet_day(manifest: LeagueManifest, claimed: int, day: date) -> FaucetDay:
    """The published faucet with ``claimed`` marks of it gone on ``day`` (UTC)."""
    per_day = manifest.policies.faucet_marks_per_day
    return FaucetDay(
        per_day=per_day,
        claimed_today=claimed,
        left_today=max(0, per_day - claimed),
        day=day.isoformat(),
        resets_at=resets_at(day),
    )


@dataclass(frozen=True, slots=True)
class Grant:
    """A claim granted: the notes it will be issued, by denomination, largest first."""

    presented: Presented
    denominations: tuple[int, ...]
    #: The key's day after this grant.
    faucet: FaucetDay


@dataclass(frozen=True, slots=True)
class Again:
    """A claim sent again while its first copy is decided in the same transaction: answered
    as a replay of that copy's grant, whatever the key's day now says."""

    first: Grant


@dataclass
class ClaimGrants:
    """Which claims of a transaction are granted which notes, decided in memory against the
    state read under the lock (pure and cheap: it tells the read which notes to read; the
    :class:`ClaimDecision` then issues them)."""

    treasury: Treasury
    now: datetime
    state: tables.GroupState
    #: Notes left in the reserve, by denomination, as this transaction's grants draw on it.
    reserve: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        self.reserve = {d: row.reserve for d, row in self.state.supply.items()}

    @property
    def answers(self) -> Answers[Grant]:
        """The answered claims; a grant of this transaction is held there (its copies are
        answered as replays of it). Only a grant takes an id: a refused claim is decided
        again, as it would be in a later transaction."""
        return self.state.answers

    def faucet(self, owner: str) -> FaucetDay:
        return faucet_day(self.treasury.manifest, self.state.quota.used_by(owner), self.now.date())

    def replayed(self, answer: ClaimAnswer, owner: str) -> ClaimAnswer:
        """``answer`` given again: marked a replay, with the key's day as it stands now."""
        return answer.model_copy(update={"replayed": True, "faucet": self.faucet(owner)})

    def decide(self, presented: Presented) -> Grant | Again | ClaimAnswer | LedgerError:
        """A grant, a replay (of an answer stored, or of a copy decided in this
        transaction), or one of :data:`REFUSALS`, having changed nothing."""
        try:
            prior = self.answers.prior(presented.id_key, presented.hash)
            if isinstance(prior, Held):
                return Again(prior.value)
            if isinstance(prior, Stored):
                answer = ClaimAnswer.model_validate(prior.answer)
                return self.replayed(answer, presented.owner)
            grant = self._grant(presented)
        except REFUSALS as refusal:
            return refusal
        self.answers.hold(presented.id_key, presented.hash, grant)
        return grant

    def _grant(self, presented: Presented) -> Grant:
        request = presented.request
        quota = self.state.quota
        self.answers.check_fresh(request.time)
        quota.check(request.owner)
        marks = min(request.marks, quota.left(request.owner))
        notes = make_change(marks, self.reserve)
        if notes is None:
            held = ", ".join(f"{n} × M{d}" for d, n in sorted(self.reserve.items()) if n)
            raise RunExhaustedError(
                f"the reserve cannot make {marks} marks (it holds {held or 'no notes'}); "
                f"notes return to it as they are spent, and it is never added to"
            )
        for denomination in notes:
            self.reserve[denomination] -= 1
        quota.spend(request.owner, marks)
        return Grant(presented, tuple(notes), self.faucet(request.owner))


@dataclass
class ClaimDecision:
    """One claiming transaction's decision (the kernel's ``Decision``): the certificates of
    its grants, their events and the projection's changes (CPU-bound: it signs every
    certificate, so it runs off the event loop), and the answers kept for replays."""

    treasury: Treasury
    now: datetime
    next_seq: int
    #: Per denomination, the notes to issue in order: (number, issues so far).
    queue: dict[int, list[tuple[int, int]]]
    #: The answered claims, where each grant's answer is kept (in the same transaction).
    answers: Answers[Grant]
    events: list[NewEvent] = field(default_factory=list)
    changes: TreasuryChanges = field(default_factory=TreasuryChanges)

    def issue(self, grant: Grant) -> list[NoteCertificate]:
        request = grant.presented.request
        certificates = []
        for denomination in grant.denominations:
            number, issues = self.queue[denomination].pop(0)
            certificate = self.treasury.issue_note(
                denomination, number, request.owner, issues + 1, self.next_seq + len(self.events)
            )
            issued = NoteIssued(
                certificate=certificate, request_id=request.request_id, reason="claim"
            )
            # Issue n is the note's stream version 2n-1 (ledger.events.note_stream).
            self.events.append(issued.new_event(expected_version=2 * issues))
            TreasuryProjection.issued(self.changes, issued, self.now)
            certificates.append(certificate)
        return certificates


#: What a group of claims reads under the lock: the decisions on it (which claims are
#: granted which notes, pure and cheap) and the queue of notes those grants take.
Read = tuple[
    "ClaimGrants",
    list["Grant | Again | ClaimAnswer | LedgerError"],
    dict[int, list[tuple[int, int]]],
]


async def claim_group(
    treasury: Treasury, group: Sequence[Presented]
) -> list[ClaimAnswer | LedgerError]:
    """Answer ``group`` in one transaction (the kernel's :func:`run_group`): an answer or a
    refusal per claim, in order.

    The transaction's time (the database's) is the one clock: it decides freshness and the
    UTC day of the faucet, and every event records it.
    """

    async def read(locked: Locked) -> Read:
        state = await tables.read_group(
            locked.tx,
            [p.id_key for p in group],
            locked.now,
            WORDS,
            treasury.manifest.policies.faucet_marks_per_day,
        )
        grants = ClaimGrants(treasury, locked.now, state)
        # Which claims are granted which denominations decides which notes to read next.
        decided = [grants.decide(presented) for presented in group]
        wanted = Counter(n for d in decided if isinstance(d, Grant) for n in d.denominations)
        returned_held = {
            d: min(wanted[d], row.first_issued - row.circulating) for d, row in state.supply.items()
        }
        returned = await tables.returned_notes(locked.tx, Counter(returned_held))
        return grants, decided, issue_queue(state.supply, wanted, returned)

    def decide(locked: Locked, read: Read) -> tuple[ClaimDecision, list[ClaimAnswer | LedgerError]]:
        grants, decided, queue = read
        decision = ClaimDecision(treasury, locked.now, locked.next_seq, queue, grants.answers)
        results: list[ClaimAnswer | LedgerError] = []
        #: Each grant's answer by the grant's id: its copies, always after it, replay it.
        granted: dict[int, ClaimAnswer] = {}
        for item in decided:
            if isinstance(item, Again):
                first = item.first
                results.append(grants.replayed(granted[id(first)], first.presented.owner))
                continue
            if not isinstance(item, Grant):
                results.append(item)
                continue
            presented = item.presented
            answer = granted[id(item)] = _answer(item, decision.issue(item))
            results.append(answer)
            decision.answers.keep(presented.id_key, presented.hash, answer.model_dump(mode="json"))
        return decision, results

    async def record(tx: StoreTransaction, decision: ClaimDecision) -> None:
        await tables.REQUESTS.record(tx, decision.answers)

    return await run_group(treasury.store, PROJECTION, read, decide, record)


def _answer(grant: Grant, notes: list[NoteCertificate]) -> ClaimAnswer:
    request = grant.presented.request
    return ClaimAnswer(
        request_id=request.request_id,
        replayed=False,
        requested=request.marks,
        marks=sum(grant.denominations),
        notes=notes,
        faucet=grant.faucet,
    )


class Claimer:
    """The treasury's one writer: checked claims wait here and are decided in groups, in
    arrival order."""

    def __init__(self, treasury: Treasury) -> None:
        self.treasury = treasury
        self.writer: GroupWriter[Presented, ClaimAnswer] = GroupWriter(
            lambda group: claim_group(treasury, group),
            units=lambda presented: 1,
            max_group=MAX_GROUP_CLAIMS,
            max_waiting=MAX_WAITING_CLAIMS,
            what="claims",
            turn=treasury.store.turn,
        )

    async def claim(self, request: ClaimRequest) -> ClaimAnswer:
        """Check ``request``, wait for its group's transaction, return its answer."""
        return await self.writer.submit(present(self.treasury, request))

    async def close(self) -> None:
        """Let the writer finish the groups already waiting."""
        await self.writer.close()
