"""A feed is served in pages bounded by the bytes of their events' bodies, and the auditor
reads on from each page's ``next_after``: a feed of large events (an outsider can make a
purchase's events tens of KiB each, as often as the treasury rejects it) never grows a page
past what a reader takes, which made every ``league audit`` fail for good."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor import audit_url
from ledger.keys import SigningKey
from ledger.leaf import Event
from ledger.limits import MAX_ANSWER_BYTES, MAX_FEED_PAGE, MAX_FEED_PAGE_BYTES
from services.http import logs
from services.http.logs import within_page_bytes
from tests.harness.audit import published, stamp
from tests.harness.league import InProcessLeague
from tests.harness.served import init_league

#: The largest event body the log takes (docs/eventlog.md, "Limits on one event").
LARGEST_BODY = 64 * 1024


def event(seq: int, size: int) -> Event:
    return Event(
        seq=seq,
        stream=f"s/{seq}",
        stream_version=1,
        type="t",
        body={"pad": "x" * size},
        recorded_at=datetime.now(UTC),
        leaf_hash=b"\0" * 32,
        signature=b"\0" * 64,
    )


def test_a_page_of_the_largest_events_fits_a_readers_answer() -> None:
    """A full page of the largest bodies is cut after MAX_FEED_PAGE_BYTES of them, far under
    the readers' MAX_ANSWER_BYTES; small events fill the page; one event always goes out."""
    big = [event(seq, LARGEST_BODY) for seq in range(MAX_FEED_PAGE)]
    kept = within_page_bytes(big)
    assert 0 < len(kept) < MAX_FEED_PAGE
    assert len(kept) * (LARGEST_BODY + 1024) < MAX_ANSWER_BYTES
    assert sum(LARGEST_BODY for _ in kept) <= MAX_FEED_PAGE_BYTES
    small = [event(seq, 10) for seq in range(MAX_FEED_PAGE)]
    assert within_page_bytes(small) == small
    huge = [event(0, MAX_FEED_PAGE_BYTES + 1), event(1, 10)]
    assert within_page_bytes(huge) == huge[:1]


async def test_the_auditor_reads_on_from_each_pages_next_after(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served one event a page, a league's logs are still audited whole: every print
    counted (the auditor took a short page for the end of a log, or stepped by the count it
    asked for)."""
    env = init_league(tmp_path / "league", database_url)
    monkeypatch.setattr(logs, "MAX_FEED_PAGE_BYTES", 1)
    league = InProcessLeague(env)
    try:
        owner = SigningKey.generate()
        for title in ("Tally", "Pairing", "Tally"):
            await stamp(league.url, owner, title)
        await published(league.url, "mint", 3)
        outcome = await audit_url(league.url, tmp_path / "state", workers=1)
        assert outcome.report.prints == 3
    finally:
        league.stop()
