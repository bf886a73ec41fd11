"""The all-in-one league served in the test's own process, on a background event loop in a
thread: what ``league serve`` serves (every service composed into one app, served on a public
port and on the internal listener the services call each other on), without a process.

A subprocess costs a second and a half of imports and start-up per league; this costs the
migrations (done once per database) and the app's start. What it gives up is the process
(its signals, its exit, its stdout): the tests of those serve ``league serve`` as a
subprocess (:class:`tests.harness.served.Served`).

``init_league`` is ``league init`` run in this process (``services.league.cli.main``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from services.eventlog.migrate import upgrade
from services.http.serving import internal_listener, serving
from services.kernel.compose import compose
from services.kernel.settings import LeagueSettings
from services.league import cli
from services.league.registry import SERVICES
from tests.harness.cz import environment, run_main

#: A guard against a hung start or stop, not a timing assertion.
GUARD_SECONDS = 120

#: The databases migrated in this test session (``league serve`` migrates on every start).
_migrated: set[str] = set()


def clean_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without any LEAGUE_ or CZ_ setting."""
    return {k: v for k, v in env.items() if not k.startswith(("LEAGUE_", "CZ_"))}


def init_league(home: Path, database_url: str, *policies: str) -> dict[str, str]:
    """``league init`` (in this process) in a fresh LEAGUE_HOME: no proof of work to speak
    of, frequent checkpoints, and ``policies`` (NAME=VALUE) besides; returns the league's
    environment (this one without LEAGUE_ and CZ_ settings, LEAGUE_HOME and DATABASE_URL),
    as tests.harness.served's ``init_league`` (``league init`` as a subprocess) does."""
    env = {**clean_env(os.environ), "LEAGUE_HOME": str(home), "DATABASE_URL": database_url}
    options = [
        arg
        for p in ("stamp_work=1", "checkpoint_interval_ms=50", *policies)
        for arg in ("--policy", p)
    ]
    made = run_main(cli.main, "league", ["init", *options], env=env)
    assert made.returncode == 0, made.stderr
    return env


class InProcessLeague:
    """``league serve`` (every service) of the league in ``env`` (LEAGUE_HOME, DATABASE_URL)
    on 127.0.0.1:``port`` (0: a free port), served on its own event loop in a thread until
    :meth:`stop`. ``url`` is where it answers."""

    def __init__(self, env: Mapping[str, str], port: int = 0) -> None:
        with environment(env):
            settings = LeagueSettings.from_env(port=port).with_database()
        assert settings.database is not None
        if settings.database not in _migrated:
            upgrade(settings.database)
            _migrated.add(settings.database)
        self._internal = internal_listener()
        at = self._internal.getsockname()
        settings = settings.with_internal(f"http://{at[0]}:{at[1]}", SERVICES)
        app = compose(settings, list(SERVICES.values()))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=_run_forever, args=(self._loop,), name="league", daemon=True
        )
        self._thread.start()
        self._serving: contextlib.AbstractAsyncContextManager[Any] = serving(
            app, settings.host, settings.port, internal=self._internal
        )
        try:
            self.url: str = self._call(self._start())
        except BaseException:
            self._close_loop()
            raise

    async def _start(self) -> str:
        runner = await self._serving.__aenter__()
        host, port = runner.public_addresses[0][:2]
        return f"http://{host}:{port}"

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(GUARD_SECONDS)

    def stop(self) -> None:
        """Stop serving (the app's background tasks cancelled, its pools closed)."""
        try:
            self._call(self._serving.__aexit__(None, None, None))
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(GUARD_SECONDS)
        self._loop.close()
        self._internal.close()


#: The loop's thread runs it from module-level code: the services make aiohttp app keys while
#: they start (services.kernel.witness_server.witness_key,
#: services.http.logs.served_checkpoint_key), and aiohttp names a key after the module whose
#: top-level frame is up the stack, which a thread's stack otherwise lacks (the key's
#: construction fails).
_RUN_FOREVER = compile("loop.run_forever()", __file__, "exec")


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    exec(_RUN_FOREVER, {"__name__": __name__, "loop": loop})  # noqa: S102


@contextlib.contextmanager
def served_in_process(env: Mapping[str, str], port: int = 0) -> Iterator[InProcessLeague]:
    """The league in ``env`` served in this process on ``port`` (default: a free one) until
    the block exits: an :class:`InProcessLeague`."""
    league = InProcessLeague(env, port)
    try:
        yield league
    finally:
        league.stop()
