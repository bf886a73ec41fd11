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

This process (the supervisor) serves nothing itself. The first worker starts alone: if it
cannot (a database refusing the league, say), its one-line error is the server's and nothing
else starts. Once the league serves, the supervisor starts a worker again whenever one dies (a
crash, a kill; one that dies as it starts, the database down a moment, after a pause that
grows to ten seconds), and stops them all on SIGINT or SIGTERM, waiting for each to finish the
requests it holds.
What a worker held when it died is what a crash of a single server would lose: nothing
committed (its open transaction rolls back, its leadership passes on), and its clients ask
again (every protocol request is idempotent).

Forking needs no thread to be running in the supervisor when it forks: the embedded
database's supervisor thread is started after the first workers are (a worker started again
later is forked beside it; that thread only sleeps and runs ``pg_ctl``, and holds no lock a
worker could inherit taken).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field
from functools import partial

from services.http.limits import BACKLOG

log = logging.getLogger(__name__)

#: A worker that dies within this many seconds of starting died starting.
STARTING = 10.0
#: The wait before starting again a worker that died starting, doubling each time it does
#: so again, up to the cap (seconds).
RESTART_DELAY = 0.5
MAX_RESTART_DELAY = 10.0
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


#: Seconds the workers get to finish after SIGTERM before they are killed: the server's
#: shutdown grace (services/http/limits.py) and time to close its pools.
STOP_GRACE = 30.0
#: Linux's ``prctl`` option asking for a signal when the parent dies.
PR_SET_PDEATHSIG = 1

#: A worker's body: serve, calling ``ready()`` once serving; its exit status.
Serve = Callable[[int, Callable[[], None]], int]


def _die_with(supervisor: int) -> None:
    """Ask the kernel to send this worker SIGTERM when its supervisor dies (Linux), so a
    supervisor killed outright leaves no worker serving on its own; a worker whose supervisor
    is already gone exits now. The supervisor's deadline is kept too: a worker orphaned and
    still running :data:`STOP_GRACE` seconds later (a shutdown that hangs) is killed by its
    own watch (:func:`watch_supervisor`), as the supervisor would have killed it."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != supervisor:
        raise SystemExit(1)  # the worker's way out (services/kernel/workers.py _start)
    watch_supervisor(supervisor, STOP_GRACE)


def watch_supervisor(supervisor: int, grace: float, every: float = 0.5) -> threading.Thread:
    """A daemon thread that, once this process's parent is no longer ``supervisor``, gives it
    ``grace`` seconds to finish, then kills it (SIGKILL: nothing left to wait for)."""

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(every)
        time.sleep(grace)
        os.kill(os.getpid(), signal.SIGKILL)

    thread = threading.Thread(target=watch, name="supervisor-watch", daemon=True)
    thread.start()
    return thread


@dataclass
class Workers:
    """Start ``count`` workers, each running ``serve(index, ready)`` in a forked process;
    keep them running until SIGINT or SIGTERM.

    The first worker starts alone: until it says it serves (``ready``), nothing is announced,
    and if it dies first, its own error (one line, written by ``serve``) is the supervisor's
    failure, with its exit status: a league that cannot start fails once, not in a loop."""

    count: int
    serve: Serve
    #: Entered in this process once the first workers are started, for the rest of the run
    #: (e.g. the embedded database's supervisor, whose thread must not exist at that fork).
    beside: Callable[[], AbstractContextManager[object]] = nullcontext
    #: Called once the first worker serves (so what it announces is true, and a signal sent
    #: the moment it has spoken stops everything cleanly).
    announce: Callable[[], None] = lambda: None
    #: Worker pid -> (its index, when it started).
    running: dict[int, tuple[int, float]] = field(default_factory=dict)
    #: Workers started again after dying.
    restarts: int = 0
    _stopping: bool = False

    def run(self) -> int:
        """Supervise until stopped: 0, or the first worker's status when it could not
        start."""
        previous = {
            signum: signal.signal(signum, self._stop) for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            failed = self._start_first()
            if failed is not None:
                return 0 if self._stopping else failed
            for index in range(1, self.count):
                os.close(self._start(index))
            self.announce()
            with self.beside():
                return self._watch()
        finally:
            self._stop(signal.SIGTERM, None)
            self._reap_all()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _start_first(self) -> int | None:
        """Start worker 0 and wait until it serves (None) or dies (its exit status)."""
        said = self._start(0)
        try:
            answer = os.read(said, 1)
        finally:
            os.close(said)
        if answer:
            return None
        (pid,) = self.running
        _, status = os.waitpid(pid, 0)
        del self.running[pid]
        code = os.waitstatus_to_exitcode(status)
        return code if code > 0 else 1

    def _start(self, index: int) -> int:
        """Fork worker ``index``; the read end of the pipe it says ``ready`` on."""
        sys.stdout.flush()
        sys.stderr.flush()
        read, write = os.pipe()
        supervisor = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker
            status = 1
            try:
                os.close(read)
                _die_with(supervisor)
                for signum in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(signum, signal.SIG_DFL)
                status = self.serve(index, partial(_say_ready, write))
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        os.close(write)
        self.running[pid] = (index, time.monotonic())
        log.info("worker %d started (pid %d)", index, pid)
        return read

    def _watch(self) -> int:
        """Start again each worker that dies, until stopped. One that dies as it starts (the
        database down a moment) waits longer each time before the next start, up to
        :data:`MAX_RESTART_DELAY`: the league is serving, so it is never given up on."""
        failures: dict[int, int] = {}
        due: dict[int, float] = {}  # worker index -> when to start it again
        while not self._stopping:
            time.sleep(LOOK)
            now = time.monotonic()
            for pid, (index, since) in list(self.running.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done == 0:
                    if now - since >= STARTING:
                        failures.pop(index, None)
                    continue
                del self.running[pid]
                if self._stopping:
                    break
                code = os.waitstatus_to_exitcode(status)
                how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
                quick = now - since < STARTING
                failures[index] = failures.get(index, 0) + 1 if quick else 0
                delay = (
                    0.0
                    if not quick
                    else min(MAX_RESTART_DELAY, RESTART_DELAY * 2 ** (failures[index] - 1))
                )
                log.error(
                    "worker %d (pid %d) %s after %.1f s: starting it again in %g s",
                    index,
                    pid,
                    how,
                    now - since,
                    delay,
                )
                due[index] = now + delay
            for index, when in list(due.items()):
                if when <= time.monotonic() and not self._stopping:
                    del due[index]
                    self.restarts += 1
                    os.close(self._start(index))
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
        """Wait for every worker, killing those still running after :data:`STOP_GRACE`."""
        deadline = time.monotonic() + STOP_GRACE
        while self.running:
            for pid in list(self.running):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    del self.running[pid]
            if self.running and time.monotonic() >= deadline:
                for pid in self.running:
                    log.error("worker pid %d did not stop within %g s: killing it", pid, STOP_GRACE)
                    with suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                deadline = float("inf")
            elif self.running:
                time.sleep(LOOK / 4)


def _say_ready(write: int) -> None:
    """A worker serves: tell the supervisor (once; it may no longer be listening)."""
    with suppress(OSError):
        os.write(write, b"r")
    with suppress(OSError):
        os.close(write)
