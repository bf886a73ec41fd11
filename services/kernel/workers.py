"""Worker processes: ``league serve --workers N`` serves one app from N processes.

One process is one core: Python holds its interpreter lock while it parses requests, checks
signatures and proofs of work and serializes answers, which is most of a request's cost. So
the server binds its public socket (and the internal one) once, composes the app once (the
keys are unlocked once, a passphrase asked once), then forks N workers that each serve that
same app on the inherited sockets; the operating system hands each new connection to one of
them. The workers share nothing but the database:

- each log's appends are ordered by its head-row lock, whichever worker appends (the lock is
  the log's sequencer, and every group reads what it decides on under it);
- the work that must run once per log (the checkpointer's beat, witness submissions, the
  notary's following, the treasury's resumer) runs in the worker elected leader of that log
  (:mod:`services.kernel.leadership`), and moves to another worker when the leader dies;
- per-source rate limits are kept in the database (:class:`~services.kernel.ratelimit.
  SharedBuckets`), so spreading connections over the workers gains a source nothing.

This process (the supervisor) serves nothing itself. It starts a worker again when one dies
(a crash, a kill), and stops them all on SIGINT or SIGTERM, waiting for each to finish the
requests it holds. A worker that keeps dying as it starts (a database refusing the league,
say) is not started again and again: the supervisor stops the others and exits with failure.
What a worker held when it died is what a crash of a single server would lose: nothing
committed (its open transaction rolls back, its leadership passes on), and its clients ask
again (every protocol request is idempotent).

Forking needs no thread to be running in the supervisor when it forks: the embedded
database's supervisor thread is started after the first workers are (a worker started again
later is forked beside it; that thread only sleeps and runs ``pg_ctl``, and holds no lock a
worker could inherit taken).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field

from services.http.limits import BACKLOG

log = logging.getLogger(__name__)

#: A worker that dies within this many seconds of starting died starting.
STARTING = 10.0
#: Workers dying as they start, in a row, before the supervisor gives up.
MAX_FAILED_STARTS = 5
#: Seconds between two looks at the workers (a signal ends a look early).
LOOK = 0.2


def default_workers() -> int:
    """One worker per core (``league serve``'s default)."""
    return os.cpu_count() or 1


def public_listener(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (0 picks a free port), for the workers to
    share: bound before any of them starts, so the port is the same for all."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


@dataclass
class Workers:
    """Start ``count`` workers, each running ``serve(index)`` (its exit status) in a forked
    process; keep them running until SIGINT or SIGTERM."""

    count: int
    serve: Callable[[int], int]
    #: Entered in this process once the first workers are started, for the rest of the run
    #: (e.g. the embedded database's supervisor, whose thread must not exist at that fork).
    beside: Callable[[], AbstractContextManager[object]] = nullcontext
    #: Called once the signal handlers are in place and the workers started (so a signal
    #: sent the moment it has spoken stops everything cleanly).
    announce: Callable[[], None] = lambda: None
    #: Worker pid -> (its index, when it started).
    running: dict[int, tuple[int, float]] = field(default_factory=dict)
    #: Workers started again after dying.
    restarts: int = 0
    _stopping: bool = False

    def run(self) -> int:
        """Supervise until stopped; 0, or 1 when workers kept dying as they started."""
        previous = {
            signum: signal.signal(signum, self._stop)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            for index in range(self.count):
                self._start(index)
            self.announce()
            with self.beside():
                return self._watch()
        finally:
            self._stop(signal.SIGTERM, None)
            self._reap_all()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _start(self, index: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            status = 1
            try:
                for signum in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(signum, signal.SIG_DFL)
                status = self.serve(index)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        self.running[pid] = (index, time.monotonic())
        log.info("worker %d started (pid %d)", index, pid)

    def _watch(self) -> int:
        failed_starts = 0
        while self.running and not self._stopping:
            time.sleep(LOOK)
            for pid, (index, since) in list(self.running.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == 0:
                    continue
                del self.running[pid]
                if self._stopping:
                    continue
                code = os.waitstatus_to_exitcode(status)
                lived = time.monotonic() - since
                how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
                failed_starts = failed_starts + 1 if lived < STARTING and code != 0 else 0
                if failed_starts >= MAX_FAILED_STARTS:
                    print(f"league: worker {index} {how} as it started, {failed_starts} times "
                          f"in a row: stopping", file=sys.stderr, flush=True)
                    return 1
                log.error("worker %d (pid %d) %s after %.1f s: starting it again", index,
                          pid, how, lived)
                self.restarts += 1
                self._start(index)
        return 0

    def _stop(self, signum: int, frame: object) -> None:
        if not self._stopping:
            self._stopping = True
            if frame is not None:  # a signal, not the way out of run()
                print("stopping", file=sys.stderr, flush=True)
        for pid in list(self.running):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _reap_all(self) -> None:
        for pid in list(self.running):
            with suppress(ChildProcessError):
                os.waitpid(pid, 0)
            self.running.pop(pid, None)
