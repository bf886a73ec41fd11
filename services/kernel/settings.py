"""The operator's settings: where the league lives and how it is served.

Everything comes from the environment with a default, and the CLI may override host and port:
``LEAGUE_HOME`` (the data directory; default from platformdirs), ``DATABASE_URL`` (else the
embedded PostgreSQL in the data directory), ``DATABASE_READ_URL`` (a streaming replica of it
that the read endpoints read from; default the database itself), ``LEAGUE_HOST`` and
``LEAGUE_PORT``, ``LEAGUE_WORKERS`` (worker processes; ``league serve`` defaults to one per core),
``LEAGUE_PASSPHRASE_FILE`` when the league's keys are passphrase-armored, ``LEAGUE_KEYS_DIR``
(where the private keys are, e.g. a container's ``/run/secrets``; default ``LEAGUE_HOME/keys``)
``MINT_URL``, ``TREASURY_URL``, ``NOTARY_URL`` and ``TABLES_URL`` (where a service that follows
the mint's or the treasury's feed reads it, where the treasury has payments notarized and prints
stamped, where the tables service asks the mint for the Misprint, and where each witnesses the
others; default: the URL the signed manifest names for a service this server does not
serve, else this server's own address) and ``LEAGUE_TRUSTED_PROXIES`` (networks
of the reverse proxies whose ``X-Forwarded-For`` names the client; default none).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledger.manifest import SERVICE_NAMES, LeagueManifest
from services.kernel.database import default_data_dir, embedded_pgdata, start_embedded
from services.kernel.errors import LeagueError

DEFAULT_HOST = "127.0.0.1"
#: Where each setting comes from, as an error names it.
SOURCES = {
    "data_dir": "LEAGUE_HOME",
    "database_url": "DATABASE_URL",
    "database_read_url": "DATABASE_READ_URL",
    "host": "--host or LEAGUE_HOST",
    "port": "--port or LEAGUE_PORT",
    "workers": "--workers or LEAGUE_WORKERS",
    "passphrase_file": "--passphrase-file or LEAGUE_PASSPHRASE_FILE",
    "keys_location": "LEAGUE_KEYS_DIR",
    "trusted_proxies": "LEAGUE_TRUSTED_PROXIES",
    "mint_url": "MINT_URL",
    "treasury_url": "TREASURY_URL",
    "notary_url": "NOTARY_URL",
    "tables_url": "TABLES_URL",
}
DEFAULT_PORT = 8080
#: Most worker processes one ``league serve`` starts.
MAX_WORKERS = 64


class LeagueSettings(BaseModel):
    """Where a league's files are and where its server listens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data_dir: Path
    #: May hold a password: kept out of the settings' repr, so a logged or printed
    #: ``LeagueSettings`` never shows it.
    database_url: str | None = Field(default=None, repr=False)
    #: A streaming replica of ``database_url`` the read endpoints read from (feeds, proofs,
    #: served checkpoints, census, provenance, supply, holders); None: the primary itself.
    database_read_url: str | None = Field(default=None, repr=False)
    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    #: Worker processes serving the app (``league serve --workers N``; its default is one per
    #: core). One: a single process, its per-source buckets in memory; more: they share the
    #: listening socket, each log's leader is elected (services/kernel/leadership.py) and the
    #: buckets are kept in the database (services/kernel/ratelimit.py).
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS)
    passphrase_file: Path | None = None
    #: Where the private keys are, when not in ``data_dir/keys`` (a container's secrets).
    keys_location: Path | None = None
    #: Where the mint answers, for the services that follow its feed (the notary). None: this
    #: server's own address (the mint served beside them, as ``league serve`` does).
    mint_url: str | None = Field(default=None, repr=False)
    #: Where the treasury answers, for the services that follow its feed (the notary).
    treasury_url: str | None = Field(default=None, repr=False)
    #: Where the notary answers, for the treasury (it has payments notarized).
    notary_url: str | None = Field(default=None, repr=False)
    #: Where the tables service answers, for the services that witness its log.
    tables_url: str | None = Field(default=None, repr=False)
    #: The reverse proxies (a gateway) whose ``X-Forwarded-For`` is believed: a request from
    #: one of these networks counts as from the address the proxy names (per-source limits).
    trusted_proxies: tuple[IPv4Network | IPv6Network, ...] = ()
    #: The URLs the league manifest names for the services this server does not serve (see
    #: :meth:`with_peers`; never from the environment).
    peer_urls: dict[str, str] = Field(default_factory=dict)
    #: Where the services this server serves answer its own calls to them: the loopback
    #: listener reserved for internal calls (see :meth:`with_internal`; never from the
    #: environment).
    internal_urls: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides: object) -> LeagueSettings:
        """Settings from the environment; ``overrides`` (e.g. from CLI flags) win when not None."""
        passphrase = os.environ.get("LEAGUE_PASSPHRASE_FILE")
        keys = os.environ.get("LEAGUE_KEYS_DIR")
        proxies = os.environ.get("LEAGUE_TRUSTED_PROXIES") or ""
        values: dict[str, object] = {
            "data_dir": default_data_dir(),
            "database_url": os.environ.get("DATABASE_URL") or None,
            "database_read_url": os.environ.get("DATABASE_READ_URL") or None,
            "host": os.environ.get("LEAGUE_HOST") or DEFAULT_HOST,
            "port": os.environ.get("LEAGUE_PORT") or DEFAULT_PORT,
            "workers": os.environ.get("LEAGUE_WORKERS") or 1,
            "passphrase_file": Path(passphrase) if passphrase else None,
            "keys_location": Path(keys) if keys else None,
            "trusted_proxies": [p.strip() for p in proxies.split(",") if p.strip()],
            "mint_url": os.environ.get("MINT_URL") or None,
            "treasury_url": os.environ.get("TREASURY_URL") or None,
            "notary_url": os.environ.get("NOTARY_URL") or None,
            "tables_url": os.environ.get("TABLES_URL") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0]) if error["loc"] else "settings"
            given = error.get("input")
            raise LeagueError(
                f"{SOURCES.get(field, field)}: {error['msg'].lower()}, not {given!r}"
            ) from None

    def with_peers(self, manifest: LeagueManifest, served: Iterable[str]) -> LeagueSettings:
        """These settings knowing where ``manifest`` says each service answers, for the
        services not in ``served`` (those this server serves itself answer at its own
        address)."""
        if manifest.urls is None:
            return self
        mine = set(served)
        urls = {name: manifest.urls.of(name) for name in SERVICE_NAMES if name not in mine}
        return self.model_copy(update={"peer_urls": urls})

    def with_internal(self, url: str, served: Iterable[str]) -> LeagueSettings:
        """These settings calling the services in ``served`` (this server's own) at ``url``,
        the listener reserved for the server's calls to itself
        (:func:`services.http.serving.internal_listener`)."""
        return self.model_copy(update={"internal_urls": dict.fromkeys(served, url)})

    def service_url(self, service: str) -> str | None:
        """Where ``service`` answers: this server's internal listener when it serves
        ``service`` itself and has one (:meth:`with_internal`), else its ``<SERVICE>_URL``
        setting (an operator's override, e.g. an address inside a NAT), else the URL the
        manifest names for it when this server does not serve it (:meth:`with_peers`), else
        this server's own address (loopback for a wildcard host); None when none is known
        (port 0)."""
        internal = self.internal_urls.get(service)
        if internal:
            return internal
        given = {
            "mint": self.mint_url,
            "treasury": self.treasury_url,
            "notary": self.notary_url,
            "tables": self.tables_url,
        }.get(service) or self.peer_urls.get(service)
        if given:
            return given.rstrip("/")
        if self.port == 0:
            return None
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host  # noqa: S104
        host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
        return f"http://{host}:{self.port}"

    @property
    def keys_dir(self) -> Path:
        """The league's private keys, one file per role, mode 0600 (``LEAGUE_KEYS_DIR``, else
        ``keys`` in the data directory, a 0700 directory)."""
        return self.keys_location or self.data_dir / "keys"

    def checkpoint_path(self, service: str) -> Path:
        """Where ``service`` keeps the last checkpoint it signed, outside its database."""
        return self.data_dir / "checkpoints" / f"{service}.checkpoint"

    @property
    def manifest_path(self) -> Path:
        """The signed league manifest (public: it is what ``GET /mint/manifest`` serves)."""
        return self.data_dir / "manifest.json"

    @property
    def pgdata(self) -> Path:
        """The embedded PostgreSQL's data directory (unused when ``database_url`` is set)."""
        return embedded_pgdata(self.data_dir)

    @property
    def database(self) -> str:
        """The database URL, which these settings must have (see :meth:`with_database`)."""
        if not self.database_url:
            raise LeagueError("no database URL: set DATABASE_URL or let `league serve` start one")
        return self.database_url

    def with_database(self) -> LeagueSettings:
        """These settings with a database URL: DATABASE_URL's, else the embedded server's
        (started now if it is not running; it keeps running until `league db stop`)."""
        if self.database_url:
            return self
        return self.model_copy(update={"database_url": start_embedded(self.pgdata).url})
