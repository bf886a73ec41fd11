"""The ``cz`` commands, run in this process for the pages: the same parser, the same handlers,
the same refusals as the terminal's, with the passphrase handed in (never asked) and stdin,
stdout and stderr in memory.

A command's handler may run its own event loop (``asyncio.run``), so a call runs on a worker
thread; calls never overlap (one lock: they swap ``sys.stdin``/``stdout``/``stderr``, which
this server does not otherwise write while it serves).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

log = logging.getLogger("cz.web")

_ONE_AT_A_TIME = threading.Lock()
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Answer:
    """What ``cz ARGV`` answered: its exit status, stdout and stderr."""

    argv: tuple[str, ...]
    status: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def refusal(self) -> str:
        """The one-line refusal (``cz: `` taken off), or what stderr said."""
        lines = [line for line in self.err.splitlines() if line.strip()]
        last = lines[-1] if lines else f"cz {' '.join(self.argv)} failed (status {self.status})"
        return last.removeprefix("cz: ")

    @property
    def notes(self) -> list[str]:
        """What stderr said besides a refusal (warnings, the summary's notice)."""
        lines = [line for line in self.err.splitlines() if line.strip()]
        return lines if self.ok else lines[:-1]

    def json(self) -> Any:
        return json.loads(self.out)


class Watched(io.StringIO):
    """A command's stderr as a terminal would be: cz draws its progress bar there (a line
    that starts with a carriage return, redrawn in place), kept here as :attr:`progress` for
    the page that waits on the command; everything else is kept as written."""

    def __init__(self) -> None:
        super().__init__()
        self.progress = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text.startswith("\r"):
            self.progress = text.strip()
            return len(text)
        return super().write(text)


def call(
    argv: Sequence[str],
    *,
    passphrase: str = "",
    stdin: str = "",
    progress: Watched | None = None,
) -> Answer:
    """``cz ARGV`` in this process; ``passphrase`` handed to it ("": the wallet is locked);
    its progress bar drawn into ``progress`` if given."""
    from clients import cz
    from clients.cz_session import HANDED_PASSPHRASE

    args = tuple(argv)
    out = io.StringIO()
    err: io.StringIO = progress if progress is not None else io.StringIO()
    with _ONE_AT_A_TIME:
        kept = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
        token = HANDED_PASSPHRASE.set(passphrase)
        failure: Exception | None = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = cz.main(list(args))
                except SystemExit as exc:  # a usage error
                    status = exc.code if isinstance(exc.code, int) else 2
                except Exception as exc:  # a bug: logged (to the real stderr), said in a line
                    failure, status = exc, 1
                    err.write(f"cz: cz {args[0] if args else ''} failed unexpectedly\n")
        finally:
            HANDED_PASSPHRASE.reset(token)
            sys.stdin = kept
    if failure is not None:
        log.error("cz %s failed", args[0] if args else "", exc_info=failure)
    return Answer(args, status, out.getvalue(), err.getvalue())


async def run(
    argv: Sequence[str],
    *,
    passphrase: str = "",
    stdin: str = "",
    progress: Watched | None = None,
) -> Answer:
    """:func:`call` on a worker thread."""
    return await asyncio.to_thread(
        call, argv, passphrase=passphrase, stdin=stdin, progress=progress
    )


def with_wallet(work: Callable[[], T], *, passphrase: str) -> T:
    """``work()`` with ``passphrase`` handed to the wallet code it calls (``opened_wallet``),
    one at a time with the commands."""
    from clients.cz_session import HANDED_PASSPHRASE

    with _ONE_AT_A_TIME:
        token = HANDED_PASSPHRASE.set(passphrase)
        try:
            return work()
        finally:
            HANDED_PASSPHRASE.reset(token)
