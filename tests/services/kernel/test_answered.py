"""The kernel's answered-requests layer (services/kernel/answered.py), which every service's
commands go through: a request id answered once (the same body replays its answer, another
body is refused 409), a window of clock skew either way, and a daily quota per key counted on
the UTC day of the transaction's time (docs/architecture.md §4)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger.errors import AllowanceExhausted, RequestIdReused, StaleRequest
from services.eventlog import PostgresEventStore
from services.http.problems import problem_of
from services.kernel.answered import (
    Answers,
    Held,
    Quota,
    RequestTables,
    Stored,
    Words,
    replayed,
    resets_at,
)
from tests.harness.eventlog import key, log, migrated_url, pool

__all__ = ["key", "log", "migrated_url", "pool"]  # fixtures

NOW = datetime(2026, 12, 4, 22, 0, 0, tzinfo=UTC)
WORDS = Words(
    request="claim",
    clock="the treasury's clock",
    spent="claimed its {per_day} marks",
    reopens="the faucet opens again",
)
ONE = ("owner-a", "req-0001")
DIGEST = bytes(32)
OTHER = bytes([1]) + bytes(31)


def answers(found: dict[tuple[str, str], tuple[bytes, Stored | Held[str]]]) -> Answers[str]:
    return Answers(WORDS, NOW, 300, found)


def test_an_id_answered_replays_for_the_same_body_and_is_refused_for_another() -> None:
    """The same request (by hash) under an answered id gets the answer kept; another body
    under it is 409 request-id-reused naming the id; an id never answered is new."""
    book = answers({ONE: (DIGEST, Stored({"marks": 30}))})
    assert book.prior(ONE, DIGEST) == Stored({"marks": 30})
    with pytest.raises(RequestIdReused) as reused:
        book.prior(ONE, OTHER)
    assert problem_of(RequestIdReused) == ("request-id-reused", 409)
    assert "'req-0001' was already used by this key for another claim" in str(reused.value)
    assert book.prior(("owner-b", "req-0001"), DIGEST) is None  # ids are per key
    assert replayed(None, DIGEST, "p-1", WORDS) is False
    assert replayed(DIGEST, DIGEST, "p-1", WORDS) is True
    with pytest.raises(RequestIdReused):
        replayed(DIGEST, OTHER, "p-1", WORDS)


def test_a_copy_in_the_same_transaction_replays_what_it_was_given() -> None:
    """A request decided earlier in the transaction holds its id: a copy is given what was
    held, then the answer kept; another body under it is refused; what is kept is recorded."""
    book = answers({})
    book.hold(ONE, DIGEST, "grant")
    assert book.prior(ONE, DIGEST) == Held("grant")
    with pytest.raises(RequestIdReused):
        book.prior(ONE, OTHER)
    book.keep(ONE, DIGEST, {"marks": 30})
    assert book.prior(ONE, DIGEST) == Stored({"marks": 30})
    assert book.kept == [("owner-a", "req-0001", DIGEST, '{"marks":30}')]


def test_a_request_outside_the_clock_window_is_stale_either_way() -> None:
    """Signed within the window of the transaction's time (its edges included) a request is
    fresh; a second beyond, before or after, it is 422 stale-request naming the clock."""
    book = answers({})
    now = int(NOW.timestamp())
    for signed in (now - 300, now, now + 300):
        book.check_fresh(signed)
    for signed in (now - 301, now + 301):
        with pytest.raises(StaleRequest) as stale:
            book.check_fresh(signed)
        assert "more than 300 s from the treasury's clock" in str(stale.value)
    assert problem_of(StaleRequest) == ("stale-request", 422)


def test_a_key_with_its_day_used_up_is_refused_until_midnight_utc() -> None:
    """A key's quota counts what it used on the UTC day of the transaction; with nothing
    left it is 429 allowance-exhausted, retried at the next midnight UTC; other keys and a
    key with some left pass, and what the transaction spends counts at once."""
    quota = Quota(WORDS, NOW, 100, {"owner-a": 70})
    assert (quota.used_by("owner-a"), quota.left("owner-a"), quota.left("owner-b")) == (70, 30, 100)
    quota.check("owner-a")
    quota.spend("owner-a", 30)
    with pytest.raises(AllowanceExhausted) as exhausted:
        quota.check("owner-a")
    assert exhausted.value.retry_after == 2 * 3600  # 22:00 UTC to midnight
    assert str(exhausted.value).startswith(
        "this key has claimed its 100 marks for 2026-12-04 (UTC); the faucet opens again"
    )
    assert problem_of(AllowanceExhausted) == ("allowance-exhausted", 429)
    quota.check("owner-b")
    assert resets_at(NOW.date()) == int(datetime(2026, 12, 5, tzinfo=UTC).timestamp())


def test_table_names_are_checked() -> None:
    """The tables' names go into SQL: anything but schema.table and a column is refused."""
    with pytest.raises(ValueError, match="schema-qualified"):
        RequestTables("mint.stamp_requests; DROP TABLE x", "mint.allowances", "stamped")
    with pytest.raises(ValueError, match="schema-qualified"):
        RequestTables("mint.stamp_requests", "mint.allowances", "stamped, 1")


async def test_answers_kept_are_read_back_with_the_quota_in_one_statement(
    log: PostgresEventStore,
) -> None:
    """Answers a transaction records are found by a later one's read (only those of the
    keys and ids it asks for), with each key's use of the day from the quota table; a
    transaction that keeps nothing writes nothing."""
    tables = RequestTables("mint.stamp_requests", "mint.allowances", "stamped")
    statement = f"SELECT {tables.columns(1)}"
    async with log.transaction() as tx:
        await tx.lock()
        row = await tx.fetchrow(statement, *tables.arguments([ONE], NOW.date()))
        assert row is not None
        first = tables.answers_of(row[0], NOW, WORDS)
        assert first.prior(ONE, DIGEST) is None
        first.keep(ONE, DIGEST, [{"title": "Tally"}])
        first.keep(("owner-b", "req-0002"), OTHER, [])
        await tables.record(tx, first)
        await tables.record(tx, answers({}))  # nothing kept: nothing written
        await tx.execute(
            "INSERT INTO mint.allowances (owner_key, day, stamped) VALUES ($1, $2, 7), ($1, $3, 9)",
            "owner-a",
            NOW.date(),
            datetime(2026, 12, 3).date(),
        )
    async with log.transaction() as tx:
        await tx.lock()
        row = await tx.fetchrow(statement, *tables.arguments([ONE], NOW.date()))
        assert row is not None
        later = tables.answers_of(row[0], NOW, WORDS)
        quota = tables.quota_of(row[1], NOW, WORDS, 10)
    assert later.found == {ONE: (DIGEST, Stored([{"title": "Tally"}]))}
    with pytest.raises(RequestIdReused):
        later.prior(ONE, OTHER)
    assert (quota.used_by("owner-a"), quota.left("owner-a")) == (7, 3)
    assert await log.fetchval("SELECT count(*) FROM mint.stamp_requests") == 2
