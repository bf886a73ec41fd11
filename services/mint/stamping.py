"""Stamping: presented prints become certificates, drawn from the fixed runs (Book V.4).

Everything that needs no database is checked first, per request (league, signature, batch
size, titles). Requests then wait for the mint's one writer, which takes every request waiting
(up to :data:`MAX_GROUP_PRINTS` prints) into one event-log transaction under the log's head
lock: the requests are answered in arrival order against the run counters, allowances and
stored answers, every stamped print is appended as one event, and the projections are
written in the same transaction. One commit serves the whole group, so a busy mint spends
its time stamping rather than waiting for the disk.

Within a transaction, per request, through the kernel's answered-requests layer
(``services.kernel.answered``): a replay is answered from the stored answer (a request id
reused for another body is refused); otherwise the request must be fresh and within the key's
daily allowance, and each print takes the next serial of its finish's range (standard, then
gilt, then holofoil, as published), certified to the owner with its event index; an exhausted
run or a used-up allowance refuses that print alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ledger.address import address_of
from ledger.api.mint import ITEMS, Allowance, Item, Refused, StampAnswer, Stamped
from ledger.certificates import PrintCertificate
from ledger.errors import (
    AllowanceExhausted,
    InsufficientWork,
    LedgerError,
    RequestIdReused,
    RunExhaustedError,
    SizeLimitError,
    StaleRequest,
    UnknownTitle,
)
from ledger.events import PrintStamped
from ledger.keys import PublicKey
from ledger.leaf import NewEvent
from ledger.manifest import LeagueManifest
from ledger.print_runs import PrintRun, RunFinish, serial_for
from ledger.requests import StampRequest
from ledger.work import challenge, meets, work_per_print
from services.eventlog import StoreTransaction
from services.http.problems import problem_of
from services.kernel import answered
from services.kernel.answered import Answers, Quota, Stored, Words, resets_at
from services.kernel.writer import GroupWriter, Locked, run_group
from services.mint import tables
from services.mint.mint import Mint
from services.mint.projection import PROJECTION, MintChanges, MintProjection

#: How far a request's signing time may be from the mint's clock, either way (seconds).
MAX_CLOCK_SKEW = answered.MAX_CLOCK_SKEW
#: Most prints drawn in one transaction; requests beyond wait for the next one.
MAX_GROUP_PRINTS = 1000
#: Most prints waiting for the writer; a request beyond is refused as overloaded (503 with
#: Retry-After) rather than queued without bound.
MAX_WAITING_PRINTS = 4 * MAX_GROUP_PRINTS
#: Refusals decided before a request writes anything: they fail that request alone.
REFUSALS = (RequestIdReused, StaleRequest, AllowanceExhausted)


@dataclass(frozen=True, slots=True)
class Presented:
    """A stamp request that passed every check needing no database."""

    request: StampRequest
    address: str
    runs: tuple[PrintRun, ...]
    hash: bytes
    #: What the request's proof of work is bound to (``ledger.work.challenge``).
    bound: bytes

    @property
    def owner(self) -> str:
        return self.request.owner

    @property
    def id_key(self) -> tuple[str, str]:
        return (self.request.owner, self.request.request_id)


def present(mint: Mint, request: StampRequest) -> Presented:
    """Check the league, the owner's signature, the batch size and the titles."""
    manifest = mint.manifest
    manifest.check_addressed("mint", "the request", request.league, request.manifest)
    owner = PublicKey.from_text(request.owner)
    request.verify(owner)
    limit = manifest.policies.stamp_batch_limit
    if len(request.prints) > limit:
        raise SizeLimitError(
            f"a stamp request presents at most {limit} prints, not {len(request.prints)}"
        )
    runs = []
    for index, order in enumerate(request.prints):
        run = manifest.print_runs.by_serial_title.get(order.title.upper())
        if run is None or run.title != order.title:
            raise UnknownTitle(
                f"prints.{index}.title: the league prints no title {order.title!r} "
                f"(titles are spelled as printed, e.g. Model-A)"
            )
        runs.append(run)
    bound = challenge(request.to_wire())
    base = manifest.policies.stamp_work
    for index, nonce in enumerate(request.work):
        # Every print costs at least the base price: a request without it never queues.
        if not meets(bound, index, nonce, base):
            raise InsufficientWork(
                f"work.{index}: the nonce is not worth the {base} expected hashes a print "
                f"costs at least (ledger.work; the census gives each run's price)"
            )
    return Presented(request, address_of(owner), tuple(runs), request.hash(), bound)


#: How the mint's refusals of a stamp request name it (``services.kernel.answered``).
WORDS = Words(
    request="request",
    clock="the mint's clock",
    spent="stamped its {per_day} prints",
    reopens="the allowance resets",
)


def allowance_of(manifest: LeagueManifest, used: int, day: date) -> Allowance:
    """The published daily allowance with ``used`` of it gone on ``day`` (UTC)."""
    per_day = manifest.policies.stamp_allowance_per_day
    return Allowance(
        per_day=per_day,
        used_today=used,
        remaining_today=max(0, per_day - used),
        day=day.isoformat(),
        resets_at=resets_at(day),
    )


@dataclass
class StampDecision:
    """One stamping transaction's decision (the kernel's ``Decision``): each request
    answered in memory against the state read under the lock, the prints it draws appended
    as events and projected, and its answer kept for replays."""

    mint: Mint
    now: datetime
    next_seq: int
    stamped: dict[tuple[str, str], int]
    #: The answered requests: replays, id reuse and freshness (the kernel's layer).
    answers: Answers[Any]
    #: Each key's prints stamped today against the daily allowance.
    quota: Quota
    events: list[NewEvent] = field(default_factory=list)
    #: What the events add to the projection (``MintProjection.stamped``, as a rebuild would).
    changes: MintChanges = field(default_factory=MintChanges)

    @property
    def day(self) -> date:
        return self.now.date()

    def answer(self, presented: Presented) -> StampAnswer:
        """Answer one request, or raise one of :data:`REFUSALS` having changed nothing."""
        request = presented.request
        prior = self.answers.prior(presented.id_key, presented.hash)
        if isinstance(prior, Stored):
            return self._answer(request, ITEMS.validate_python(prior.answer), replayed=True)
        self.answers.check_fresh(request.time)
        self.quota.check(presented.owner)
        items = [
            self._draw(presented, index, order.finish, run)
            for index, (order, run) in enumerate(zip(request.prints, presented.runs, strict=True))
        ]
        self.answers.keep(presented.id_key, presented.hash, ITEMS.dump_python(items, mode="json"))
        return self._answer(request, items, replayed=False)

    def _draw(self, presented: Presented, index: int, finish: RunFinish, run: PrintRun) -> Item:
        key = (run.title, finish)
        size = run.size(finish)
        policies = self.mint.manifest.policies
        if self.stamped[key] >= size:
            return Refused(
                title=run.title,
                finish=finish,
                problem=problem_of(RunExhaustedError).slug,
                reason=f"the {finish} run of {run.title} is exhausted: all {size} are "
                f"stamped, and runs are never extended",
            )
        price = work_per_print(
            policies.stamp_work, policies.stamp_work_rise, size, self.stamped[key]
        )
        if not meets(presented.bound, index, presented.request.work[index], price):
            return Refused(
                title=run.title,
                finish=finish,
                problem=problem_of(InsufficientWork).slug,
                reason=f"the {finish} run of {run.title} has {size - self.stamped[key]} of "
                f"{size} left, so a print of it costs {price} expected hashes of work now; "
                f"solve again at that price",
            )
        per_day = policies.stamp_allowance_per_day
        if self.quota.left(presented.owner) == 0:
            return Refused(
                title=run.title,
                finish=finish,
                problem=problem_of(AllowanceExhausted).slug,
                reason=f"this key's allowance of {per_day} prints for {self.day.isoformat()} "
                f"(UTC) is used up; present it again tomorrow",
            )
        certificate = PrintCertificate.sign(
            self.mint.key,
            serial=serial_for(
                run.title, finish, self.stamped[key] + 1, self.mint.manifest.print_runs
            ),
            title=run.title,
            set=run.set,
            finish=finish,
            issued_to=presented.owner,
            issue=1,
            event=self.next_seq + len(self.events),
            manifest=self.mint.manifest_hash,
        )
        stamped = PrintStamped(certificate=certificate, request_id=presented.request.request_id)
        self.events.append(stamped.new_event(expected_version=0))
        MintProjection.stamped(self.changes, stamped, presented.address, self.now)
        self.stamped[key] += 1
        self.quota.spend(presented.owner, 1)
        return Stamped(title=run.title, finish=finish, certificate=certificate)

    def _answer(self, request: StampRequest, items: list[Item], *, replayed: bool) -> StampAnswer:
        used = self.quota.used_by(request.owner)
        return StampAnswer(
            request_id=request.request_id,
            replayed=replayed,
            items=items,
            allowance=allowance_of(self.mint.manifest, used, self.day),
        )


def answer_group(
    decision: StampDecision, group: Sequence[Presented]
) -> list[StampAnswer | LedgerError]:
    """Answer each request of ``group`` in order (CPU-bound: it signs every certificate)."""
    results: list[StampAnswer | LedgerError] = []
    for presented in group:
        try:
            results.append(decision.answer(presented))
        except REFUSALS as refusal:
            results.append(refusal)
    return results


async def stamp_group(mint: Mint, group: Sequence[Presented]) -> list[StampAnswer | LedgerError]:
    """Answer ``group`` in one transaction (the kernel's :func:`run_group`): an answer or a
    refusal per request, in order.

    The transaction's time (the database's) is the one clock: it decides freshness and the
    UTC day of allowances, and every event records it.
    """

    async def read(locked: Locked) -> tables.GroupState:
        return await tables.read_group(
            locked.tx,
            {run.title for presented in group for run in presented.runs},
            [presented.id_key for presented in group],
            locked.now,
            WORDS,
            mint.manifest.policies.stamp_allowance_per_day,
        )

    def decide(
        locked: Locked, state: tables.GroupState
    ) -> tuple[StampDecision, list[StampAnswer | LedgerError]]:
        decision = StampDecision(
            mint=mint,
            now=locked.now,
            next_seq=locked.next_seq,
            stamped=state.stamped,
            answers=state.answers,
            quota=state.quota,
        )
        return decision, answer_group(decision, group)

    async def record(tx: StoreTransaction, decision: StampDecision) -> None:
        await tables.REQUESTS.record(tx, decision.answers)

    return await run_group(mint.store, PROJECTION, read, decide, record)


class Stamper:
    """The mint's one writer (the kernel's :class:`GroupWriter`): checked requests wait here
    and are stamped in groups, in arrival order."""

    def __init__(self, mint: Mint) -> None:
        self.mint = mint
        self.writer: GroupWriter[Presented, StampAnswer] = GroupWriter(
            lambda group: stamp_group(mint, group),
            units=lambda presented: len(presented.runs),
            max_group=MAX_GROUP_PRINTS,
            max_waiting=MAX_WAITING_PRINTS,
            what="prints to be stamped",
        )

    async def stamp(self, request: StampRequest) -> StampAnswer:
        """Check ``request``, wait for its group's transaction, return its answer."""
        return await self.writer.submit(present(self.mint, request))

    async def close(self) -> None:
        """Let the writer finish the groups already waiting."""
        await self.writer.close()
