"""``cz`` run in the test's own process: ``clients.cz.main(argv)`` with its own environment,
working directory, stdin and captured stdout and stderr, answered like ``subprocess.run``; and a
wallet left as if cz died after the mint answered its stamp (:func:`sent_and_lost`).

A fresh interpreter per call costs a second of imports; this costs the command. What it
gives up is what only a real process has (a console script's own exit, a terminal, signals):
the tests of those run ``cz`` as a subprocess (see tests/clients/conftest.py's ``on_terminal``
and ``Player.process``).

The process's state cz touches is swapped for the call and restored after it: ``os.environ``
(cz reads CZ_HOME, CZ_PASSPHRASE, CZ_KDF, NO_COLOR there), the working directory (files named
on its command line are relative to it) and ``sys.stdin``/``stdout``/``stderr`` (in-memory,
so never a terminal, as with subprocess pipes). cz keeps no module-level state between calls
(its wallet, league pin and locks are files in CZ_HOME; what the modules it imports keep is
pure caches, e.g. ledger.keys' parsed keys, the same answer whoever asks). Calls must not
overlap: the tests do not run in parallel threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from apiclient.league import LeagueClient
from clients import cz
from clients.wallet import LeaguePin, Wallet
from ledger.api.mint import Stamped
from ledger.keys import PublicKey


def run_cz(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``cz ARGV`` in this process, as ``subprocess.run([cz, *argv], env=env, cwd=cwd,
    input=stdin, capture_output=True, text=True)`` would answer: its exit status (a
    ``SystemExit`` caught; an uncaught exception is a traceback on stderr and status 1, as
    the console script's would be), stdout and stderr. No stdin reads as empty."""
    return run_main(cz.main, "cz", argv, env=env, cwd=cwd, stdin=stdin)


def run_main(
    main: Callable[[list[str]], int],
    prog: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """A console script's ``main(argv)`` (cz's, league's) in this process, as
    :func:`run_cz` says. It may run its own event loop (``asyncio.run``): from inside a
    running loop (an async test) the call is made on a worker thread, which this thread
    waits for."""
    args = [str(arg) for arg in argv]

    def call() -> subprocess.CompletedProcess[str]:
        return _run(main, prog, args, env, cwd, stdin)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call()
    answers: list[subprocess.CompletedProcess[str]] = []
    worker = threading.Thread(target=lambda: answers.append(call()), name=prog)
    worker.start()
    worker.join()
    (answer,) = answers
    return answer


def _run(
    main: Callable[[list[str]], int],
    prog: str,
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path | str | None,
    stdin: str | None,
) -> subprocess.CompletedProcess[str]:
    out, err = io.BytesIO(), io.BytesIO()
    with environment(env), _directory(cwd), _streams(stdin, out, err):
        try:
            status = _exit_status(main(argv))
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except Exception:  # what the console script would print and exit 1 on
            traceback.print_exc()
            status = 1
    return subprocess.CompletedProcess(
        [prog, *argv], status, _text(out.getvalue()), _text(err.getvalue())
    )


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` exits with (a message is printed, and is status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _text(raw: bytes) -> str:
    """Bytes as ``subprocess.run(text=True)`` decodes them (universal newlines)."""
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` is ``env`` inside the block, and what it was again after it."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _directory(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _streams(stdin: str | None, out: io.BytesIO, err: io.BytesIO) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    streams = (
        io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        for stream in streams:
            stream.flush()
            stream.detach()  # the buffers stay open to be read


async def sent_and_lost(url: str, wallet: Wallet) -> str:
    """Pin ``wallet`` to the league, present its first print and keep the request as pending,
    as if cz had died after the mint answered: returns the serial the mint stamped."""
    async with LeagueClient(url) as client:
        manifest = await client.manifest()
        request = await client.stamp_order(wallet.key, manifest, wallet.unstamped()[:1])
        answer = await client.stamp(request)
    (item,) = answer.items
    assert isinstance(item, Stamped)
    wallet.league = LeaguePin(url, PublicKey.from_text(manifest.root), manifest)
    wallet.pending = request
    return item.certificate.serial
