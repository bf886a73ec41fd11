"""The background checkpointer: each service signs its log's checkpoints on a published beat.

Readers never sign: ``GET /<service>/checkpoint`` and everything that quotes a checkpoint
serve the latest stored one. The checkpointer signs one as the service starts (so there is
always one to serve), then whenever the log has grown, at most every
``checkpoint_interval_ms`` and at once when ``checkpoint_max_pending`` events wait (both
published in the manifest's policies), in the spirit of Tessera's integration interval; at
once too when a receipt needs one, or a follower waits for an event not yet checkpointed
(it rings the log's wanted channel: services/eventlog/signals.py).
Where several workers serve one log, the interval's beat is the leader's
(:mod:`services.kernel.leadership`); every worker still signs at once when its own appends
reach ``checkpoint_max_pending`` or a receipt needs a checkpoint covering its event.

**No silent forks** (docs/architecture.md §4). Each new checkpoint is also written to a file
outside the database (:class:`CheckpointFile`, in the league home) before it is committed, so before
any reader can see it. A service refuses to start on a database whose log is not a
consistent extension of that file's checkpoint: an older backup restored, or another
database, would otherwise issue serials already issued and sign a root at a size it has
signed differently before.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

from ledger.checkpoint import Checkpoint
from ledger.encoding import encode_b64
from ledger.errors import LedgerError
from ledger.feed import signed_checkpoint
from ledger.keys import PublicKey
from ledger.manifest import Policies
from ledger.words import plural
from services.eventlog import EventStore
from services.eventlog.signals import CHECKPOINTS, wanted_channel
from services.kernel.errors import LeagueError
from services.kernel.leadership import Leadership

log = logging.getLogger(__name__)


class ForkedDatabase(LeagueError):
    """A database whose log does not extend the checkpoint the service signed last."""


class CheckpointFile:
    """The last checkpoint a service signed, kept outside its database."""

    def __init__(self, path: Path, origin: str, key: PublicKey) -> None:
        self.path = path
        self.origin = origin
        self.key = key

    def read(self) -> Checkpoint | None:
        """The kept checkpoint (its signature checked), or None before the first."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return signed_checkpoint(text, self.origin, self.key)

    def write(self, checkpoint: Checkpoint) -> None:
        """Replace the kept checkpoint atomically and durably (a crash leaves the old one
        or the new one, never a torn file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        with partial.open("w", encoding="utf-8") as handle:
            handle.write(str(checkpoint))
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    async def check(self, store: EventStore) -> None:
        """Raise :class:`ForkedDatabase` unless ``store``'s log extends the kept checkpoint."""
        kept = self.read()
        if kept is None:
            return
        head = await store.head()
        if head.size < kept.size:
            raise ForkedDatabase(
                f"the {store.schema} database holds {plural(head.size, 'event')}, but the service "
                f"signed a checkpoint of size {kept.size} (root {encode_b64(kept.root)}) kept "
                f"in {self.path}: this database is older than what was published; restore "
                f"the newest backup, never an older one (docs/operations.md)"
            )
        root = await store.root(kept.size)
        if not hmac.compare_digest(root, kept.root):
            raise ForkedDatabase(
                f"the {store.schema} database's log has root {encode_b64(root)} at size "
                f"{kept.size}, but the service signed root {encode_b64(kept.root)} at that "
                f"size (kept in {self.path}): this database holds another history"
            )


class Checkpointer:
    """Signs ``store``'s checkpoints from one background task."""

    def __init__(
        self,
        store: EventStore,
        policies: Policies,
        kept: CheckpointFile | None = None,
        *,
        leadership: Leadership | None = None,
    ) -> None:
        self.store = store
        self.kept = kept
        #: Whose beat this is: only the log's leader signs on the published interval (every
        #: worker still signs at once when a receipt needs a checkpoint covering its event).
        #: None: this process alone serves the log.
        self.leadership = leadership
        self.interval = policies.checkpoint_interval_ms / 1000
        self.max_pending = policies.checkpoint_max_pending
        self._pending = 0
        self._due = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: The checkpoint signed last, and an event set (then replaced) at each new one.
        self.latest: Checkpoint | None = None
        self._signed = asyncio.Event()
        store.on_commit(self._appended)

    def _appended(self, count: int) -> None:
        self._pending += count
        if self._pending >= self.max_pending:
            self._due.set()

    async def sign(self) -> Checkpoint:
        """Sign a checkpoint of the head now (the stored one when the head has not moved)."""
        self._pending = 0
        self._due.clear()
        keep = None if self.kept is None else self.kept.write
        checkpoint = await self.store.sign_checkpoint(before_publishing=keep)
        self.latest = checkpoint
        signed, self._signed = self._signed, asyncio.Event()
        signed.set()
        return checkpoint

    async def covering(self, size: int, within: float) -> Checkpoint | None:
        """The first checkpoint of at least ``size`` leaves, asking the background task to
        sign one now if none is; None if it has not ``within`` seconds (the database
        down, say). A receipt needs a checkpoint that covers its event."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while self.latest is None or self.latest.size < size:
            remaining = deadline - loop.time()
            if remaining <= 0 or self._task is None:
                return None
            self._due.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._signed.wait(), remaining)
        return self.latest

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._due.wait(), self.interval)
            if not self._due.is_set() and not self._beats():
                continue
            try:
                await self.sign()
            except LedgerError as exc:
                # A database that is down now may be back on the next beat; a refused
                # checkpoint (a forked log) stays in the operator's log until it is fixed.
                log.warning("%s: no checkpoint signed: %s", self.store.origin, exc.diagnostics())

    def _beats(self) -> bool:
        """Whether this process signs on the interval: the log's leader does."""
        return self.leadership is None or self.leadership.leading

    def _wanted(self) -> None:
        """A follower waits for an event this log has not checkpointed yet: the leader signs
        one now (services/eventlog/signals.py)."""
        if self._beats():
            self._due.set()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Checkpointer]:
        """Check the database against the kept checkpoint, sign one checkpoint now, then keep
        signing until the block exits."""
        if self.kept is not None:
            await self.kept.check(self.store)
        await self.sign()
        self._task = asyncio.create_task(self._run(), name=f"checkpointer {self.store.origin}")
        wanted = wanted_channel(self.store.schema)
        unsubscribe = CHECKPOINTS.subscribe(wanted, self._wanted)
        try:
            async with self.store.relaying(wanted):
                yield self
        finally:
            unsubscribe()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
