"""Where the league's answers come from: a :class:`Source` gives what a league serves, as served
(the JSON and notes' text). :class:`Served` reads it over HTTP with the league's API client
(and, with ``--save``, writes every answer into a :class:`SavedLeague` directory as it
arrives); :class:`Saved` reads such a directory back (``--offline``).

The services may answer at separate hosts: :class:`Served` reads each from the URL given for
it (``--mint``, ``--treasury``, ``--notary``), else the URL the league's manifest names for it
(once its root signature is checked against the pin), else the league's URL.

The saved directory (docs/operations.md, "Auditing offline")::

    DIR/audit.json                      {"format", "url", "saved_at"}
    DIR/manifest.json                   GET /mint/manifest
    DIR/<service>/checkpoint            GET /<service>/checkpoint
    DIR/<witness>/evidence/000000.json  GET /<witness>/evidence (the first page)
    DIR/<service>/events/NNNNNN.json    GET /<service>/events?after=...&limit=..., in order
    DIR/notary/holders/NNNNNN.json      GET /notary/holders?after=..., in order
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from apiclient.league import LeagueClient, LeagueProblem
from auditor.errors import AuditorError
from ledger.api.notary import MAX_HOLDERS_PAGE
from ledger.api.witness import MAX_EVIDENCE_PAGE
from ledger.limits import MAX_FEED_PAGE
from ledger.manifest import SERVICE_NAMES, LeagueManifest

#: Services a league may not serve (yet): audited when they serve a checkpoint. One whose URL
#: was named (a flag, the manifest's ``urls``) or whose checkpoint a previous audit kept must
#: serve it: a 404 then fails the audit.
OPTIONAL_SERVICES = ("treasury",)
#: The saved directory's format, in its audit.json.
FORMAT = "cz-league-audit/1"
#: escaped).
#: A feed page's ``next_after``, its last member (a quote inside a string is escaped).
_NEXT_AFTER = re.compile(r'"next_after"\s*:\s*(-?\d+)\s*}\s*$')


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
            raise AuditorError(f"{directory} is not empty: save an audit into a new directory")
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
            raise AuditorError(
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
            raise AuditorError(f"{self.directory / name} is missing from the saved audit")
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
