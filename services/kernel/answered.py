"""Answered requests: idempotency, id reuse, clock skew and daily quotas, once for every service.

A request a service answers on a key's behalf (the mint's stamps, the treasury's claims, the
mint's orders from the treasury, the treasury's purchases) carries an id the caller chose.
Under the log's lock, in the group's transaction, every such request meets the same checks
in the same order, written here once:

1. **Answered already?** The request id is looked up under its key. The same body (by its
   hash, compared in constant time) is a replay: it gets the answer kept, and changes
   nothing; another body under that id is refused (:class:`~ledger.errors.RequestIdReused`,
   409). A copy of a request decided earlier in the same transaction is a replay of that
   decision too, so a request sent twice at once is answered the same twice.
2. **Fresh?** A request signed more than the service's window from the transaction's time
   (the database's clock, the one clock) either way is refused
   (:class:`~ledger.errors.StaleRequest`, 422); a replay is answered however late.
3. **Within the key's day?** The key's use of the published daily quota, counted on the UTC
   day of the transaction's time: with none left the request is refused
   (:class:`~ledger.errors.AllowanceExhausted`, 429 with Retry-After until midnight UTC).

A service describes where it keeps its answers and counts its quota once
(:class:`RequestTables`), and each of its commands how its refusals name its requests
(:class:`Words`) and its freshness window; its group read selects both with its own state in
one statement (:meth:`RequestTables.columns`), which gives the transaction an :class:`Answers` and a
:class:`Quota`; its decision keeps each new answer (:meth:`Answers.keep`) and the group's
``record`` writes them (:meth:`RequestTables.record`). The quota's counts are the service's
projection (derived from its log, written with its events); :meth:`Quota.spend` only keeps
the transaction's own count as it decides. The refusals' problem types are the kernel's; their
words (what a request is called, whose clock) are the command's.

A purchase keeps no answer (its stream is its answer): it uses :func:`replayed` alone, over
the request hash its projection keeps.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Generic, TypeVar

import orjson

from ledger.errors import AllowanceExhausted, RequestIdReused, StaleRequest
from services.eventlog import StoreTransaction

#: How far a request's signing time may be from the service's clock, either way (seconds).
MAX_CLOCK_SKEW = 300

#: A request's identity: (the key it is answered for, the request id).
Key = tuple[str, str]
H = TypeVar("H")

_NAME = re.compile(r"[a-z_]+\.[a-z_]+")


@dataclass(frozen=True, slots=True)
class Words:
    """How a service's refusals name its requests and its quota."""

    #: What a request is called: "request", "claim", "order", "purchase".
    request: str
    #: What its id is called: "request id", "order id".
    id: str = "request id"
    #: Whose ids they are: one key's ("by this key"), or the service's only caller's ("").
    by: str = " by this key"
    #: Whose clock freshness is measured on: "the mint's clock".
    clock: str = "the service's clock"
    #: A day's quota used up, ``{per_day}`` its size: "stamped its {per_day} prints".
    spent: str = "used its {per_day}"
    #: When the quota comes back: "the allowance resets".
    reopens: str = "the quota resets"


def replayed(prior: bytes | None, digest: bytes, request_id: str, words: Words) -> bool:
    """Whether a request of hash ``digest`` under an id answered for ``prior`` (None: never)
    is a replay; :class:`RequestIdReused` when the id was answered for another body."""
    if prior is None:
        return False
    if not hmac.compare_digest(prior, digest):
        raise RequestIdReused(
            f"{words.id} {request_id!r} was already used{words.by} for another {words.request};"
            f" choose a new id for a new {words.request}"
        )
    return True


def resets_at(day: date) -> int:
    """When a quota of ``day`` (UTC) comes back: the next midnight UTC, in Unix seconds."""
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return int(midnight.timestamp())


@dataclass(frozen=True, slots=True)
class Stored:
    """An answer kept (by an earlier transaction, or earlier in this one): its JSON."""

    answer: Any


@dataclass(frozen=True, slots=True)
class Held(Generic[H]):
    """A request decided earlier in this transaction whose answer is still to be made: what
    the service decided for it (its copies are answered as replays of it)."""

    value: H


@dataclass
class Answers(Generic[H]):
    """One transaction's answered requests: those read under the lock for its group, and
    those it answers, in order."""

    words: Words
    #: The transaction's time (UTC).
    now: datetime
    #: The window of :meth:`check_fresh`, in seconds either way.
    max_skew: int
    #: Answered requests by key: the request's hash and its answer (or what was decided).
    found: dict[Key, tuple[bytes, Stored | Held[H]]]
    #: The answers this transaction keeps: (key, request id, request hash, answer JSON text).
    kept: list[tuple[str, str, bytes, str]] = field(default_factory=list)

    def prior(self, key: Key, digest: bytes) -> Stored | Held[H] | None:
        """The answer to a request answered before under ``key`` (None: a new request);
        :class:`RequestIdReused` for another body under its id."""
        found = self.found.get(key)
        if found is None or not replayed(found[0], digest, key[1], self.words):
            return None
        return found[1]

    def check_fresh(self, signed_at: int) -> None:
        """:class:`StaleRequest` for a request signed outside the window of the time now."""
        if abs(self.now.timestamp() - signed_at) > self.max_skew:
            raise StaleRequest(
                f"the {self.words.request} was signed at {signed_at}, more than {self.max_skew}"
                f" s from {self.words.clock} ({int(self.now.timestamp())}); sign it again with "
                f"the current time"
            )

    def hold(self, key: Key, digest: bytes, value: H) -> None:
        """``key``'s request decided in this transaction, its answer still to be made:
        its copies after it are given :class:`Held` ``value``."""
        self.found[key] = (digest, Held(value))

    def keep(self, key: Key, digest: bytes, answer: Any) -> None:
        """``key``'s request answered ``answer`` (JSON-able): its copies later in the
        transaction, and replays after it commits, are given it."""
        self.found[key] = (digest, Stored(answer))
        # Kept as JSON text (jsonb): orjson writes it a dozen times faster than json.dumps.
        self.kept.append((key[0], key[1], digest, orjson.dumps(answer).decode()))


@dataclass
class Quota:
    """One transaction's daily quota: each key's use on the transaction's UTC day."""

    words: Words
    now: datetime
    per_day: int
    #: Used today by each key of the group (keys with none are absent).
    used: dict[str, int]

    @property
    def day(self) -> date:
        return self.now.date()

    @property
    def resets_at(self) -> int:
        return resets_at(self.day)

    def used_by(self, owner: str) -> int:
        return self.used.get(owner, 0)

    def left(self, owner: str) -> int:
        return max(0, self.per_day - self.used_by(owner))

    def check(self, owner: str) -> None:
        """:class:`AllowanceExhausted` (retry at midnight UTC) when ``owner`` has none left."""
        if self.left(owner) == 0:
            raise AllowanceExhausted(
                f"this key has {self.words.spent.format(per_day=self.per_day)} for "
                f"{self.day.isoformat()} (UTC); {self.words.reopens} at midnight UTC",
                retry_after=self.resets_at - int(self.now.timestamp()),
            )

    def spend(self, owner: str, n: int) -> None:
        """``owner`` uses ``n`` more today (the projection writes it with the events)."""
        self.used[owner] = self.used_by(owner) + n


@dataclass(frozen=True, slots=True)
class RequestTables:
    """Where a service keeps its answered requests and counts its daily quota.

    ``answers`` is a table ``(owner_key, request_id, request_hash, answer jsonb,
    answered_at)`` keyed by (owner_key, request_id): it records answers, not the log, and a
    rebuild of the projection leaves it alone. ``quota`` is a projection table
    ``(owner_key, day, <counted>)`` keyed by (owner_key, day)."""

    answers: str
    quota: str
    counted: str

    def __post_init__(self) -> None:
        for name in (self.answers, self.quota, f"t.{self.counted}"):
            if not _NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a schema-qualified table or a column name")

    def columns(self, first: int) -> str:
        """Two columns of a group's read (its SELECT list): the answers found and today's
        quota used, as JSON, from the parameters ``$first`` (the keys), ``$first + 1`` (the
        request ids), ``$first + 2`` (the distinct keys) and ``$first + 3`` (the day): the
        values :meth:`arguments` gives, in order."""
        k, i, o, d = first, first + 1, first + 2, first + 3
        return f"""
    (SELECT coalesce(json_agg(json_build_array(a.owner_key, a.request_id,
                                               encode(a.request_hash, 'hex'), a.answer)), '[]')
     FROM {self.answers} a JOIN unnest(${k}::text[], ${i}::text[]) AS w(owner_key, id)
     ON a.owner_key = w.owner_key AND a.request_id = w.id),
    (SELECT coalesce(json_agg(json_build_array(owner_key, {self.counted})), '[]')
     FROM {self.quota} WHERE owner_key = ANY(${o}::text[]) AND day = ${d})"""  # noqa: S608 (checked names)

    @staticmethod
    def arguments(keys: Sequence[Key], day: date) -> list[Any]:
        """The parameters of :meth:`columns` for a group of requests ``keys`` on ``day``."""
        return [[k for k, _ in keys], [i for _, i in keys], sorted({k for k, _ in keys}), day]

    @staticmethod
    def answers_of(
        found: str, now: datetime, words: Words, max_skew: int = MAX_CLOCK_SKEW
    ) -> Answers[Any]:
        """The transaction's :class:`Answers` from :meth:`columns`' first column, for
        requests called ``words`` fresh within ``max_skew`` seconds."""
        return Answers(
            words,
            now,
            max_skew,
            {
                (key, rid): (bytes.fromhex(digest), Stored(answer))
                for key, rid, digest, answer in orjson.loads(found)
            },
        )

    @staticmethod
    def quota_of(used: str, now: datetime, words: Words, per_day: int) -> Quota:
        """The transaction's :class:`Quota` of ``per_day`` a key from :meth:`columns`'
        second column."""
        return Quota(words, now, per_day, dict(orjson.loads(used)))

    async def record(self, tx: StoreTransaction, answers: Answers[Any]) -> None:
        """Keep the answers the transaction made (a replay reads them back)."""
        kept = answers.kept
        if kept:
            await tx.execute(
                f"INSERT INTO {self.answers} (owner_key, request_id, request_hash, answer,"  # noqa: S608
                " answered_at) SELECT w.k, w.i, w.h, w.a::jsonb, now()"
                " FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[]) AS w(k, i, h, a)",
                *[[row[n] for row in kept] for n in range(4)],
            )
