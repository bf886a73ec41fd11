"""The move clock's sweep (docs/formats.md, "The move clock"): a leader-only task that abandons
every table whose clock has run out.

Every :data:`SWEEP_SECONDS` the log's leader (``services.kernel.leadership``) reads the tables
still in play whose last event is older than the shortest clock, and hands each to the writer
as an :class:`~services.tables.playing.Abandon`: under the log's lock the table's clock is
judged again (a move may have come in meanwhile) and, run out, a ``table-abandoned`` event
ends it without a verdict (L-19, L-31). Abandoning twice is impossible (the second finds the
table ended), so two leaders overlapping for a heartbeat cost a refusal, never an event.
"""

from __future__ import annotations

import asyncio
import logging

from ledger.errors import LedgerError
from ledger.tables import DUEL_VENUES
from services.tables.playing import Tables, Writer, swept_after

log = logging.getLogger(__name__)

#: Seconds between two sweeps.
SWEEP_SECONDS = 5.0
#: Most tables abandoned by one sweep (the next sweep takes the rest).
MAX_SWEEP = 256

#: Tables in play past their clock: ``$1`` the cut-off of a move's clock, ``$2`` a join's.
OVERDUE = """
SELECT table_id FROM tables.tables
WHERE status IN ('opened', 'joined', 'dealt')
  AND last_at < GREATEST($1::timestamptz, $2::timestamptz)
  AND (last_at < $2::timestamptz OR status <> 'opened' OR NOT venue = ANY($3::text[]))
ORDER BY last_at LIMIT $4
"""


class Sweeper:
    """The leader's sweep of tables whose move clock ran out."""

    def __init__(self, tables: Tables, writer: Writer) -> None:
        self.tables = tables
        self.writer = writer
        #: Tables abandoned by this worker (a figure for the operator and tests).
        self.abandoned = 0

    async def run(self) -> None:
        """Sweep every :data:`SWEEP_SECONDS` until cancelled."""
        while True:
            try:
                await self.sweep()
            except (OSError, LedgerError) as exc:
                log.warning("the move clock's sweep failed: %s", exc)
            await asyncio.sleep(SWEEP_SECONDS)

    async def sweep(self) -> int:
        """Abandon the tables whose clock has run out now; how many."""
        now = await self.tables.store.now()
        policies = self.tables.manifest.policies
        rows = await self.tables.store.fetch(
            OVERDUE,
            now - swept_after(policies, "move"),
            now - swept_after(policies, "join"),
            list(DUEL_VENUES),
            MAX_SWEEP,
        )
        # All at once: the writer takes them into one group (one transaction), not one each.
        outcomes = await asyncio.gather(
            *(self.writer.abandon(table) for (table,) in rows), return_exceptions=True
        )
        done = 0
        for outcome in outcomes:
            if isinstance(outcome, LedgerError):  # a move came in meanwhile, or it ended
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            done += 1
        self.abandoned += done
        if done:
            log.info("the move clock abandoned %d tables", done)
        return done
