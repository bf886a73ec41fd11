"""What the auditor keeps between runs (one JSON file, :class:`AuditState`), keyed by the
league's root key: the root pinned for each URL on first use, and per root the latest checkpoint
each service served to a passed audit. A league that moves host keeps its history; a changed
root at a known URL is refused."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.errors import AuditorError
from ledger.audit import (
    AUDITED_SERVICES,
)
from ledger.checkpoint import Checkpoint
from ledger.errors import LedgerError
from ledger.keys import PublicKey

#: The state file's name in the state directory.
STATE_FILE = "leagues.json"


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
            raise AuditorError(
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
            raise AuditorError(
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
