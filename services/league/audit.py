"""``league audit``: the independent auditor's IO around ``ledger.audit`` (docs/operations.md
"Auditing a running league").

Nothing but the HTTP client and ``ledger/``, never the services' own code, which is what it
checks. A :class:`Source` gives what a league serves, as served (the JSON and notes' text):
:class:`Served` reads it over HTTP (and, with ``--save``, writes every answer into a
:class:`SavedLeague` directory as it arrives), :class:`Saved` reads such a directory back
(``--offline``). :func:`run_audit` feeds either through the same :class:`ledger.audit.Auditor`;
pages are checked by :func:`ledger.audit.check_page` in a pool of worker processes, one page
each, while this process does the stateful checks in seq order.

The services may answer at separate hosts: :class:`Served` reads each from the URL given for
it (``--mint``, ``--treasury``, ``--notary``), else the URL the league's manifest names for it
(once its root signature is checked against the pin), else the league's URL.

What the auditor keeps between runs (:class:`AuditState`, one JSON file) is keyed by the
league's root key: the root pinned for each URL on first use, and per root the latest
checkpoint each service served to a passed audit. A league that moves host keeps its
history; a changed root at a known URL is refused.

The saved directory (docs/operations.md, "Auditing offline")::

    DIR/audit.json                      {"format", "url", "saved_at"}
    DIR/manifest.json                   GET /mint/manifest
    DIR/<service>/checkpoint            GET /<service>/checkpoint
    DIR/<witness>/evidence/000000.json  GET /<witness>/evidence (the first page)
    DIR/<service>/events/NNNNNN.json    GET /<service>/events?after=...&limit=..., in order
    DIR/notary/holders/NNNNNN.json      GET /notary/holders?after=..., in order
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO

from pydantic import ValidationError

from apiclient.league import LeagueClient, LeagueProblem
from ledger.address import address_of
from ledger.api.notary import MAX_HOLDERS_PAGE, Holders
from ledger.api.witness import MAX_EVIDENCE_PAGE, EvidenceList
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
from ledger.errors import LedgerError
from ledger.keys import PublicKey
from ledger.limits import MAX_FEED_PAGE
from ledger.manifest import SERVICE_NAMES, LeagueManifest, check_service_url
from services.kernel.errors import LeagueError

#: Services a league may not serve (yet): audited when they serve a checkpoint. One whose URL
#: was named (a flag, the manifest's ``urls``) or whose checkpoint a previous audit kept must
#: serve it: a 404 then fails the audit.
OPTIONAL_SERVICES = ("treasury",)
#: The saved directory's format, in its audit.json.
FORMAT = "cz-league-audit/1"
#: Pages checked in this process before a default pool starts (a small league is done first).
POOL_AFTER_PAGES = 4
#: A feed event's ``seq`` member in a page's JSON (never inside a string, where quotes are
#: escaped).
#: A feed page's ``next_after``, its last member (a quote inside a string is escaped).
_NEXT_AFTER = re.compile(r'"next_after"\s*:\s*(-?\d+)\s*}\s*$')
#: The state file's name in the state directory.
STATE_FILE = "leagues.json"


# -- what is kept between runs -----------------------------------------------------------------


@dataclass
class AuditState:
    """The auditor's memory: per URL the root pinned on first use; per root (a league,
    wherever it is served from) the latest checkpoint each service served to a passed audit."""

    path: Path
    urls: dict[str, str] = field(default_factory=dict)
    leagues: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path) -> AuditState:
        state = cls(directory / STATE_FILE)
        if not state.path.exists():
            return state
        try:
            data = json.loads(state.path.read_text(encoding="utf-8"))
            state.urls = {str(url): str(root) for url, root in data["urls"].items()}
            state.leagues = {str(root): dict(kept) for root, kept in data["leagues"].items()}
            for root in (*state.urls.values(), *state.leagues):
                PublicKey.from_text(root)
        except (ValueError, KeyError, TypeError, AttributeError, LedgerError):
            raise LeagueError(
                f"{state.path} is not an audit state file (remove it to audit afresh, pinning "
                f"every league's root key again)"
            ) from None
        return state

    def pinned(self, url: str) -> PublicKey | None:
        root = self.urls.get(url)
        return PublicKey.from_text(root) if root is not None else None

    def kept(self, root: PublicKey) -> dict[str, Checkpoint]:
        """The checkpoints kept for the league of ``root`` (from any URL)."""
        league = self.leagues.get(root.to_text(), {})
        try:
            return {
                service: Checkpoint.from_note(text)
                for service, text in league.get("checkpoints", {}).items()
                if service in AUDITED_SERVICES
            }
        except LedgerError:
            raise LeagueError(
                f"{self.path} holds a checkpoint that does not parse (remove it to audit afresh)"
            ) from None

    def known_urls(self, root: PublicKey) -> list[str]:
        return list(self.leagues.get(root.to_text(), {}).get("urls", []))

    def pin(self, url: str, root: PublicKey) -> None:
        self.urls[url] = root.to_text()
        league = self.leagues.setdefault(root.to_text(), {"urls": [], "checkpoints": {}})
        if url not in league["urls"]:
            league["urls"].append(url)
        self.save()

    def keep(self, root: PublicKey, checkpoints: dict[str, Checkpoint]) -> None:
        league = self.leagues.setdefault(root.to_text(), {"urls": [], "checkpoints": {}})
        league["checkpoints"] = {name: str(cp) for name, cp in checkpoints.items()}
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_suffix(".tmp")
        data = {"urls": self.urls, "leagues": self.leagues}
        scratch.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(scratch, self.path)


# -- where the league's answers come from ------------------------------------------------------


class Source(Protocol):
    """What a league serves, as served. ``None`` where it serves no such thing."""

    url: str

    async def manifest(self) -> str: ...

    def locate(self, manifest: LeagueManifest) -> dict[str, str]:
        """Where each service is read from, now that ``manifest`` (its root checked) may
        name its URL; the URLs in use, by service."""
        ...

    async def checkpoint(self, service: str) -> str | None:
        """``service``'s checkpoint; None for an optional service it does not serve."""
        ...

    def named(self, service: str) -> str | None:
        """Where ``service``'s URL was named explicitly (a flag, the manifest's ``urls``), or
        None."""
        ...

    async def holders(self, after: str, index: int) -> str | None: ...

    async def evidence(self, service: str, after: int, index: int) -> str | None:
        """A page of the evidence ``service``'s witness keeps (the first: after 0); None when
        it is not served."""
        ...

    def evidence_missing(self, service: str) -> str:
        """Says where ``service``'s evidence was not served (or not saved)."""
        ...

    def pages(self, service: str, upto: int, to_end: bool) -> AsyncIterator[str]:
        """Pages of ``service``'s feed in order: its first ``upto`` events, and with
        ``to_end`` on to its end."""
        ...


class SavedLeague:
    """A saved directory: writes each answer as served, reads them back in order."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def create(cls, directory: Path, url: str) -> SavedLeague:
        if directory.exists() and any(directory.iterdir()):
            raise LeagueError(f"{directory} is not empty: save an audit into a new directory")
        directory.mkdir(parents=True, exist_ok=True)
        saved = cls(directory)
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        saved._write("audit.json", json.dumps({"format": FORMAT, "url": url, "saved_at": at}))
        return saved

    @classmethod
    def open(cls, directory: Path) -> tuple[SavedLeague, str]:
        """The directory and the URL it was saved from."""
        try:
            header = json.loads((directory / "audit.json").read_text(encoding="utf-8"))
            if header["format"] != FORMAT:
                raise ValueError(header["format"])
            return cls(directory), str(header["url"])
        except (OSError, ValueError, KeyError, TypeError):
            raise LeagueError(
                f"{directory} is not a directory `league audit --save` wrote "
                f"(no {FORMAT} audit.json)"
            ) from None

    def _write(self, name: str, text: str) -> None:
        path = self.directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def _read(self, name: str) -> str | None:
        path = self.directory / name
        return path.read_text(encoding="utf-8") if path.exists() else None

    def write_manifest(self, text: str) -> None:
        self._write("manifest.json", text)

    def write_checkpoint(self, service: str, text: str) -> None:
        self._write(f"{service}/checkpoint", text)

    def write_numbered(self, folder: str, index: int, text: str) -> None:
        self._write(f"{folder}/{index:06d}.json", text)

    def read(self, name: str) -> str:
        text = self._read(name)
        if text is None:
            raise LeagueError(f"{self.directory / name} is missing from the saved audit")
        return text

    def numbered(self, folder: str, index: int) -> str | None:
        return self._read(f"{folder}/{index:06d}.json")


class Served:
    """A league over HTTP; every answer also saved into ``save`` when given.

    Each service is read at the URL ``given`` names for it, else (once :meth:`locate` is told
    the manifest) at the URL the manifest names, else at ``client``'s (a gateway or an
    all-in-one server). The manifest itself comes from the mint's given URL, else ``client``'s.
    Use it as an async context manager: the clients it opens for other URLs close with it."""

    def __init__(
        self,
        client: LeagueClient,
        save: SavedLeague | None,
        given: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self.url = client.base_url
        self.save = save
        self.given = {service: url.rstrip("/") for service, url in (given or {}).items()}
        self.urls = {service: self.given.get(service, self.url) for service in SERVICE_NAMES}
        self._clients: dict[str, LeagueClient] = {self.url: client}
        self._stack = contextlib.AsyncExitStack()
        self._pages: dict[str, int] = {}
        self._named = {service: "--" + service for service in self.given}

    async def __aenter__(self) -> Served:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    def locate(self, manifest: LeagueManifest) -> dict[str, str]:
        named = manifest.urls
        for service in SERVICE_NAMES:
            if service not in self.given and named is not None:
                self.urls[service] = named.of(service)
                self._named[service] = "the manifest's urls"
        return dict(self.urls)

    def named(self, service: str) -> str | None:
        return self._named.get(service)

    async def _client(self, service: str) -> LeagueClient:
        url = self.urls.get(service, self.url)
        if url not in self._clients:
            client = LeagueClient(url)
            self._clients[url] = await self._stack.enter_async_context(client)
        return self._clients[url]

    async def _get(self, service: str, path: str, params: dict[str, Any] | None = None) -> str:
        # The client's own bounded reader: the text exactly as served, to check and to save.
        client = await self._client(service)
        _, _, text = await client._call("GET", path, params=params)
        return text

    async def _optional(self, service: str, path: str, params: dict[str, Any]) -> str | None:
        try:
            return await self._get(service, path, params)
        except LeagueProblem as problem:
            if problem.status in (404, 405):  # the league does not serve it (yet)
                return None
            raise

    async def manifest(self) -> str:
        text = await self._get("mint", "/mint/manifest")
        if self.save is not None:
            self.save.write_manifest(text)
        return text

    async def checkpoint(self, service: str) -> str | None:
        if service in OPTIONAL_SERVICES:
            text = await self._optional(service, f"/{service}/checkpoint", {})
            if text is None:
                return None
        else:
            text = await (await self._client(service)).checkpoint(service=service)
        if self.save is not None:
            self.save.write_checkpoint(service, text)
        return text

    async def holders(self, after: str, index: int) -> str | None:
        params: dict[str, Any] = {"limit": MAX_HOLDERS_PAGE}
        if after:
            params["after"] = after
        text = await self._optional("notary", "/notary/holders", params)
        if text is not None and self.save is not None:
            self.save.write_numbered("notary/holders", index, text)
        return text

    def evidence_missing(self, service: str) -> str:
        at = self.urls.get(service, self.url)
        return f"the {service} at {at} does not serve its witness's evidence (404)"

    async def evidence(self, service: str, after: int, index: int) -> str | None:
        params = {"after": after, "limit": MAX_EVIDENCE_PAGE}
        text = await self._optional(service, f"/{service}/evidence", params)
        if text is not None and self.save is not None:
            self.save.write_numbered(f"{service}/evidence", index, text)
        return text

    async def _page(self, service: str, after: int, limit: int) -> str:
        text = await self._get(service, f"/{service}/events", {"after": after, "limit": limit})
        if self.save is not None:
            index = self._pages.get(service, 0)
            self._pages[service] = index + 1
            self.save.write_numbered(f"{service}/events", index, text)
        return text

    async def pages(self, service: str, upto: int, to_end: bool) -> AsyncIterator[str]:
        # Read on from each page's next_after: a page holds at most MAX_FEED_PAGE events and
        # fewer when their bodies are large (MAX_FEED_PAGE_BYTES). Up to a known size, ask
        # for no more than it; past it (to_end), read until a page comes back empty. A page
        # that names no later seq ends the reading: a gap it leaves is the auditor's to find.
        after = -1
        while after + 1 < upto or to_end:
            limit = min(MAX_FEED_PAGE, upto - after - 1) if after + 1 < upto else MAX_FEED_PAGE
            page = await self._page(service, after, limit)
            yield page
            found = _NEXT_AFTER.search(page)
            if found is None or int(found[1]) <= after:
                return
            after = int(found[1])


class Saved:
    """A saved directory read back as the league it was saved from."""

    def __init__(self, saved: SavedLeague, url: str) -> None:
        self.saved = saved
        self.url = url

    async def manifest(self) -> str:
        return self.saved.read("manifest.json")

    def locate(self, manifest: LeagueManifest) -> dict[str, str]:
        return {}  # every answer is in the directory

    def named(self, service: str) -> str | None:
        return None  # whatever was named, the directory holds what was served

    async def checkpoint(self, service: str) -> str | None:
        if service in OPTIONAL_SERVICES:
            return self.saved._read(f"{service}/checkpoint")
        return self.saved.read(f"{service}/checkpoint")

    async def holders(self, after: str, index: int) -> str | None:
        return self.saved.numbered("notary/holders", index)

    async def evidence(self, service: str, after: int, index: int) -> str | None:
        return self.saved.numbered(f"{service}/evidence", index)

    def evidence_missing(self, service: str) -> str:
        path = self.saved.directory / service / "evidence" / f"{0:06d}.json"
        return f"the saved audit has no evidence of the {service}'s witness ({path} is missing)"

    async def pages(self, service: str, upto: int, to_end: bool) -> AsyncIterator[str]:
        index = 0
        while (page := self.saved.numbered(f"{service}/events", index)) is not None:
            yield page
            index += 1


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
        raise LeagueError(
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
            raise LeagueError(
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
            raise LeagueError(
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
            raise LeagueError(
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


def _checker(workers: int | None) -> PageChecker:
    """``workers`` processes from the first page; by default the machine's cores, once a log
    proves long enough to pay for starting them."""
    if workers is None:
        return PageChecker(os.cpu_count() or 1, eager=False)
    return PageChecker(workers)


def service_urls(url: str | None, given: Mapping[str, str | None]) -> tuple[str, dict[str, str]]:
    """The league's URL (``url``, else the mint's given URL) and the services' URLs given
    (``--mint``, ``--treasury``, ``--notary``), each checked as a manifest's URL would be."""
    named = {service: text.rstrip("/") for service, text in given.items() if text}
    for service, text in named.items():
        if service not in SERVICE_NAMES:
            raise LeagueError(f"no service is called {service!r}")
        try:
            check_service_url(text)
        except ValueError as exc:
            raise LeagueError(f"--{service}: {exc}") from None  # not the URL: a password?
    league = (url or "").rstrip("/") or named.get("mint")
    if not league:
        raise LeagueError("give the league's URL (or the mint's, --mint URL)")
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
    owned = checker is None
    checker = checker or _checker(workers)
    try:
        async with LeagueClient(url) as client, Served(client, saved, services) as served:
            return await run_audit(
                served,
                AuditState.load(state_dir),
                root=root,
                checker=checker,
                progress=progress or AuditProgress(),
                keep_larger_only=False,
            )
    finally:
        if owned:
            checker.close()


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
    owned = checker is None
    checker = checker or _checker(workers)
    try:
        return asyncio.run(
            run_audit(
                Saved(saved, url),
                AuditState.load(state_dir),
                root=root,
                checker=checker,
                progress=progress or AuditProgress(),
                keep_larger_only=True,
            )
        )
    finally:
        if owned:
            checker.close()
