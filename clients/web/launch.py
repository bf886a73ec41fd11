"""One launch of ``cz web``: its state, in this process only (the guard, the passphrase once
unlocked, the confirmations shown and the signings under way, the table and the drills), and
how a handler reaches it."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from clients.web.calls import Answer, Watched
from clients.web.render import page
from clients.web.security import Guard
from clients.web.sitting import Drill, Sitting


@dataclass(frozen=True, slots=True)
class Confirm:
    """A signing shown to the player and not yet clicked: what is signed, to whom, and the
    ``cz`` command that signs it."""

    title: str
    signed: tuple[str, ...]
    to: str
    button: str
    argv: tuple[str, ...]
    stdin: str = ""
    #: A slip is written (``cz send --out``) to this file in the wallet's home: shown in a
    #: box to copy, and listed on the Exchange page until the player dismisses it.
    slip_file: str = ""


@dataclass(slots=True)
class Job:
    """A confirmed signing under way (the league asked, a proof of work paid): the command's
    task and its progress, shown by ``/jobs/ID`` until it answers, then its outcome."""

    confirm: Confirm
    progress: Watched
    task: asyncio.Task[Answer]


@dataclass(frozen=True, slots=True)
class Done:
    """An action's outcome, kept to be shown by ``GET /done/ID``: the POST that did it
    answers 303 there, so a reload shows it again and never does it again."""

    title: str
    answer: Answer
    back: str
    proofs: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class Web:
    """One launch's state, in this process only: the guard, the passphrase once unlocked,
    the confirmations shown and not yet clicked, the signings under way, the table being
    played, the drills shown."""

    guard: Guard = field(default_factory=Guard)
    passphrase: str = ""
    confirms: dict[str, Confirm] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    done: dict[str, Done] = field(default_factory=dict)
    sitting: Sitting | None = None
    drills: dict[str, Drill] = field(default_factory=dict)
    #: One move at the table at a time (two tabs, or a double click, never interleave).
    at_the_table: asyncio.Lock = field(default_factory=asyncio.Lock)


WEB = web.AppKey("cz_web", Web)
#: A path of this launch's pages: printable URL characters only (no backslash, space, tab or
#: newline, which a browser would drop or turn into a slash, making ``//host``).
_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*")


def state(request: web.Request) -> Web:
    return request.app[WEB]


def show(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    """The page ``template`` of this launch: its links under its secret, the wallet's lock
    shown."""
    launch = state(request)
    return page(
        template,
        root=launch.guard.root,
        unlocked=bool(launch.passphrase),
        status=status,
        **context,
    )


def see(request: web.Request, path: str) -> web.Response:
    """303 to ``path`` (``/…``) of this launch's pages: always under its secret on this
    origin, never to another host (a path that is not one is taken as the home page)."""
    if not _PATH.fullmatch(path) or path.startswith("//"):
        path = "/"
    return web.Response(status=303, headers={"Location": state(request).guard.root + path})
