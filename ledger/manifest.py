"""The league manifest: the root-signed page that says who signs what (docs/architecture.md §3 and
§5).

It names the league, its root key (the signer, which clients pin on first use), the mint,
treasury and notary keys, the print-run table, the note set (with its hash) and the published
policies, and optionally where each service answers (``urls``: the services find each other
there, and an auditor finds them). Every certificate names the hash of the manifest it was
issued under, so a verifier holding the manifest knows which key must have signed it and which
serials can exist.

A manifest without ``urls`` has no such member on the wire (never ``null``): it canonicalizes,
signs and hashes exactly as manifests did before URLs could be named.
"""

from __future__ import annotations

import hashlib
import hmac
import urllib.parse
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from ledger.canonical import signing_bytes
from ledger.certificates import Certificate, NoteCertificate, PrintCertificate
from ledger.errors import BadSignatureError, SchemaError, VerificationError, WrongLeague
from ledger.keys import PublicKey, SigningKey
from ledger.limits import MAX_LEAGUE_ID_CHARS, MAX_LEAGUE_NAME_CHARS, MAX_STAMP_BATCH
from ledger.note_set import DEFAULT_NOTE_SET, NoteSet, parse_note_serial
from ledger.print_runs import DEFAULT_PRINT_RUNS, MISPRINT, PrintRunTable, parse_serial
from ledger.wire import HashText, KeyText, SignedModel, WireModel, hash_text

LeagueId = Annotated[
    str, Field(pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", max_length=MAX_LEAGUE_ID_CHARS)
]
LeagueName = Annotated[
    str, Field(pattern=r"^[^\x00-\x1f\x7f]+$", min_length=1, max_length=MAX_LEAGUE_NAME_CHARS)
]
Count = Annotated[int, Field(ge=0, le=1_000_000)]
#: Longest service URL a manifest names.
MAX_URL_CHARS = 512
#: The services whose URLs a manifest may name.
SERVICE_NAMES = ("mint", "treasury", "notary")
#: Every service a league runs: those, and the tables service (its key named in the
#: manifest, outside the manifest's id; it answers at the league's URL).
LEAGUE_SERVICES = (*SERVICE_NAMES, "tables")


def check_service_url(text: str) -> str:
    """``text`` if it is a service's base URL as a manifest may name it: ``http`` or
    ``https``, a host (not percent-encoded), a port from 1 if any, no credentials, query or
    fragment, no ``.`` or ``..`` path segments, no trailing ``/``, printable ASCII, at most
    :data:`MAX_URL_CHARS`; a ``ValueError`` saying why not otherwise."""
    if len(text) > MAX_URL_CHARS:
        raise ValueError(f"a service URL is at most {MAX_URL_CHARS} characters")
    if not text.isascii() or not text.isprintable() or " " in text:
        raise ValueError("a service URL is printable ASCII without spaces")
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("a service URL is http:// or https://")
    if not parts.hostname:
        raise ValueError("a service URL names a host")
    if "@" in parts.netloc:
        raise ValueError("a service URL carries no credentials")
    if parts.query or parts.fragment or "?" in text or "#" in text:
        raise ValueError("a service URL has no query or fragment")
    if text.endswith("/"):
        raise ValueError("a service URL has no trailing /")
    if port == 0 or parts.netloc.endswith(":"):
        raise ValueError("a service URL's port is a number from 1")
    if "%" in parts.netloc:
        raise ValueError("a service URL's host is not percent-encoded")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise ValueError("a service URL's path has no . or .. segments")
    return text


ServiceUrl = Annotated[str, Field(max_length=MAX_URL_CHARS), AfterValidator(check_service_url)]


class ServiceUrls(WireModel):
    """Where each service answers (its base URL: ``/mint/...``, ``/treasury/...`` and so on
    are under it). A gateway serving the whole league is the same URL three times."""

    WHAT = "service URLs"

    mint: ServiceUrl
    treasury: ServiceUrl
    notary: ServiceUrl

    def of(self, service: str) -> str:
        """The URL of ``service`` (one of :data:`SERVICE_NAMES`)."""
        if service not in SERVICE_NAMES:
            raise KeyError(service)
        url: str = getattr(self, service)
        return url


#: Expected hashes per print at a full run: 0.5-1 s of one core for the pure-Python solver
#: here (``docs/economy.md``, ``bench/drain.py``).
DEFAULT_STAMP_WORK = 1 << 20
#: A witnessed table's work per mark (``Policies.table_work_per_mark``): the base price of
#: stamping one print per 30 marks (the cheapest single), rounded up, as a faucet claim's.
DEFAULT_TABLE_WORK_PER_MARK = -(-DEFAULT_STAMP_WORK // 30)
#: A witnessed table's move clock (``Policies.table_move_seconds``, docs/formats.md "The move
#: clock"): seconds it waits for the request it waits for, from its last event; and a duel's
#: wait for its second key (``table_join_seconds``).
DEFAULT_TABLE_MOVE_SECONDS = 300
DEFAULT_TABLE_JOIN_SECONDS = 900


class Policies(WireModel):
    """Published policies (docs/architecture.md §4): they slow a script down; the fixed runs are
    the bound."""

    WHAT = "policies"

    #: Marks the faucet converts to notes per key per UTC day (Book V.5).
    faucet_marks_per_day: Count
    #: Prints one key may have stamped per UTC day.
    stamp_allowance_per_day: Count
    #: Prints in one stamping request.
    stamp_batch_limit: Annotated[int, Field(ge=1, le=MAX_STAMP_BATCH)]
    #: Expected hashes of proof of work per print of a full run (``ledger.work``): the cost of
    #: drawing supply down that no script avoids. 1 makes it free (test leagues).
    stamp_work: Annotated[int, Field(ge=1, le=2**40)] = DEFAULT_STAMP_WORK
    #: How many times that a print of an almost empty run costs (rising by tenths).
    stamp_work_rise: Annotated[int, Field(ge=1, le=1000)] = 4
    #: Prints one source (an IPv4 /24 or IPv6 /56) may have stamped per minute, in steady
    #: state, and at once after a quiet spell (a token bucket).
    source_prints_per_minute: Annotated[int, Field(ge=1, le=1_000_000)] = 120
    source_prints_burst: Annotated[int, Field(ge=1, le=1_000_000)] = 200
    #: Expected hashes of proof of work a witnessed table's open carries per mark its venue
    #: pays at most (``game.window.rewards.table_work``, docs/economy.md): a mark earned at a
    #: table costs what a faucet mark costs. Absent from the manifest at its default, so a
    #: manifest founded before it reads and hashes as it always did.
    table_work_per_mark: Annotated[int, Field(ge=1, le=2**40)] = Field(
        default=DEFAULT_TABLE_WORK_PER_MARK,
        exclude_if=lambda work: work == DEFAULT_TABLE_WORK_PER_MARK,
    )
    #: The move clock of witnessed tables (seconds; ``ledger.tables.clock_for``): published
    #: here so an auditor judges every log on the clock its league announced. Absent from the
    #: manifest at their defaults, as ``table_work_per_mark``.
    table_move_seconds: Annotated[int, Field(ge=1, le=7 * 86_400)] = Field(
        default=DEFAULT_TABLE_MOVE_SECONDS,
        exclude_if=lambda seconds: seconds == DEFAULT_TABLE_MOVE_SECONDS,
    )
    table_join_seconds: Annotated[int, Field(ge=1, le=7 * 86_400)] = Field(
        default=DEFAULT_TABLE_JOIN_SECONDS,
        exclude_if=lambda seconds: seconds == DEFAULT_TABLE_JOIN_SECONDS,
    )
    #: Each service signs a checkpoint of its log at least this often while it grows
    #: (milliseconds): a receipt's checkpoint is at most this old.
    checkpoint_interval_ms: Annotated[int, Field(ge=10, le=3_600_000)] = 1000
    #: ... and sooner, once this many events wait for one.
    checkpoint_max_pending: Annotated[int, Field(ge=1, le=1_000_000)] = 10_000


DEFAULT_POLICIES = Policies(
    faucet_marks_per_day=50, stamp_allowance_per_day=50, stamp_batch_limit=MAX_STAMP_BATCH
)


class LeagueManifest(SignedModel):
    """The league's signed constitution: keys, runs, notes, policies."""

    KIND: ClassVar[str] = "manifest"
    WHAT = "league manifest"

    kind: Literal["manifest"]
    league: LeagueId
    name: LeagueName
    root: KeyText
    mint: KeyText
    treasury: KeyText
    notary: KeyText
    print_runs: PrintRunTable
    note_set: NoteSet
    note_set_hash: HashText
    policies: Policies
    #: Where the services answer; absent from the wire (and the signed bytes) when None.
    urls: ServiceUrls | None = None
    #: The tables service's key (witnessed play): absent from the wire when None, and never
    #: part of the manifest's id (:meth:`hash_text`), so a league founded before the service
    #: existed adds it by a manifest signed again with the id every certificate names.
    tables: KeyText | None = None

    @model_validator(mode="before")
    @classmethod
    def _urls_absent_not_null(cls, data: Any) -> Any:
        # One wire form per manifest: a manifest naming no URLs has no ``urls`` member.
        if isinstance(data, Mapping) and "urls" in data and data["urls"] is None:
            raise SchemaError("urls: absent when the manifest names no URLs, never null")
        if isinstance(data, Mapping) and "tables" in data and data["tables"] is None:
            raise SchemaError("tables: absent when the manifest names no tables key, never null")
        return data

    @model_serializer(mode="wrap")
    def _sig_last(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """As every signed object (``sig`` last), and ``urls`` left out when None: a
        manifest naming no URLs has the bytes (and the hash) it had before they existed."""
        data: dict[str, Any] = handler(self)
        if data.get("urls", ...) is None:
            del data["urls"]
        if data.get("tables", ...) is None:
            del data["tables"]
        if "sig" in data:
            data["sig"] = data.pop("sig")
        return data

    @model_validator(mode="after")
    def _note_set_hash_matches(self) -> Self:
        if not hmac.compare_digest(self.note_set_hash, hash_text(self.note_set.hash())):
            raise ValueError("note_set_hash is not the hash of the note set")
        return self

    def hash_text(self) -> str:
        """The manifest's id as certificates name it (computed once: every certificate
        checked under the manifest compares it): the hash of its signed bytes without the
        ``tables`` key, which names no issuer and may be added later (:func:`with_tables`)."""
        return self._id_text

    @cached_property
    def _id_text(self) -> str:
        body = self.body()
        body.pop("tables", None)
        return hash_text(hashlib.sha256(signing_bytes(self.KIND, body)).digest())

    def check_addressed(self, server: str, what: str, league: str, manifest: str) -> None:
        """Raise :class:`WrongLeague` unless a signed request (``what``: "the claim", "the
        order", ...) names this league and this manifest: a request signed for one league
        is never good at another, nor under an earlier manifest of the same league."""
        if league != self.league or not hmac.compare_digest(manifest, self.hash_text()):
            raise WrongLeague(
                f"this {server} serves league {self.league} under manifest {self.hash_text()}; "
                f"{what} is for league {league} under manifest {manifest}"
            )

    def verify_root(self, pinned: PublicKey | None = None) -> PublicKey:
        """Check the root signature; with ``pinned``, the root must be that key.

        Without a pin (first use) the manifest must be signed by the root it names; the caller
        then pins the returned key.
        """
        root = PublicKey.from_text(self.root)
        if pinned is not None and pinned != root:
            raise BadSignatureError("the manifest names a different root key than the pinned one")
        self.verify(root)
        return root

    def issuer_key(self, certificate: Certificate) -> PublicKey:
        """The key that must have signed ``certificate``: mint for prints, treasury for notes."""
        text = self.mint if isinstance(certificate, PrintCertificate) else self.treasury
        return PublicKey.from_text(text)

    def check_certificate(self, certificate: Certificate) -> None:
        """Refuse a certificate that this manifest's runs or note set cannot have issued.

        The signature is not checked here (``verify_chain`` does that with ``issuer_key``).
        """
        if not hmac.compare_digest(certificate.manifest, self.hash_text()):
            raise VerificationError(
                f"{certificate.serial} was issued under another manifest than this league's"
            )
        if isinstance(certificate, NoteCertificate):
            parse_note_serial(certificate.serial, self.note_set)
            return
        if certificate.finish == MISPRINT:
            return
        parsed = parse_serial(certificate.serial, self.print_runs)
        run = self.print_runs.run(parsed.title)
        if (parsed.title, parsed.finish, run.set) != (
            certificate.title,
            certificate.finish,
            certificate.set,
        ):
            raise VerificationError(
                f"{certificate.serial} is a {parsed.finish} {parsed.title} of the {run.set} set "
                f"in this league's runs, not what its certificate says"
            )


def build_manifest(
    root: SigningKey,
    *,
    league: str,
    name: str,
    mint: PublicKey,
    treasury: PublicKey,
    notary: PublicKey,
    print_runs: PrintRunTable = DEFAULT_PRINT_RUNS,
    note_set: NoteSet = DEFAULT_NOTE_SET,
    policies: Policies = DEFAULT_POLICIES,
    urls: ServiceUrls | None = None,
    tables: PublicKey | None = None,
) -> LeagueManifest:
    """Sign a manifest with ``root`` (defaults: the published runs, note set and policies;
    no service URLs; no tables key)."""
    named: dict[str, Any] = {} if urls is None else {"urls": urls.to_wire()}
    if tables is not None:
        named["tables"] = tables.to_text()
    return LeagueManifest.sign(
        root,
        league=league,
        name=name,
        root=root.public.to_text(),
        mint=mint.to_text(),
        treasury=treasury.to_text(),
        notary=notary.to_text(),
        print_runs=print_runs.to_wire(),
        note_set=note_set.to_wire(),
        note_set_hash=hash_text(note_set.hash()),
        policies=policies.to_wire(),
        **named,
    )


def with_tables(manifest: LeagueManifest, root: SigningKey, tables: PublicKey) -> LeagueManifest:
    """``manifest`` naming ``tables`` as the tables service's key, signed again by ``root``
    (which must be the root it names): its id (:meth:`LeagueManifest.hash_text`) is unchanged,
    so every certificate and request made under it stays good."""
    if root.public.to_text() != manifest.root:
        raise BadSignatureError("the manifest is signed again only by the root key it names")
    fields = manifest.body()
    fields.pop("kind")
    fields["tables"] = tables.to_text()
    return LeagueManifest.sign(root, **fields)
