"""Stamping: presented prints become certificates, drawn from the fixed runs (Book V.4).

Everything that needs no database is checked first (league, signature, batch size, titles).
Then one event-log transaction, under the log's head lock: a replay is answered from the
stored answer; otherwise the request must be fresh, each print takes the next serial of its
finish's range (standard, then gilt, then holofoil, as published), is certified to the owner
with its event index, and is appended as one event; the run counters, owned counts, daily
allowance and the answer itself are written in the same transaction.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ledger.address import address_of
from ledger.certificates import PrintCertificate
from ledger.errors import LedgerError, RunExhaustedError, SizeLimitError
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import PrintRun, RunFinish
from services.eventlog import EventLog, NewEvent, Transaction
from services.mint import projections
from services.mint.errors import (
    AllowanceExhausted,
    RequestIdReused,
    StaleRequest,
    UnknownTitle,
    WrongLeague,
)
from services.mint.wire import (
    ITEMS,
    Allowance,
    Item,
    Refused,
    StampAnswer,
    Stamped,
    StampRequest,
)

#: How far a request's signing time may be from the mint's clock, either way (seconds).
MAX_CLOCK_SKEW = 300
#: The event type of a stamped print; its stream is ``print/<serial>``.
STAMPED = "print-stamped"


@dataclass(frozen=True, slots=True)
class Mint:
    """The mint of one league: its manifest, its key and its event log."""

    manifest: LeagueManifest
    key: SigningKey
    log: EventLog

    @property
    def manifest_hash(self) -> str:
        return self.manifest.hash_text()


def allowance_of(manifest: LeagueManifest, used: int, day: date) -> Allowance:
    per_day = manifest.policies.stamp_allowance_per_day
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return Allowance(
        per_day=per_day,
        used_today=used,
        remaining_today=max(0, per_day - used),
        day=day.isoformat(),
        resets_at=int(midnight.timestamp()),
    )


def _check_presentable(mint: Mint, request: StampRequest) -> tuple[PublicKey, list[PrintRun]]:
    """The checks that need no database: league, signature, batch size, titles."""
    manifest = mint.manifest
    if request.league != manifest.league or not hmac.compare_digest(
        request.manifest, mint.manifest_hash
    ):
        raise WrongLeague(
            f"this mint serves league {manifest.league} under manifest {mint.manifest_hash}; "
            f"the request is for league {request.league} under manifest {request.manifest}"
        )
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
    return owner, runs


async def stamp(mint: Mint, request: StampRequest, now: datetime) -> StampAnswer:
    """Answer ``request``: certificates for what can be stamped, a reason for the rest."""
    owner, runs = _check_presentable(mint, request)
    request_hash = request.hash()
    day = now.astimezone(UTC).date()
    async with mint.log.transaction() as tx:
        next_seq = await tx.conn.fetchval(projections.NEXT_SEQ)
        prior = await projections.prior_request(tx.conn, request.owner, request.request_id)
        if prior is not None:
            stored_hash, stored_items = prior
            if not hmac.compare_digest(stored_hash, request_hash):
                raise RequestIdReused(
                    f"request id {request.request_id!r} was already used by this key for "
                    f"another request; choose a new id for a new request"
                )
            used = await projections.used_allowance(tx.conn, request.owner, day)
            items = ITEMS.validate_python(stored_items)
            return _answer(mint, request, items, used, day, replayed=True)
        if abs(now.timestamp() - request.time) > MAX_CLOCK_SKEW:
            raise StaleRequest(
                f"the request was signed at {request.time}, more than {MAX_CLOCK_SKEW} s from "
                f"the mint's clock ({int(now.timestamp())}); sign it again with the current time"
            )
        used = await projections.used_allowance(tx.conn, request.owner, day)
        if used >= mint.manifest.policies.stamp_allowance_per_day:
            allowance = allowance_of(mint.manifest, used, day)
            raise AllowanceExhausted(
                f"this key has stamped its {allowance.per_day} prints for {allowance.day} "
                f"(UTC); the allowance resets at {allowance.resets_at} (Unix seconds)"
            )
        items = await _draw(mint, tx, request, owner, runs, next_seq, used, day)
        await projections.record_request(
            tx.conn,
            owner_key=request.owner,
            request_id=request.request_id,
            request_hash=request_hash,
            items=ITEMS.dump_python(items, mode="json"),
        )
        used += sum(1 for item in items if isinstance(item, Stamped))
    return _answer(mint, request, items, used, day, replayed=False)


async def _draw(
    mint: Mint,
    tx: Transaction,
    request: StampRequest,
    owner: PublicKey,
    runs: list[PrintRun],
    next_seq: int,
    used: int,
    day: date,
) -> list[Item]:
    """Allocate serials, certify, append; return the answer's items in presented order."""
    manifest = mint.manifest
    remaining = manifest.policies.stamp_allowance_per_day - used
    counters = await projections.runs_of(tx.conn, {run.title for run in runs})
    drawn = {key: row.stamped for key, row in counters.items()}
    items: list[Item] = []
    events: list[NewEvent] = []
    stamped: list[tuple[str, str]] = []
    for order, run in zip(request.prints, runs, strict=True):
        key = (run.title, order.finish)
        row = counters[key]
        if drawn[key] >= row.size:
            reason = (
                f"the {order.finish} run of {run.title} is exhausted: all {row.size} are "
                f"stamped, and runs are never extended"
            )
            items.append(_refused(run.title, order.finish, RunExhaustedError, reason))
            continue
        if remaining <= 0:
            reason = (
                f"this key's allowance of {manifest.policies.stamp_allowance_per_day} prints "
                f"for {day.isoformat()} (UTC) is used up; present it again tomorrow"
            )
            items.append(_refused(run.title, order.finish, AllowanceExhausted, reason))
            continue
        number = row.first_number + drawn[key]
        drawn[key] += 1
        remaining -= 1
        certificate = PrintCertificate.sign(
            mint.key,
            serial=f"CZ-{run.title.upper()}-{number:04d}",
            title=run.title,
            set=run.set,
            finish=order.finish,
            issued_to=request.owner,
            issue=1,
            event=next_seq + len(events),
            manifest=mint.manifest_hash,
        )
        events.append(
            NewEvent(
                stream=f"print/{certificate.serial}",
                expected_version=0,
                type=STAMPED,
                body={"certificate": certificate.to_wire(), "request_id": request.request_id},
            )
        )
        stamped.append(key)
        items.append(Stamped(title=run.title, finish=order.finish, certificate=certificate))
    appended = await tx.append_batch(events)
    if appended and appended[0].seq != next_seq:
        raise RuntimeError(f"event store appended at seq {appended[0].seq}, expected {next_seq}")
    await projections.record_stamps(
        tx.conn, owner_key=request.owner, address=address_of(owner), day=day, stamped=stamped
    )
    return items


def _refused(title: str, finish: RunFinish, error: type[LedgerError], reason: str) -> Refused:
    return Refused(title=title, finish=finish, problem=error.problem_type, reason=reason)


def _answer(
    mint: Mint,
    request: StampRequest,
    items: list[Item],
    used: int,
    day: date,
    *,
    replayed: bool,
) -> StampAnswer:
    return StampAnswer(
        request_id=request.request_id,
        replayed=replayed,
        items=items,
        allowance=allowance_of(mint.manifest, used, day),
    )
