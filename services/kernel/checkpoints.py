"""The background checkpointer: each service signs its log's checkpoints on a published beat.

Readers never sign: ``GET /<service>/checkpoint`` and everything that quotes a checkpoint
serve the latest stored one. The checkpointer signs one as the service starts (so there is
always one to serve), then whenever the log has grown, at most every
``checkpoint_interval_ms`` and at once when ``checkpoint_max_pending`` events wait (both
published in the manifest's policies), in the spirit of Tessera's integration interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from ledger.checkpoint import Checkpoint
from ledger.errors import LedgerError
from ledger.manifest import Policies
from services.eventlog import EventStore

log = logging.getLogger(__name__)


class Checkpointer:
    """Signs ``store``'s checkpoints from one background task."""

    def __init__(self, store: EventStore, policies: Policies) -> None:
        self.store = store
        self.interval = policies.checkpoint_interval_ms / 1000
        self.max_pending = policies.checkpoint_max_pending
        self._pending = 0
        self._due = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        store.on_commit(self._appended)

    def _appended(self, count: int) -> None:
        self._pending += count
        if self._pending >= self.max_pending:
            self._due.set()

    async def sign(self) -> Checkpoint:
        """Sign a checkpoint of the head now (the stored one when the head has not moved)."""
        self._pending = 0
        self._due.clear()
        return await self.store.sign_checkpoint()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._due.wait(), self.interval)
            try:
                await self.sign()
            except LedgerError as exc:
                # A database that is down now may be back on the next beat; a refused
                # checkpoint (a forked log) stays in the operator's log until it is fixed.
                log.warning("%s: no checkpoint signed: %s", self.store.origin, exc.diagnostics())

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Checkpointer]:
        """Sign one checkpoint now, then keep signing until the block exits."""
        await self.sign()
        self._task = asyncio.create_task(self._run(), name=f"checkpointer {self.store.origin}")
        try:
            yield self
        finally:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
