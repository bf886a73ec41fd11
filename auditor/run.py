"""The audit's run: :func:`run_audit` feeds a :class:`auditor.sources.Source` through one
:class:`ledger.audit.Auditor`; pages are checked by :func:`ledger.audit.check_page` in a pool of
worker processes, one page each, while this process does the stateful checks in seq order.
:func:`audit_url` and :func:`audit_offline` are what ``league audit`` runs."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Awaitable, Iterator, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from apiclient.league import LeagueClient
from auditor.errors import AuditorError
from auditor.sources import Saved, SavedLeague, Served, Source
from auditor.state import AuditState
from ledger.address import address_of
from ledger.api.notary import Holders
from ledger.api.witness import EvidenceList
from ledger.audit import (
    AUDITED_SERVICES,
    WITNESSES,
    Auditor,
    AuditReport,
    CheckedPage,
    PageContext,
    check_page,
)
from ledger.checkpoint import Checkpoint
from ledger.keys import PublicKey
from ledger.manifest import SERVICE_NAMES, LeagueManifest, check_service_url

#: Pages checked in this process before a default pool starts (a small league is done first).
POOL_AFTER_PAGES = 4


# -- checking pages --------------------------------------------------------------------------


class PageChecker:
    """:func:`check_page` in a pool of ``workers`` processes (in this one when fewer than 2).

    With ``eager`` the pool starts with the first page; otherwise only once a log proves
    longer than :data:`POOL_AFTER_PAGES` pages (starting processes costs more than checking a
    small league in this one)."""

    def __init__(self, workers: int, *, eager: bool = True) -> None:
        self.workers = workers
        self.eager = eager
        self.pool: Executor | None = None
        self.pages = 0

    def _pool(self) -> Executor | None:
        if (
            self.pool is None
            and self.workers >= 2
            and (self.eager or self.pages > POOL_AFTER_PAGES)
        ):
            context = multiprocessing.get_context("spawn")
            self.pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=gc.disable
            )
        return self.pool

    def start(self) -> PageChecker:
        """Start every worker now (each imports the auditor once), not on the first page."""
        pool = self._pool()
        if pool is not None:
            list(pool.map(_ready, range(self.workers)))
        return self

    def check(self, context: PageContext, text: str) -> Awaitable[CheckedPage]:
        self.pages += 1
        pool = self._pool()
        if pool is None:
            future: asyncio.Future[CheckedPage] = asyncio.get_running_loop().create_future()
            future.set_result(check_page(context, text))
            return future
        return asyncio.get_running_loop().run_in_executor(pool, check_page, context, text)

    @property
    def depth(self) -> int:
        """Pages in flight: enough to keep every worker busy while this process catches up."""
        return max(1, 2 * self.workers)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def _ready(_: int) -> int:  # pragma: no cover - runs in a worker
    return os.getpid()


class AuditProgress:
    """Events audited per service, redrawn on one line of a terminal (silent otherwise)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.shown = stream is not None and stream.isatty()

    def update(self, service: str, done: int, expected: int | None) -> None:
        if self.stream is not None and self.shown:
            of = f" of {expected}" if expected else ""
            self.stream.write(f"\r\x1b[Kauditing {service}: {done}{of} events")
            self.stream.flush()

    def done(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# -- the audit ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditOutcome:
    """A passed audit: the report, the league's root, whether it was pinned just now, and
    the other URLs the same league was audited at before."""

    report: AuditReport
    url: str
    root: PublicKey
    first_use: bool
    moved_from: list[str]
    state: Path
    #: Where each service was read, when not all at ``url`` (services on separate hosts).
    read_at: dict[str, str] = field(default_factory=dict)

    @property
    def events(self) -> int:
        return sum(s.events for s in self.report.services)


def _parse(model: type[Any], text: str, what: str, service: str) -> Any:
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise AuditorError(
            f"the {service}'s {what} is not a {model.__name__}: "
            f"{exc.errors(include_url=False)[0]['msg']}"
        ) from None


async def run_audit(
    source: Source,
    state: AuditState,
    *,
    root: PublicKey | None,
    checker: PageChecker,
    progress: AuditProgress,
    keep_larger_only: bool,
) -> AuditOutcome:
    """Audit what ``source`` serves under ``root`` (or the URL's pin, or first use).

    The cyclic garbage collector is off meanwhile (here and in the workers): the audit makes
    no cycles, and its passes over the auditor's growing state cost ~5% of the checking."""
    gc.disable()
    try:
        return await _run_audit(
            source,
            state,
            root=root,
            checker=checker,
            progress=progress,
            keep_larger_only=keep_larger_only,
        )
    finally:
        gc.enable()


async def _run_audit(
    source: Source,
    state: AuditState,
    *,
    root: PublicKey | None,
    checker: PageChecker,
    progress: AuditProgress,
    keep_larger_only: bool,
) -> AuditOutcome:
    url = source.url
    manifest = LeagueManifest.from_wire(await source.manifest())
    served_root = PublicKey.from_text(manifest.root)
    pinned = state.pinned(url)
    for expected, how in (
        (pinned, f"pinned for {url} in {state.path}"),
        (root, "given with --root"),
    ):
        if expected is not None and expected != served_root:
            raise AuditorError(
                f"REFUSED: {url} serves a league under the root key {address_of(served_root)}, "
                f"not {address_of(expected)} {how}. A changed root is another league (or an "
                f"impostor): nothing was audited. To audit it as a new league, remove the pin "
                f"from {state.path} or use another --state directory."
            )
    first_use = pinned is None and root is None
    auditor = Auditor(manifest, pinned or root or served_root)  # checks the root signature
    moved_from = [u for u in state.known_urls(served_root) if u != url]
    state.pin(url, served_root)
    # Only now, the manifest's root checked, may its URLs say where the services are read.
    located = source.locate(manifest)
    read_at = {service: at for service, at in located.items() if at != url}

    kept = state.kept(served_root)
    served: dict[str, Checkpoint] = {}
    # The holders first, then the notary's checkpoint, then the treasury's and the mint's:
    # every hop they cover refers to a stamp or a note's issue that the mint's or the
    # treasury's feed, read to its end afterwards, holds.
    after, index, holders_size = "", 0, 0
    while (text := await source.holders(after, index)) is not None:
        page: Holders = _parse(Holders, text, "holders page", "notary")
        auditor.holders(after, page)
        holders_size = max(holders_size, page.log_size)
        index += 1
        if page.next_after is None:
            break
        after = page.next_after
    for service in reversed(AUDITED_SERVICES):
        note = await source.checkpoint(service)
        if note is not None:
            served[service] = Checkpoint.from_note(note)
            continue
        # An optional service not served: skipped only when nothing says it should be.
        previous = kept.get(service)
        why = (
            f"its checkpoint of size {previous.size} was kept from a previous audit"
            if previous is not None and not keep_larger_only
            else f"its URL was named ({source.named(service)})"
            if source.named(service) is not None
            else None
        )
        if why is not None:
            at = located.get(service, url)
            raise AuditorError(
                f"the {service} at {at} does not serve its checkpoint (404), "
                f"but {why}: a league does not stop serving a log"
            )
    for service in served:
        previous = kept.get(service)
        if previous is not None and (not keep_larger_only or previous.size <= served[service].size):
            auditor.checkpoint(service, previous, kept=True)
        auditor.checkpoint(service, served[service])
    for service in WITNESSES:  # every witness's evidence, of any log
        # Its first page says it all: empty, or a violation (which the report raises).
        text = await source.evidence(service, 0, 0)
        if text is not None:
            auditor.evidence(service, _parse(EvidenceList, text, "evidence page", service))
        elif service in served:  # a service serving its log witnesses the others' too
            raise AuditorError(
                f"{source.evidence_missing(service)}, but its log is served: "
                f"a league's services witness each other, and hidden evidence "
                f"would pass the audit"
            )

    # One pipeline through every service's pages: a page is checked (in the pool) while the
    # pages before it, of its service or of the one before, go through the stateful checks.
    waiting: deque[tuple[str, int, Awaitable[CheckedPage]]] = deque()

    async def settle(limit: int) -> None:
        while len(waiting) > limit:
            service, upto, checked = waiting.popleft()
            auditor.add_checked(service, await checked)
            progress.update(service, auditor.size(service), upto)

    for service in AUDITED_SERVICES:
        if service not in served:
            continue
        upto = served[service].size
        if service == "notary":
            upto = max(upto, holders_size)
        context = auditor.context(service)
        async for text in source.pages(service, upto, service != "notary"):
            waiting.append((service, upto, checker.check(context, text)))
            await settle(checker.depth)
    await settle(0)
    progress.done()
    report = auditor.report()

    newest = dict(kept)
    for service in AUDITED_SERVICES:
        latest = auditor.latest(service)
        previous = kept.get(service)
        if latest is not None and (previous is None or latest.size >= previous.size):
            newest[service] = latest
    state.keep(served_root, newest)
    return AuditOutcome(report, url, served_root, first_use, moved_from, state.path, read_at)


@contextlib.contextmanager
def _checking(checker: PageChecker | None, workers: int | None) -> Iterator[PageChecker]:
    """``checker`` when given (the caller's started pool, left running), else a new pool of
    ``workers`` processes from the first page, closed after the block; by default the
    machine's cores, once a log proves long enough to pay for starting them."""
    if checker is not None:
        yield checker
        return
    if workers is None:
        owned = PageChecker(os.cpu_count() or 1, eager=False)
    else:
        owned = PageChecker(workers)
    try:
        yield owned
    finally:
        owned.close()


def service_urls(url: str | None, given: Mapping[str, str | None]) -> tuple[str, dict[str, str]]:
    """The league's URL (``url``, else the mint's given URL) and the services' URLs given
    (``--mint``, ``--treasury``, ``--notary``), each checked as a manifest's URL would be."""
    named = {service: text.rstrip("/") for service, text in given.items() if text}
    for service, text in named.items():
        if service not in SERVICE_NAMES:
            raise AuditorError(f"no service is called {service!r}")
        try:
            check_service_url(text)
        except ValueError as exc:
            raise AuditorError(f"--{service}: {exc}") from None  # not the URL: a password?
    league = (url or "").rstrip("/") or named.get("mint")
    if not league:
        raise AuditorError("give the league's URL (or the mint's, --mint URL)")
    return league, named


async def audit_url(
    url: str,
    state_dir: Path,
    *,
    root: PublicKey | None = None,
    save: Path | None = None,
    workers: int | None = None,
    progress: AuditProgress | None = None,
    checker: PageChecker | None = None,
    services: Mapping[str, str] | None = None,
) -> AuditOutcome:
    """``league audit URL``: audit the league served at ``url`` (saving it into ``save``),
    each service read at its URL in ``services`` when given there, else where the manifest
    says, else at ``url``; pages checked in ``checker``'s started pool when given, else in
    ``workers`` processes (default: the machine's cores, once it pays)."""
    saved = SavedLeague.create(save, url) if save is not None else None
    with _checking(checker, workers) as pool:
        async with LeagueClient(url) as client, Served(client, saved, services) as served:
            return await run_audit(
                served,
                AuditState.load(state_dir),
                root=root,
                checker=pool,
                progress=progress or AuditProgress(),
                keep_larger_only=False,
            )


def audit_offline(
    directory: Path,
    state_dir: Path,
    *,
    root: PublicKey | None = None,
    workers: int | None = None,
    progress: AuditProgress | None = None,
    checker: PageChecker | None = None,
) -> AuditOutcome:
    """``league audit --offline DIR``: audit a directory ``--save`` wrote, as its league
    (in ``checker``'s started pool when given, else in a new one of ``workers``).

    Checkpoints kept from audits newer than the saved copy are not held against it."""
    saved, url = SavedLeague.open(directory)
    with _checking(checker, workers) as pool:
        return asyncio.run(
            run_audit(
                Saved(saved, url),
                AuditState.load(state_dir),
                root=root,
                checker=pool,
                progress=progress or AuditProgress(),
                keep_larger_only=True,
            )
        )
