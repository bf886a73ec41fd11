"""The independent auditor's core (docs/operations.md "Auditing a running league"): every service's
log checked from its feed.

Pure (no IO): the caller (``league audit``) downloads, this module judges. Given the league
manifest (its root signature checked here), the checkpoints each service serves, those kept
from a previous audit, each service's signed feed page by page, the notary's holders pages
and the witnesses' evidence, :class:`Auditor` checks:

- every log: seqs dense from 0, every event's leaf hash and signature, the Merkle root
  recomputed leaf by leaf (:class:`ledger.merkle.CompactRange`) equal to every checkpoint's
  root at its size, every checkpoint signed by the service's key under the origin
  ``<league>/<service>``; a checkpoint kept from the previous run must be a prefix of the log
  as served now (its root at its size: a rewritten or restored log fails here);
- cosignatures: every line on a served checkpoint whose key id is a known witness's (each
  other service of the manifest, named by its own log's origin, tlog-cosignature type 0x04)
  must verify; the report says which witness cosigned what size; any evidence a witness
  keeps (``GET /<service>/evidence``) is a violation of the log it accuses;
- the mint: every event a ``print-stamped`` whose certificate is mint-signed, of this league's
  manifest and runs, names its own event; every serial unique; each run's numbers exactly
  first..first+n-1 (no run ever exceeded);
- the notary: every recorded hop a valid next link of its print's chain from the certificate
  the mint stamped (the checks of :func:`ledger.endorsements.verify_chain`, link by link);
  one hop recorded per (serial, issue, hop), so the first recorded is the winner; every refused
  conflict a valid fraud proof whose first endorsement is the recorded winner it names; and
  every holder the notary's projection serves (``GET /notary/holders``) equal to the one
  derived from the events, at the log size the page was read at; a note's hops are checked
  on the chain of the issue the treasury made out (issue by issue);
- the treasury (when served): every ``note-issued`` certificate treasury-signed, of this
  manifest and its note set, naming its own event; a note's issues dense at the stream
  versions the service writes (issue n is version 2n-1, its return 2n), never issued while
  out; every ``note-returned`` of the issue out, endorsed to the treasury's key and matching
  the notary's hop it names; the supply (reserve + out per denomination) the note set after
  every event; the faucet's ``faucet_marks_per_day`` per key per UTC day of the events'
  time (L-12); each purchase's saga in order, paid as it says, its print the mint's stamp to
  the buyer, closed with exact change, a full refund or nothing moved (L-18). An event type
  not in :data:`ledger.events.TREASURY_EVENTS` fails naming the type;
- finish upgrades (L-20): every ``print-returned`` and ``print-reissued`` names a purchase
  opened with that upgrade (none, or no treasury log, fails), reissued only to its buyer; every
  return (a note's or a print's) matched to the notary's hop it names, one return per hop,
  unless that hop lies past the notary's audited log (not matched this run, never counted
  notarized); a refunded upgrade hands its print back.

Checking a page splits in two. :func:`check_page` is stateless (a page's JSON text in, the
facts the stateful checks need out: leaf hashes verified, signatures verified, bodies parsed),
so a caller may run it in worker processes, one page each; :meth:`Auditor.add_checked` takes
its results in seq order and does the rest. :meth:`Auditor.add` does both in this process.

The first violation raises :class:`AuditFailure` naming the service and the seq. Feed the mint,
then the treasury, then the notary (a hop refers to a stamp or a note's issue; a return names
a notary hop, matched when the notary's log comes). Memory is bounded per print, note issue,
hop, open purchase and faucet day, never per page: events are judged as they come and dropped.
"""

from __future__ import annotations

import binascii
import bisect
import hashlib
import hmac
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple

import orjson
from pydantic import ValidationError

from ledger.api.logs import Feed, FeedEvent
from ledger.api.notary import Holders
from ledger.api.treasury import purchase_price
from ledger.api.witness import EvidenceList
from ledger.canonical import domain_tag
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import Checkpoint, CosignatureVerifier, log_verifier
from ledger.endorsements import Endorsement
from ledger.errors import BadSignatureError, LedgerError, VerificationError
from ledger.events import (
    MINT_EVENTS,
    NOTARY_EVENTS,
    TREASURY_EVENTS,
    ConflictRefused,
    EventBody,
    HopRecorded,
    NoteIssued,
    NoteReturned,
    OrderRefused,
    PrintDelivered,
    PrintReissued,
    PrintReturned,
    PrintStamped,
    PurchaseClosed,
    PurchaseOpened,
    PurchaseStep,
    note_stream,
    parse_event,
    print_stream,
    purchase_stream,
)
from ledger.keys import PublicKey
from ledger.manifest import LeagueManifest
from ledger.merkle import EMPTY_ROOT, CompactRange
from ledger.print_runs import MISPRINT, RunFinish
from ledger.wire import MAX_SAFE_INTEGER, hash_text

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's
#: log is fed).
AUDITED_SERVICES = ("mint", "treasury", "notary")
#: Each audited service's event types.
SERVICE_EVENTS: dict[str, Mapping[str, type[EventBody]]] = {
    "mint": MINT_EVENTS,
    "treasury": TREASURY_EVENTS,
    "notary": NOTARY_EVENTS,
}
#: The services of a manifest that witness each other's logs (each cosigns the others').
WITNESSES = ("mint", "treasury", "notary")


class AuditFailure(VerificationError):
    """The first violation an audit found: its service, the seq (when an event is at fault)
    and why."""

    def __init__(self, service: str, seq: int | None, reason: str) -> None:
        where = f"{service} seq {seq}" if seq is not None else service
        super().__init__(f"audit failed: {where}: {reason}")
        self.service = service
        self.seq = seq
        self.reason = reason


# -- the stateless half: one page's facts ------------------------------------------------------


class Stamped(NamedTuple):
    """A ``print-stamped`` event, its leaf and signatures checked."""

    seq: int
    leaf_hash: bytes
    serial: str
    issue: int
    issued_to: str
    title: str
    finish: str
    #: hash_text of the certificate's signing bytes (the first link of its chain).
    certificate: str
    #: Why it fails before the stateful checks (stream, mint signature, event), or None.
    early: str | None
    #: Why the manifest refuses it (checked after uniqueness and runs), or None.
    late: str | None
    #: A ``print-reissued`` (L-20): the order it answers; None for a stamp.
    reissue: str | None = None
    #: Its version in the print's stream.
    version: int = 1


class Hop(NamedTuple):
    """A ``hop-recorded`` event, its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    issue: int
    serial: str
    hop: int
    prev: str
    from_: str
    to: str
    digest: bytes
    #: Whether the endorsement's signature verifies under its own ``from`` key.
    signed: bool


class Refused(NamedTuple):
    """A ``conflict-refused`` event, its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    issue: int
    prior: int
    serial: str
    hop: int
    first: bytes
    #: Why the fraud proof is invalid, or None.
    invalid: str | None


class Issued(NamedTuple):
    """A ``note-issued`` event, its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    stream: str
    version: int
    #: The UTC day of the event's time (the faucet's day, L-12).
    day: str
    serial: str
    denomination: int
    issue: int
    issued_to: str
    reason: str
    request_id: str
    #: hash_text of the certificate's signing bytes (the first link of the issue's chain).
    certificate: str
    #: Why it fails before the stateful checks (treasury signature, event), or None.
    early: str | None
    #: Why the manifest refuses it (its note set, its hash), or None.
    late: str | None


class Returned(NamedTuple):
    """A ``note-returned`` event (or the mint's ``print-returned``, L-20: ``purchase_id`` is
    its order's id), its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    stream: str
    version: int
    serial: str
    issue: int
    notarized: int
    purchase_id: str
    #: The endorsement to the treasury: its serial, hop, receiver and digest.
    endorsed: str
    hop: int
    to: str
    digest: bytes
    signed: bool


class Step(NamedTuple):
    """A step of a purchase's saga, its leaf and signature checked."""

    seq: int
    leaf_hash: bytes
    stream: str
    version: int
    type: str
    purchase_id: str
    #: purchase-opened: the price, the marks paid (and the payment's notes' sum), the buyer.
    price: int
    paid: int
    payment: int
    buyer: str
    #: print-delivered: the print's serial, hash_text of its certificate's signing bytes and
    #: its receiver.
    delivered: tuple[str, str, str] | None
    #: purchase-closed: the outcome and the denominations of the notes issued with it.
    outcome: str
    notes: tuple[tuple[str, int, int], ...]
    #: purchase-opened: the published price of what it buys (0: a title the league does not
    #: print), the finish bought and an upgrade's returned print (serial, issue).
    listed: int = 0
    finish: str = "standard"
    returned: tuple[str, int] | None = None
    #: order-refused: the returned print issued again (serial, certificate, receiver).
    reissued: tuple[str, str, str] | None = None
    #: purchase-opened: the serials handed over (paid or returned) whose last endorsement is
    #: not the buyer's own (L-21: a purchase takes only what its buyer signed over).
    foreign: tuple[str, ...] = ()


Fact = Stamped | Hop | Refused | Issued | Returned | Step


@dataclass(frozen=True, slots=True)
class CheckedPage:
    """What :func:`check_page` found in one page: the facts of its events in order, then the
    first event that failed a stateless check (its seq when known, and why), if any."""

    facts: list[Fact]
    failure: tuple[int | None, str] | None = None


@dataclass(frozen=True, slots=True)
class PageContext:
    """What checking one page of ``service``'s feed needs; small and picklable (a worker
    process gets it with every page and parses the manifest once)."""

    service: str
    #: The manifest's wire JSON (its root signature was checked by the :class:`Auditor`).
    manifest: str


class _Slow(Exception):
    """The fast path cannot vouch for these bytes: the reference path decides."""


@dataclass(frozen=True, slots=True)
class _Setup:
    manifest: LeagueManifest
    mint: PublicKey
    keys: dict[str, PublicKey]


@lru_cache(maxsize=4)
def _setup(manifest_text: str) -> _Setup:
    manifest = LeagueManifest.from_wire(manifest_text)  # its hash_text computed once
    keys = {name: _public(getattr(manifest, name)) for name in WITNESSES}
    return _Setup(manifest, keys["mint"], keys)


_KEYS: dict[str, PublicKey] = {}
_MAX_KEYS = 1 << 16


def _public(text: str) -> PublicKey:
    """``PublicKey.from_text``, remembered: the point check costs as much as a signature and
    a league's keys recur (its own keys on every event, players' keys hop after hop)."""
    found = _KEYS.get(text)
    if found is None:
        found = PublicKey.from_text(text)
        if len(_KEYS) >= _MAX_KEYS:
            _KEYS.clear()
        _KEYS[text] = found
    return found


def check_page(context: PageContext, text: str | bytes) -> CheckedPage:
    """Check one page of a feed (``GET /<service>/events`` JSON) statelessly: every event's
    leaf hash and signature, its body's schema, the signatures inside it. Pure; safe to run
    in another process."""
    setup = _setup(context.manifest)
    service = context.service
    key = setup.keys[service]
    facts: list[Fact] = []
    try:
        events = _fast_events(text)
    except _Slow:
        try:
            served = Feed.model_validate_json(text).events
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            return CheckedPage(facts, (None, f"a page of the feed is not a feed: {first['msg']}"))
        for item in served:
            try:
                facts.append(_reference(setup, context.service, key, item))
            except LedgerError as exc:
                return CheckedPage(facts, (item.seq, exc.diagnostics()))
        return CheckedPage(facts)
    at, count = 0, len(events)
    while at < count:
        # The fast path over the events from ``at`` up to the first it cannot vouch for, then
        # every signature of that run verified in one tight loop (libsodium's code and tables
        # stay in the caches); the first event whose own signature fails there goes to the
        # reference path, as does the one the fast path refused, and the run goes on after it.
        batch: list[_Pending] = []
        for raw in itertools.islice(events, at, None):
            try:
                batch.append(_fast(setup, service, key, raw))
            except (_Slow, RecursionError):
                break
        at += _verify_batch(key, batch, facts)
        if at == count:
            break
        raw = events[at]
        at += 1
        seq = raw.get("seq") if isinstance(raw, dict) else None
        where = seq if type(seq) is int else None
        try:
            item = FeedEvent.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            return CheckedPage(facts, (where, f"a feed event is malformed: {first['msg']}"))
        try:
            facts.append(_reference(setup, service, key, item))
        except LedgerError as exc:
            return CheckedPage(facts, (item.seq, exc.diagnostics()))
    return CheckedPage(facts)


# The fast path: the same verdicts as the reference path (FeedEvent.verified, parse_event, the
# models' own signing bytes) for the bytes it accepts, at a fraction of the cost; anything it
# cannot vouch for goes to the reference path. The body is validated by its strict model
# first, so it holds no float and no integer beyond the model's bounds (all under 2**53), and
# it is exactly the model's wire form (no defaults, no coercion, no unknown field). RFC 8785
# of such JSON, when all its text is ASCII, is exactly orjson's compact JSON with sorted keys:
# keys sort the same in UTF-16 and code points, and both escape '"', '\\' and C0 controls
# alike (tests/ledger/test_audit.py compares them). Its signatures are verified a run of
# events at a time (:func:`_verify_batch`), the facts built meanwhile on the assumption that
# they verify and built again, by the reference's own checks, for an event where one fails.

_EVENT_FIELDS = frozenset(
    ("seq", "stream", "stream_version", "type", "body", "recorded_at", "leaf_hash", "signature")
)
_AT = re.compile(r"[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_EVENT_TAG = domain_tag("event")
#: The fast path's event types, and the signed object each body carries.
_FAST: dict[str, tuple[type[EventBody], str, bytes]] = {
    PrintStamped.TYPE: (PrintStamped, "certificate", domain_tag(PrintCertificate.KIND)),
    HopRecorded.TYPE: (HopRecorded, "endorsement", domain_tag(Endorsement.KIND)),
    NoteIssued.TYPE: (NoteIssued, "certificate", domain_tag(NoteCertificate.KIND)),
    NoteReturned.TYPE: (NoteReturned, "endorsement", domain_tag(Endorsement.KIND)),
}


def _fast_events(text: str | bytes) -> list[Any]:
    try:
        page = orjson.loads(text)
    except (ValueError, RecursionError):  # not JSON, or not UTF-8: the reference path names it
        raise _Slow from None
    if type(page) is not dict or page.keys() != {"events", "next_after"}:
        raise _Slow
    events = page["events"]
    if type(events) is not list or type(page["next_after"]) is not int:
        raise _Slow
    return events


def _canonical(value: Any) -> bytes:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer past 64 bits, nested too deeply: not ours
        raise _Slow from None
    if not data.isascii():
        raise _Slow
    return data


def _check_return_event(log: _Log, fact: Returned, stream: str, to: str, issuer: str) -> None:
    """A return (of a note to the treasury, or a print to the mint) recorded where its
    issuer's log records one (issue n's return is version 2n of the item's stream), carrying
    a valid endorsement of that item to the issuer's key."""
    n = fact.issue
    if fact.stream != stream or fact.version != 2 * n:
        raise log.fail(
            fact.seq,
            f"the return of issue {n} of {fact.serial} is recorded as "
            f"version {fact.version} of stream {fact.stream!r}, not "
            f"version {2 * n} of {stream!r}",
        )
    if fact.endorsed != fact.serial or fact.to != to or not fact.signed:
        raise log.fail(
            fact.seq,
            f"the return of {fact.serial} does not carry a valid "
            f"endorsement of it to the {issuer}'s key",
        )


_FROM_URL = bytes.maketrans(b"-_", b"+/")
_TO_URL = bytes.maketrans(b"+/", b"-_")


def _signature(text: object) -> bytes:
    # base64.urlsafe_b64decode and its encoding back, without their per-call set-up.
    if type(text) is not str or len(text) != 86:
        raise _Slow
    try:
        data = text.encode("ascii")
        raw = binascii.a2b_base64(data.translate(_FROM_URL) + b"==")
    except (binascii.Error, ValueError):
        raise _Slow from None
    if binascii.b2a_base64(raw, newline=False).translate(_TO_URL)[:86] != data:
        raise _Slow
    return raw


class _Pending(NamedTuple):
    """An event the fast path vouched for but for its signatures: its facts if they verify,
    its leaf and signature, the signature its body carries (key, signed bytes, base64url;
    None when none is checked), and the arguments of :func:`_facts` to build them again."""

    fact: Fact
    leaf: bytes
    signature: bytes
    inner: tuple[PublicKey, bytes, str] | None
    again: tuple[_Setup, int, str, int, str, bytes, EventBody, bytes]


class _Deferred:
    """A stand-in for :func:`_verifies` that keeps the signature to verify and answers yes."""

    __slots__ = ("job",)

    def __init__(self) -> None:
        self.job: tuple[PublicKey, bytes, str] | None = None

    def __call__(self, key: PublicKey, signing: bytes, sig: str) -> bool:
        self.job = (key, signing, sig)
        return True


def _verify_batch(key: PublicKey, batch: list[_Pending], facts: list[Fact]) -> int:
    """Verify the events' signatures in order, appending each event's facts to ``facts`` (built
    again by the real checks where the signature its body carries fails); how many events'
    own signatures verified (the first that did not, and those after it, are not appended)."""
    for n, (fact, leaf, signature, inner, again) in enumerate(batch):
        try:
            key.verify_raw(leaf, signature)
        except BadSignatureError:
            return n
        facts.append(fact if inner is None or _verifies(*inner) else _facts(*again))
    return len(batch)


def _fast(setup: _Setup, service: str, key: PublicKey, raw: Any) -> _Pending:
    if type(raw) is not dict or raw.keys() != _EVENT_FIELDS:
        raise _Slow
    seq, stream, version = raw["seq"], raw["stream"], raw["stream_version"]
    kind, body, at = raw["type"], raw["body"], raw["recorded_at"]
    if not (
        type(seq) is int
        and 0 <= seq <= MAX_SAFE_INTEGER
        and type(stream) is str
        and type(version) is int
        and 1 <= version <= MAX_SAFE_INTEGER
        and type(body) is dict
        and type(at) is str
        and _AT.fullmatch(at)
    ):
        raise _Slow
    fast = _FAST.get(kind) if type(kind) is str else None
    if fast is None or kind not in SERVICE_EVENTS[service]:
        raise _Slow
    model, inner, tag = fast
    try:
        datetime.fromisoformat(at[:-1])
        parsed = model.model_validate(body)  # strict, as from_wire; its errors go slow
    except (ValueError, LedgerError):
        raise _Slow from None
    leaf = _EVENT_TAG + _canonical(
        {
            "body": body,
            "recorded_at": at,
            "seq": seq,
            "stream": stream,
            "stream_version": version,
            "type": kind,
        }
    )
    digest = hashlib.sha256(b"\x00" + leaf).digest()
    if binascii.b2a_base64(digest, newline=False).decode("ascii") != raw["leaf_hash"]:
        raise _Slow
    signature = _signature(raw["signature"])
    signed = tag + _canonical({k: v for k, v in body[inner].items() if k != "sig"})
    again = (setup, seq, stream, version, at[:10], digest, parsed, signed)
    deferred = _Deferred()
    fact = _facts(*again, verify=deferred)
    return _Pending(fact, leaf, signature, deferred.job, again)


def _reference(setup: _Setup, service: str, key: PublicKey, item: FeedEvent) -> Fact:
    """The facts of one served event by the protocol's own code (raises on a violation)."""
    event = item.verified(key)
    body = parse_event(event, SERVICE_EVENTS[service])
    signed = (
        body.certificate.signing_bytes
        if isinstance(body, PrintStamped | PrintReissued | NoteIssued)
        else body.endorsement.signing_bytes
        if isinstance(body, HopRecorded | NoteReturned | PrintReturned)
        else b""
    )
    day = event.recorded_at.astimezone(UTC).date().isoformat()
    return _facts(
        setup, event.seq, event.stream, event.stream_version, day, event.leaf_hash, body, signed
    )


def _verifies(key: PublicKey, signing: bytes, sig: str) -> bool:
    try:
        key.verify_raw(
            signing, binascii.a2b_base64(sig.encode("ascii").translate(_FROM_URL) + b"==")
        )
    except (BadSignatureError, binascii.Error, ValueError):
        return False
    return True


def _certificate_faults(
    setup: _Setup,
    issuer: str,
    certificate: PrintCertificate | NoteCertificate,
    seq: int,
    signed: bytes,
    verify: Callable[[PublicKey, bytes, str], bool],
) -> tuple[str | None, str | None]:
    """What is wrong with the certificate event ``seq`` of ``issuer``'s log issued, if
    anything: ``early`` (not signed by the issuer's key, or naming another event) and ``late``
    (refused by the manifest's own certificate check)."""
    early = None
    if not verify(setup.keys[issuer], signed, certificate.sig):
        early = f"{certificate.serial}'s certificate is not signed by the league's {issuer}"
    elif certificate.event != seq:
        early = f"{certificate.serial}'s certificate names event {certificate.event}, not this one"
    late = None
    try:
        setup.manifest.check_certificate(certificate)
    except LedgerError as exc:
        late = exc.diagnostics()
    return early, late


def _facts(
    setup: _Setup,
    seq: int,
    stream: str,
    version: int,
    day: str,
    leaf_hash: bytes,
    body: EventBody,
    signed: bytes,
    verify: Callable[[PublicKey, bytes, str], bool] = _verifies,
) -> Fact:
    """The facts of one event whose leaf and signature verified; ``signed`` is the signing
    bytes of the certificate or endorsement it carries, ``day`` its time's UTC date, and
    ``verify`` checks the signature it carries."""
    if isinstance(body, PrintStamped | PrintReissued):
        certificate = body.certificate
        if stream != body.stream():
            early: str | None = f"the event's stream {stream!r} is not {body.stream()!r}"
            late = None
        else:
            early, late = _certificate_faults(setup, "mint", certificate, seq, signed, verify)
        return Stamped(
            seq,
            leaf_hash,
            certificate.serial,
            certificate.issue,
            certificate.issued_to,
            certificate.title,
            certificate.finish,
            hash_text(hashlib.sha256(signed).digest()),
            early,
            late,
            body.order_id if isinstance(body, PrintReissued) else None,
            version,
        )
    if isinstance(body, HopRecorded):
        e = body.endorsement
        return Hop(
            seq,
            leaf_hash,
            body.issue,
            e.serial,
            e.hop,
            e.prev,
            e.from_,
            e.to,
            hashlib.sha256(signed).digest(),
            verify(_public(e.from_), signed, e.sig),
        )
    if isinstance(body, ConflictRefused):
        invalid = None
        try:
            body.proof.verify()
        except LedgerError as exc:
            invalid = exc.diagnostics()
        first = body.proof.first
        return Refused(
            seq,
            leaf_hash,
            body.issue,
            body.prior,
            first.serial,
            first.hop,
            first.hash(),
            invalid,
        )
    if isinstance(body, NoteIssued):
        return _issued(setup, seq, stream, version, day, leaf_hash, body, signed, verify)
    if isinstance(body, NoteReturned | PrintReturned):
        e = body.endorsement
        return Returned(
            seq,
            leaf_hash,
            stream,
            version,
            body.serial,
            body.issue,
            body.notarized,
            body.purchase_id if isinstance(body, NoteReturned) else body.order_id,
            e.serial,
            e.hop,
            e.to,
            hashlib.sha256(signed).digest(),
            verify(_public(e.from_), signed, e.sig),
        )
    if isinstance(body, PurchaseStep):
        return _step(setup.manifest, seq, stream, version, leaf_hash, body)
    raise VerificationError(f"an event of type {body.TYPE!r} is not audited")  # pragma: no cover


def _issued(
    setup: _Setup,
    seq: int,
    stream: str,
    version: int,
    day: str,
    leaf_hash: bytes,
    body: NoteIssued,
    signed: bytes,
    verify: Callable[[PublicKey, bytes, str], bool],
) -> Issued:
    certificate = body.certificate
    early, late = _certificate_faults(setup, "treasury", certificate, seq, signed, verify)
    return Issued(
        seq,
        leaf_hash,
        stream,
        version,
        day,
        certificate.serial,
        certificate.denomination,
        certificate.issue,
        certificate.issued_to,
        body.reason,
        body.request_id,
        hash_text(hashlib.sha256(signed).digest()),
        early,
        late,
    )


def _step(
    manifest: LeagueManifest,
    seq: int,
    stream: str,
    version: int,
    leaf_hash: bytes,
    body: PurchaseStep,
) -> Step:
    price = paid = payment = listed = 0
    outcome = buyer = ""
    foreign: tuple[str, ...] = ()
    finish = "standard"
    delivered = reissued = None
    returned: tuple[str, int] | None = None
    notes: tuple[tuple[str, int, int], ...] = ()
    if isinstance(body, PurchaseOpened):
        request = body.request
        price, paid, buyer = body.price, body.paid, request.buyer
        payment = sum(
            chain.certificate.denomination
            for chain in request.payment
            if isinstance(chain.certificate, NoteCertificate)
        )
        try:
            listed = purchase_price(manifest, request.title, request.upgrade)
        except LedgerError:
            listed = 0
        if request.upgrade is not None:
            finish = request.upgrade.finish
            returned = (request.upgrade.returned.serial, request.upgrade.returned.issue)
        handed = (*request.payment, *([request.upgrade.returned] if request.upgrade else []))
        foreign = tuple(
            chain.serial
            for chain in handed
            if not chain.endorsements or chain.endorsements[-1].from_ != request.buyer
        )
    elif isinstance(body, OrderRefused) and body.reissued is not None:
        certificate = body.reissued
        reissued = (
            certificate.serial,
            hash_text(hashlib.sha256(certificate.signing_bytes).digest()),
            certificate.issued_to,
        )
    elif isinstance(body, PrintDelivered):
        certificate = body.certificate
        delivered = (
            certificate.serial,
            hash_text(hashlib.sha256(certificate.signing_bytes).digest()),
            certificate.issued_to,
        )
    elif isinstance(body, PurchaseClosed):
        outcome = body.outcome
        notes = tuple((n.serial, n.issue, n.denomination) for n in body.notes)
    return Step(
        seq,
        leaf_hash,
        stream,
        version,
        body.TYPE,
        body.purchase_id,
        price,
        paid,
        payment,
        buyer,
        delivered,
        outcome,
        notes,
        listed,
        finish,
        returned,
        reissued,
        foreign,
    )


def verifications(fact: Fact) -> int:
    """The Ed25519 signatures checked for one event: the service's, and those it carries."""
    return 3 if isinstance(fact, Refused) else 1 if isinstance(fact, Step) else 2


# -- the stateful half -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cosigned:
    """A witness's valid cosignature on a served checkpoint."""

    witness: str
    size: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ServiceReport:
    """What was verified of one service's log."""

    service: str
    events: int
    root: bytes
    checkpoints: int
    cosigned: tuple[Cosigned, ...] = ()


@dataclass(frozen=True, slots=True)
class TreasuryFigures:
    """The treasury's figures derived from its log."""

    issues: int
    returns: int
    #: Per denomination (largest first): (notes in the set, in the reserve, out).
    denominations: tuple[tuple[int, int, int, int], ...]
    claimed: int
    #: Purchases closed, by outcome, and those still in their saga.
    purchases: dict[str, int]
    open_purchases: int
    note_hops: int
    #: Note returns naming a notary hop past the notary's audited log (not matched).
    unmatched_returns: int

    def lines(self) -> list[str]:
        supply = sum(d * (reserve + out) for d, _, reserve, out in self.denominations)
        reserve = "; ".join(
            f"M{d}: {r} in reserve, {o} out of {n}" for d, n, r, o in self.denominations
        )
        closed = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.purchases.items()))
        out = [
            f"treasury: {self.issues} note issues ({self.claimed} marks claimed at the faucet, "
            f"within its daily cap), {self.returns} returns, every issue number dense and no "
            f"note issued while out; supply {supply:,} marks after every event",
            f"treasury reserve: {reserve}",
            f"treasury purchases: {closed or 'none closed'}, paid and changed or refunded "
            f"exactly; {self.open_purchases} still in their saga; {self.note_hops} hops of "
            f"notes on valid chains",
        ]
        if self.unmatched_returns:
            out.append(
                f"treasury: {self.unmatched_returns} returns name notary hops past its "
                f"audited log (not matched this run)"
            )
        return out


@dataclass(frozen=True, slots=True)
class AuditReport:
    """A passed audit: per service what was verified, and the economy's counts."""

    services: tuple[ServiceReport, ...]
    prints: int
    hops: int
    conflicts: int
    holders: int
    #: Serials whose holder in the notary's projection was compared (None: not served).
    compared: int | None = None
    #: Ed25519 signatures verified (events, certificates, endorsements, checkpoints, manifest).
    verifications: int = 0
    #: Witness evidence pages read, per witness (None: not served).
    evidence: dict[str, int] | None = None
    #: The treasury's figures (None: it serves no log).
    treasury: TreasuryFigures | None = None
    #: Prints returned to the mint for finish upgrades, and issued again on a refusal (L-20).
    returned_prints: int = 0
    reissued_prints: int = 0
    #: Prints returned whose notary hop was read and matched (the others name hops past the
    #: notary's audited log: not matched this run, never reported notarized).
    notarized_prints: int = 0

    def lines(self) -> list[str]:
        """The report a person reads, one line per service, then the economy."""
        out = []
        for s in self.services:
            line = (
                f"{s.service}: {s.events} events verified (signatures, leaf hashes, Merkle "
                f"root), {s.checkpoints} checkpoints matched"
            )
            witnessed = sorted({(c.witness, c.size) for c in s.cosigned})
            if witnessed:
                line += "; cosigned by " + ", ".join(f"{w} at size {n}" for w, n in witnessed)
            else:
                line += "; no witness cosignature on its served checkpoint"
            out.append(line)
        out.append(
            f"economy: {self.prints} prints, every serial unique and inside its run; "
            f"{self.hops} hops on valid chains, {self.conflicts} conflicts with valid fraud "
            f"proofs; {self.holders} holders"
        )
        if self.returned_prints:
            out.append(
                f"upgrades: {self.returned_prints} prints returned to the mint, each "
                f"once per issue for a purchase of that upgrade, "
                f"{self.notarized_prints} on their notarized hop; "
                f"{self.reissued_prints} issued again to a refused upgrade's buyer"
            )
            unmatched = self.returned_prints - self.notarized_prints
            if unmatched:
                out.append(
                    f"mint: {unmatched} print returns name notary hops past its audited "
                    f"log (not matched this run)"
                )
        if self.compared is None:
            out.append("holders: the notary serves no holders pages; not compared")
        else:
            out.append(
                f"holders: all {self.compared} in the notary's projection equal to "
                f"those derived from the events"
            )
        if self.treasury is None:
            out.append("treasury: not served; not audited")
        else:
            out.extend(self.treasury.lines())
        if self.evidence is not None:
            out.append("evidence: none kept by " + ", ".join(sorted(self.evidence)))
        return out


@dataclass(slots=True)
class _Expected:
    checkpoint: Checkpoint
    kept: bool


class _Log:
    """One service's log: dense seqs, verified events, the root at every checkpoint."""

    def __init__(
        self, service: str, origin: str, key: PublicKey, witnesses: dict[str, CosignatureVerifier]
    ) -> None:
        self.service = service
        self.origin = origin
        self.key = key
        self.tree = CompactRange()
        self.verifier = log_verifier(origin, key)
        self.witnesses = witnesses
        self.pending: dict[int, list[_Expected]] = {}
        self.matched = 0
        self.latest: Checkpoint | None = None
        self.cosigned: list[Cosigned] = []
        #: Whether a checkpoint of it was given (a log not served is left out of the report).
        self.served = False

    def fail(self, seq: int | None, reason: str) -> AuditFailure:
        return AuditFailure(self.service, seq, reason)

    def expect(self, checkpoint: Checkpoint, *, kept: bool) -> None:
        which = "the checkpoint kept from the previous audit" if kept else "the checkpoint"
        if checkpoint.origin != self.origin:
            raise self.fail(
                None, f"{which} names the origin {checkpoint.origin!r}, not {self.origin!r}"
            )
        try:
            checkpoint.verify([self.verifier])
        except LedgerError as exc:
            raise self.fail(
                None,
                f"{which} of size {checkpoint.size} does not verify under "
                f"the {self.service} key: {exc.diagnostics()}",
            ) from None
        if checkpoint.size < self.tree.size:
            raise ValueError("give every checkpoint before the events it covers")
        self.served = True
        if not kept:
            self._cosignatures(checkpoint)
            if self.latest is None or checkpoint.size > self.latest.size:
                self.latest = checkpoint
        self.pending.setdefault(checkpoint.size, []).append(_Expected(checkpoint, kept))
        if checkpoint.size == 0:
            self._match(0)

    def _cosignatures(self, checkpoint: Checkpoint) -> None:
        """Every line by a known witness must verify (C2SP tlog-cosignature)."""
        for signature in checkpoint.note.signatures:
            for witness, verifier in self.witnesses.items():
                if not verifier.matches(signature):
                    continue
                try:
                    timestamp = verifier.timestamp(checkpoint.text, signature)
                except LedgerError as exc:
                    raise self.fail(
                        None,
                        f"the cosignature by the {witness} witness "
                        f"({verifier.name}) on its checkpoint of size "
                        f"{checkpoint.size} does not verify: "
                        f"{exc.diagnostics()}",
                    ) from None
                self.cosigned.append(Cosigned(witness, checkpoint.size, timestamp))

    def _match(self, size: int) -> None:
        root = self.tree.root() if size else EMPTY_ROOT
        for expected in self.pending.pop(size, ()):
            if not hmac.compare_digest(root, expected.checkpoint.root):
                seq = size - 1 if size else None
                if expected.kept:
                    raise self.fail(
                        seq,
                        f"the log's first {size} events do not hash to the "
                        f"root of the checkpoint kept from the previous audit "
                        f"(a rewritten log, or one restored from an older "
                        f"backup)",
                    )
                raise self.fail(
                    seq,
                    f"the log's first {size} events do not hash to the root "
                    f"of the checkpoint it serves at size {size}",
                )
            self.matched += 1

    def append(self, seq: int | None, leaf: bytes | None) -> None:
        """The next event's place: dense seqs, then its leaf into the tree."""
        if seq is not None and seq != self.tree.size:
            raise self.fail(
                seq,
                f"the feed serves seq {seq} where seq {self.tree.size} is next "
                f"(seqs are dense from 0)",
            )
        if leaf is not None:
            self.tree.append(leaf)
            if self.tree.size in self.pending:
                self._match(self.tree.size)

    def finish(self) -> ServiceReport:
        for size in sorted(self.pending):
            expected = self.pending[size][0]
            if expected.kept:
                raise self.fail(
                    self.tree.size,
                    f"the log ends after {self.tree.size} events, "
                    f"short of the checkpoint of size {size} kept "
                    f"from the previous audit (a truncated log, or "
                    f"one restored from an older backup)",
                )
            raise self.fail(
                self.tree.size,
                f"the feed ends after {self.tree.size} events, "
                f"short of the checkpoint it serves at size {size}",
            )
        return ServiceReport(
            self.service, self.tree.size, self.tree.root(), self.matched, tuple(self.cosigned)
        )


@dataclass(slots=True)
class _Print:
    """What the auditor keeps of one stamped print: enough to check the next hop."""

    issue: int
    holder: str
    #: hash_text of the last link (the certificate, then each recorded endorsement).
    prev: str
    #: hash_text of the certificate (the first link).
    certificate: str = ""
    hops: int = 0
    #: The seqs of its first and latest recorded hops in the notary's log.
    first_hop: int = -1
    last_hop: int = -1
    finish: str = ""
    #: The seq of the mint's print-returned event of this issue, once returned (L-20).
    returned: int = -1


@dataclass(slots=True)
class _Note:
    """What the auditor keeps of one note: its latest issue and whether it is out."""

    denomination: int
    issue: int
    out: bool


@dataclass(slots=True)
class _Purchase:
    """One purchase in its saga."""

    version: int
    price: int
    paid: int
    buyer: str
    returned: int = 0
    delivered: bool = False
    refused: bool = False
    #: The finish bought, and an upgrade's returned print (serial, issue) (L-20).
    finish: str = "standard"
    upgrade: tuple[str, int] | None = None
    #: The returned print as the mint issued it again on a refusal.
    reissued: tuple[str, str, str] | None = None
    #: Notes issued with it: (serial, issue, denomination), and their reason.
    issued: list[tuple[str, int, int]] = field(default_factory=list)
    reasons: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Taken:
    """A print the mint's log took back for an order not yet closed in the treasury's log
    (L-20): its serial and issue, the return's seq, and whom and at what seq the mint issued
    it again (``None``: not issued again)."""

    serial: str
    issue: int
    seq: int
    reissued: tuple[str, int] | None = None


@dataclass(slots=True)
class _Run:
    count: int = 0
    highest: int = 0
    highest_seq: int = 0


@dataclass(slots=True)
class _Recorded:
    seq: int
    digest: bytes


@dataclass(slots=True)
class _HoldersPage:
    """One page of the notary's projection, waiting for the log to reach its size."""

    after: str
    size: int
    rows: dict[str, tuple[int, int, str]]
    compared: bool = False


@dataclass
class Auditor:
    """Feed it checkpoints (and the notary's holders pages), then each service's events page
    by page; :meth:`report` ends it.

    ``root`` is the pinned league root key (``None`` on first use: the manifest's own)."""

    manifest: LeagueManifest
    root: PublicKey | None = None
    _logs: dict[str, _Log] = field(init=False)
    _manifest_text: str = field(init=False)
    #: Each print's chain with the latest recorded hop (what the notary's holders list).
    _prints: dict[str, _Print] = field(init=False, default_factory=dict)
    #: Each issue of each print's chain: (serial, issue) -> its links (L-20).
    _print_chains: dict[tuple[str, int], _Print] = field(init=False, default_factory=dict)
    #: The latest issue of each print.
    _print_issue: dict[str, int] = field(init=False, default_factory=dict)
    #: What the mint's log did on each order (purchase id): the print taken back (serial,
    #: issue) and the print issued again (serial, certificate, receiver) (L-20).
    _order_returns: dict[str, tuple[str, int]] = field(init=False, default_factory=dict)
    _order_reissues: dict[str, tuple[str, str, str]] = field(init=False, default_factory=dict)
    #: The mint's returns whose order no closed purchase has accounted for yet: at the end
    #: each must be of a purchase still open with that upgrade (L-20).
    _unaccounted: dict[str, _Taken] = field(init=False, default_factory=dict)
    _print_returns: int = field(init=False, default=0)
    _print_notarized: int = field(init=False, default=0)
    _runs: dict[tuple[str, RunFinish], _Run] = field(init=False, default_factory=dict)
    _run_bounds: dict[tuple[str, str], tuple[str, int, int]] = field(
        init=False, default_factory=dict
    )
    _recorded: dict[tuple[str, int, int], _Recorded] = field(init=False, default_factory=dict)
    _hops: int = field(init=False, default=0)
    _conflicts: int = field(init=False, default=0)
    _verified: int = field(init=False, default=1)  # the manifest's root signature
    _holders: list[_HoldersPage] = field(init=False, default_factory=list)
    _holders_next: str | None = field(init=False, default="")
    _holders_waiting: int = field(init=False, default=-1)
    _compared: int = field(init=False, default=0)
    _evidence: dict[str, int] | None = field(init=False, default=None)
    _accused: AuditFailure | None = field(init=False, default=None)
    _notes: dict[str, _Note] = field(init=False, default_factory=dict)
    #: Each issue of each note's chain, for the notary's hops: (serial, issue) -> its links.
    _note_chains: dict[tuple[str, int], _Print] = field(init=False, default_factory=dict)
    #: Each note's chain with the latest recorded hop (what the notary's holders list).
    _note_holding: dict[str, _Print] = field(init=False, default_factory=dict)
    _out: Counter[int] = field(init=False, default_factory=Counter)
    _faucet: dict[tuple[str, str], int] = field(init=False, default_factory=dict)
    #: Returns waiting for the notary's log: its seq -> (the returning service, its seq,
    #: serial, issue, hop, digest of the endorsement). One return per notary seq: a second
    #: naming the same seq fails.
    _returning: dict[int, tuple[str, int, str, int, int, bytes]] = field(
        init=False, default_factory=dict
    )
    _purchases: dict[str, _Purchase] = field(init=False, default_factory=dict)
    _closed: Counter[str] = field(init=False, default_factory=Counter)
    _issues: int = field(init=False, default=0)
    _returns: int = field(init=False, default=0)
    _claimed: int = field(init=False, default=0)
    _note_hops: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        try:
            self.root = self.manifest.verify_root(self.root)
        except LedgerError as exc:
            raise AuditFailure("manifest", None, exc.diagnostics()) from None
        self._manifest_text = json.dumps(self.manifest.to_wire())
        keys = {name: _public(getattr(self.manifest, name)) for name in WITNESSES}
        league = self.manifest.league
        self._logs = {
            name: _Log(
                name,
                f"{league}/{name}",
                keys[name],
                {w: CosignatureVerifier(f"{league}/{w}", keys[w]) for w in WITNESSES if w != name},
            )
            for name in AUDITED_SERVICES
        }

    def _log(self, service: str) -> _Log:
        try:
            return self._logs[service]
        except KeyError:
            raise ValueError(f"no audited service is called {service!r}") from None

    def context(self, service: str) -> PageContext:
        """What :func:`check_page` needs to check a page of ``service``'s feed."""
        self._log(service)
        return PageContext(service, self._manifest_text)

    def checkpoint(self, service: str, checkpoint: Checkpoint, *, kept: bool = False) -> None:
        """A checkpoint ``service`` serves (or, ``kept``, one kept from the previous audit):
        verified now with its witnesses' cosignatures, matched against the recomputed root
        when the log reaches its size."""
        log = self._log(service)
        before = len(log.cosigned)
        log.expect(checkpoint, kept=kept)
        self._verified += 1 + len(log.cosigned) - before

    def latest(self, service: str) -> Checkpoint | None:
        """The largest served checkpoint of ``service`` given so far (to keep for next time)."""
        return self._log(service).latest

    def size(self, service: str) -> int:
        """How many events of ``service`` were audited so far."""
        return self._log(service).tree.size

    def add(self, service: str, events: Iterable[FeedEvent]) -> None:
        """Audit the next events of ``service``'s feed, in seq order, in this process."""
        items = list(events)
        page = Feed(events=items, next_after=items[-1].seq if items else -1)
        self.add_checked(service, check_page(self.context(service), page.model_dump_json()))

    def add_page(self, service: str, text: str | bytes) -> None:
        """Audit the next page of ``service``'s feed as served (its JSON text)."""
        self.add_checked(service, check_page(self.context(service), text))

    def add_checked(self, service: str, page: CheckedPage) -> None:
        """Audit the next page of ``service``'s feed from :func:`check_page`'s result."""
        log = self._log(service)
        notary = service == "notary"
        for fact in page.facts:
            log.append(fact.seq, fact.leaf_hash)
            self._verified += verifications(fact)
            if isinstance(fact, Stamped):
                self._stamped(log, fact)
            elif isinstance(fact, Hop):
                self._hop(log, fact)
            elif isinstance(fact, Refused):
                self._conflict(log, fact)
            elif isinstance(fact, Issued):
                self._issued(log, fact)
            elif isinstance(fact, Returned) and service == "mint":
                self._print_returned(log, fact)
            elif isinstance(fact, Returned):
                self._returned(log, fact)
            else:
                self._step(log, fact)
            if notary:
                self._notarized_return(fact)
                if self._holders_waiting == log.tree.size:
                    self._compare_holders()
        if page.failure is not None:
            seq, reason = page.failure
            log.append(seq, None)
            raise log.fail(log.tree.size if seq is None else seq, reason)

    # -- the mint --------------------------------------------------------------------------

    def _stamped(self, log: _Log, fact: Stamped) -> None:
        seq, serial = fact.seq, fact.serial
        if fact.early is not None:
            raise log.fail(seq, fact.early)
        if fact.reissue is not None:
            self._reissued(log, fact, fact.reissue)
            return
        if serial in self._prints:
            raise log.fail(seq, f"{serial} was stamped before: serials are unique")
        if fact.issue != 1:
            raise log.fail(seq, f"{serial} stamped as issue {fact.issue}: a stamp is issue 1")
        if fact.finish != MISPRINT:
            self._in_run(log, fact)
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        chain = _Print(
            issue=fact.issue,
            holder=fact.issued_to,
            prev=fact.certificate,
            certificate=fact.certificate,
            finish=fact.finish,
        )
        self._prints[serial] = self._print_chains[(serial, 1)] = chain
        self._print_issue[serial] = 1

    def _print_returned(self, log: _Log, fact: Returned) -> None:
        """L-20: a print comes back to the mint once per issue, for an upgrade order, its
        hop to the mint's key the one the notary recorded."""
        seq, serial, n = fact.seq, fact.serial, fact.issue
        chain = self._print_chains.get((serial, n))
        if chain is None or self._print_issue[serial] != n or chain.returned >= 0:
            now = (
                "never stamped"
                if serial not in self._print_issue
                else f"back at the mint since event {chain.returned}"
                if chain is not None and chain.returned >= 0
                else f"out as issue {self._print_issue[serial]}"
            )
            raise log.fail(seq, f"{serial} returned as issue {n}, but it is {now}")
        _check_return_event(log, fact, print_stream(serial), self.manifest.mint, "mint")
        if fact.purchase_id in self._order_returns:
            raise log.fail(seq, f"order {fact.purchase_id!r} takes back a second print")
        self._await_hop(log, fact)
        chain.returned = seq
        self._order_returns[fact.purchase_id] = (serial, n)
        self._unaccounted[fact.purchase_id] = _Taken(serial, n, seq)
        self._print_returns += 1

    def _reissued(self, log: _Log, fact: Stamped, order: str) -> None:
        """L-20: a returned print is issued again only after its return, under the next
        issue, to the buyer of the order that took it back and was refused."""
        seq, serial, n = fact.seq, fact.serial, fact.issue
        latest = self._print_issue.get(serial)
        chain = self._print_chains.get((serial, n - 1))
        if latest != n - 1 or chain is None or chain.returned < 0:
            raise log.fail(
                seq,
                f"{serial} issued again as issue {n}, but its issue {n - 1} "
                f"is not back at the mint",
            )
        if self._order_returns.get(order) != (serial, n - 1):
            raise log.fail(
                seq, f"{serial} issued again for order {order!r}, which did not take it back"
            )
        if fact.version != 2 * n - 1:
            raise log.fail(
                seq,
                f"issue {n} of {serial} is recorded as version {fact.version} "
                f"of its stream, not {2 * n - 1}",
            )
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        self._print_chains[(serial, n)] = _Print(
            issue=n,
            holder=fact.issued_to,
            prev=fact.certificate,
            certificate=fact.certificate,
            finish=fact.finish,
        )
        self._print_issue[serial] = n
        self._order_reissues[order] = (serial, fact.certificate, fact.issued_to)
        taken = self._unaccounted.get(order)
        if taken is not None:
            taken.reissued = (fact.issued_to, seq)

    def _bounds(self, log: _Log, fact: Stamped) -> tuple[str, int, int]:
        found = self._run_bounds.get((fact.title, fact.finish))
        if found is None:
            finish: RunFinish = fact.finish  # type: ignore[assignment]  # not the misprint
            try:
                run = self.manifest.print_runs.run(fact.title)
            except LedgerError as exc:
                raise log.fail(fact.seq, exc.diagnostics()) from None
            found = (run.title, run.first_number(finish), run.size(finish))
            self._run_bounds[(fact.title, fact.finish)] = found
        return found

    def _in_run(self, log: _Log, fact: Stamped) -> None:
        title, first, size = self._bounds(log, fact)
        finish: RunFinish = fact.finish  # type: ignore[assignment]  # not the misprint
        _, _, digits = fact.serial.rpartition("-")
        number = int(digits) if digits.isdigit() else -1
        state = self._runs.get((title, finish))
        if state is None:
            state = self._runs[(title, finish)] = _Run()
        if state.count >= size or not first <= number < first + size:
            raise log.fail(
                fact.seq,
                f"{fact.serial} exceeds the {finish} run of {title}, "
                f"which holds {size} prints (numbers {first:04d} to "
                f"{first + size - 1:04d}): runs are never extended",
            )
        state.count += 1
        if number > state.highest:
            state.highest, state.highest_seq = number, fact.seq

    def _check_runs(self) -> None:
        for (title, finish), state in self._runs.items():
            run = self.manifest.print_runs.run(title)
            first = run.first_number(finish)
            if state.highest != first + state.count - 1:
                raise AuditFailure(
                    "mint",
                    state.highest_seq,
                    f"the {finish} run of {title} has {state.count} prints stamped, so its "
                    f"numbers must be {first:04d} to {first + state.count - 1:04d}, but one is "
                    f"{state.highest:04d}",
                )

    # -- the notary ------------------------------------------------------------------------

    def _hop(self, log: _Log, fact: Hop) -> None:
        seq, serial = fact.seq, fact.serial
        stamped = self._prints.get(serial)
        printed = stamped is not None
        if stamped is not None:
            stamped = self._print_chains.get((serial, fact.issue))
            if stamped is None:
                raise log.fail(
                    seq,
                    f"a hop of issue {fact.issue} of {serial}, whose certificate "
                    f"the mint stamped is issue {self._print_issue[serial]}",
                )
            if fact.from_ == self.manifest.mint:
                raise log.fail(
                    seq,
                    f"hop {fact.hop} of {serial} is signed away by the mint, "
                    f"which never endorses a print returned to it (L-20)",
                )
        if stamped is None and serial in self._notes:
            stamped = self._note_chains.get((serial, fact.issue))
            if stamped is None:
                raise log.fail(
                    seq,
                    f"a hop of issue {fact.issue} of the note {serial}, which "
                    f"the treasury's log never issued",
                )
            self._note_holding[serial] = stamped
            self._note_hops += 1
        if stamped is None:
            raise log.fail(seq, f"a hop of {serial}, which the mint's log never stamped")
        if fact.issue != stamped.issue:
            raise log.fail(
                seq,
                f"a hop of issue {fact.issue} of {serial}, whose certificate "
                f"the mint stamped is issue {stamped.issue}",
            )
        position = (serial, fact.issue, fact.hop)
        prior = self._recorded.get(position)
        if prior is not None:
            raise log.fail(
                seq,
                f"a second endorsement recorded at hop {fact.hop} of {serial} "
                f"(the first was recorded at seq {prior.seq} and wins)",
            )
        reason = _link_error(fact, stamped)
        if reason is not None:
            raise log.fail(seq, reason)
        self._recorded[position] = _Recorded(seq, fact.digest)
        stamped.holder, stamped.prev, stamped.hops = fact.to, hash_text(fact.digest), fact.hop
        if stamped.first_hop < 0:
            stamped.first_hop = seq
        stamped.last_hop = seq
        if printed:
            self._prints[serial] = stamped
        self._hops += 1

    def _conflict(self, log: _Log, fact: Refused) -> None:
        seq = fact.seq
        if fact.invalid is not None:
            raise log.fail(seq, f"a refused conflict whose fraud proof is invalid: {fact.invalid}")
        recorded = self._recorded.get((fact.serial, fact.issue, fact.hop))
        if (
            recorded is None
            or recorded.seq != fact.prior
            or not hmac.compare_digest(recorded.digest, fact.first)
        ):
            raise log.fail(
                seq,
                f"a refused conflict at hop {fact.hop} of {fact.serial} whose "
                f"first endorsement is not the hop recorded at seq {fact.prior}",
            )
        self._conflicts += 1

    def _await_hop(self, log: _Log, fact: Returned) -> None:
        """A return (a note's to the treasury, a print's to the mint) waits for the notary's
        hop it names; no two returns name one hop."""
        other = self._returning.get(fact.notarized)
        if other is not None:
            raise log.fail(
                fact.seq,
                f"the return of {fact.serial} (issue {fact.issue}) names "
                f"the notary's hop at seq {fact.notarized}, which the "
                f"{other[0]}'s return at seq {other[1]} names too",
            )
        self._returning[fact.notarized] = (
            log.service,
            fact.seq,
            fact.serial,
            fact.issue,
            fact.hop,
            fact.digest,
        )

    def _notarized_return(self, fact: Fact) -> None:
        """A return naming this notary event (a note's to the treasury, a print's to the
        mint) must name the hop it records: exactly its endorsement, to the returning
        service's key, the latest hop of that issue's chain (the service holds it)."""
        returning = self._returning.pop(fact.seq, None)
        if returning is None:
            return
        service, seq, serial, issue, hop, digest = returning
        key = getattr(self.manifest, service)
        chains = self._print_chains if service == "mint" else self._note_chains
        chain = chains.get((serial, issue))
        if not (
            isinstance(fact, Hop)
            and (fact.serial, fact.issue, fact.hop, fact.to) == (serial, issue, hop, key)
            and hmac.compare_digest(fact.digest, digest)
            and chain is not None
            and chain.hops == hop
            and chain.holder == key
        ):
            raise AuditFailure(
                service,
                seq,
                f"the return of {serial} (issue {issue}) names the notary's hop "
                f"at seq {fact.seq}, which records another event",
            )
        if service == "mint":
            self._print_notarized += 1

    # -- the treasury ------------------------------------------------------------------------

    def _supply(self, log: _Log, seq: int) -> None:
        """Reserve and circulation per denomination equal the note set (V.5: "the supply
        never moves")."""
        for denomination, count in self.manifest.note_set.count_of.items():
            out = self._out[denomination]
            if not 0 <= out <= count:
                raise log.fail(
                    seq,
                    f"{out} M{denomination} notes out of the {count} of the "
                    f"note set: the supply is no longer "
                    f"{self.manifest.note_set.total_marks:,} marks",
                )

    def _issued(self, log: _Log, fact: Issued) -> None:
        seq, serial, n = fact.seq, fact.serial, fact.issue
        if fact.early is not None:
            raise log.fail(seq, fact.early)
        if fact.late is not None:
            raise log.fail(seq, fact.late)
        note = self._notes.get(serial)
        if note is not None and note.out:
            total = self.manifest.note_set.total_marks
            raise log.fail(
                seq,
                f"{serial} issued (issue {n}) while its issue {note.issue} is "
                f"out, never returned: the supply would be "
                f"{total + fact.denomination:,} marks, not {total:,}",
            )
        expected = 1 if note is None else note.issue + 1
        if n != expected:
            raise log.fail(
                seq,
                f"{serial} issued as issue {n} where issue {expected} is next "
                f"(issue numbers are dense)",
            )
        if fact.stream != note_stream(serial) or fact.version != 2 * n - 1:
            raise log.fail(
                seq,
                f"issue {n} of {serial} is recorded as version {fact.version} "
                f"of stream {fact.stream!r}, not version {2 * n - 1} of "
                f"{note_stream(serial)!r}",
            )
        if fact.reason == "claim":
            per_day = self.manifest.policies.faucet_marks_per_day
            day = (fact.issued_to, fact.day)
            claimed = self._faucet.get(day, 0) + fact.denomination
            if claimed > per_day:
                raise log.fail(
                    seq,
                    f"the faucet gave {fact.issued_to} {claimed} marks on "
                    f"{fact.day} (UTC), more than its {per_day} a day",
                )
            self._faucet[day] = claimed
            self._claimed += fact.denomination
        else:
            purchase = self._purchases.get(fact.request_id)
            if purchase is None:
                raise log.fail(
                    seq,
                    f"{serial} issued as {fact.reason} of purchase "
                    f"{fact.request_id!r}, which is not open",
                )
            purchase.issued.append((serial, n, fact.denomination))
            purchase.reasons.add(fact.reason)
        if note is None:
            note = self._notes[serial] = _Note(fact.denomination, n, True)
        note.issue, note.out = n, True
        self._out[fact.denomination] += 1
        self._supply(log, seq)
        self._note_chains[(serial, n)] = _Print(
            issue=n, holder=fact.issued_to, prev=fact.certificate
        )
        self._issues += 1

    def _returned(self, log: _Log, fact: Returned) -> None:
        seq, serial, n = fact.seq, fact.serial, fact.issue
        note = self._notes.get(serial)
        if note is None or not note.out or note.issue != n:
            now = (
                "never issued"
                if note is None
                else f"in the reserve since issue {note.issue}"
                if not note.out
                else f"out as issue {note.issue}"
            )
            raise log.fail(seq, f"{serial} returned as issue {n}, but it is {now}")
        _check_return_event(log, fact, note_stream(serial), self.manifest.treasury, "treasury")
        purchase = self._purchases.get(fact.purchase_id)
        if purchase is None:
            raise log.fail(
                seq,
                f"{serial} returned as payment of purchase {fact.purchase_id!r}, which is not open",
            )
        purchase.returned += note.denomination
        note.out = False
        self._out[note.denomination] -= 1
        self._supply(log, seq)
        self._await_hop(log, fact)
        self._returns += 1

    def _step(self, log: _Log, fact: Step) -> None:
        seq, pid = fact.seq, fact.purchase_id
        purchase = self._purchases.get(pid)
        expected = 1 if purchase is None else purchase.version + 1
        if fact.stream != purchase_stream(pid) or fact.version != expected:
            raise log.fail(
                seq,
                f"a {fact.type} of purchase {pid!r} recorded as version "
                f"{fact.version} of stream {fact.stream!r}, not version "
                f"{expected} of {purchase_stream(pid)!r}",
            )
        if purchase is None:
            if fact.type != PurchaseOpened.TYPE:
                raise log.fail(
                    seq,
                    f"a {fact.type} of purchase {pid!r}, which was never opened (or was closed)",
                )
            if fact.payment != fact.paid:
                raise log.fail(
                    seq,
                    f"purchase {pid!r} says {fact.paid} marks are paid, but its "
                    f"payment's notes sum to {fact.payment}",
                )
            if fact.foreign:
                raise log.fail(
                    seq,
                    f"purchase {pid!r} takes {', '.join(fact.foreign)}, whose "
                    f"last endorsement is not its buyer's (L-21)",
                )
            if fact.price != fact.listed:
                what = (
                    f"a {fact.finish} upgrade"
                    if fact.returned is not None
                    else "a single of its title"
                )
                raise log.fail(
                    seq,
                    f"purchase {pid!r} is priced {fact.price} marks, but the "
                    f"published price of {what} is "
                    + (
                        f"{fact.listed} marks (Book V.5)"
                        if fact.listed
                        else "none: the league does not print its title"
                    ),
                )
            self._purchases[pid] = _Purchase(
                1, fact.price, fact.paid, fact.buyer, finish=fact.finish, upgrade=fact.returned
            )
            return
        if fact.type == PurchaseOpened.TYPE:
            raise log.fail(seq, f"purchase {pid!r} opened twice")
        purchase.version = fact.version
        if fact.delivered is not None:
            serial, certificate, receiver = fact.delivered
            stamped = self._print_chains.get((serial, 1))
            if (
                stamped is None
                or stamped.certificate != certificate
                or receiver != purchase.buyer
                or stamped.finish != purchase.finish
            ):
                raise log.fail(
                    seq,
                    f"purchase {pid!r} delivers {serial}, which the mint's log "
                    f"did not stamp to its buyer in the {purchase.finish} finish "
                    f"as delivered",
                )
            purchase.delivered = True
        elif fact.type == "order-refused":
            purchase.refused = True
            purchase.reissued = fact.reissued
        elif fact.type == PurchaseClosed.TYPE:
            self._close(log, fact, purchase)

    def _close(self, log: _Log, fact: Step, purchase: _Purchase) -> None:
        """V.5: "buying with notes returns a stamped print and exact change"; an exhausted run
        refunds the payment in full (L-18); a rejected payment moves nothing."""
        seq, pid, outcome = fact.seq, fact.purchase_id, fact.outcome
        closing = sorted(fact.notes)
        issued = sorted(purchase.issued)
        given = sum(d for _, _, d in issued)
        if closing != issued:
            raise log.fail(
                seq, f"purchase {pid!r} closes with notes the treasury's log did not issue for it"
            )
        if outcome == "delivered":
            wrong = (
                None
                if purchase.delivered
                and purchase.reasons <= {"change"}
                and purchase.returned == purchase.paid
                and given == purchase.paid - purchase.price
                else f"paid {purchase.paid}, returned {purchase.returned}, price "
                f"{purchase.price}, change {given}"
            )
        elif outcome == "refunded":
            wrong = (
                None
                if purchase.refused
                and not purchase.delivered
                and purchase.reasons <= {"refund"}
                and given == purchase.paid
                and purchase.returned == purchase.paid
                else f"paid {purchase.paid}, refunded {given}"
            )
        else:
            wrong = (
                None
                if not purchase.delivered and not issued and not purchase.returned
                else "a rejected payment moved notes"
            )
        if wrong is not None:
            raise log.fail(seq, f"purchase {pid!r} closed {outcome} but not exactly: {wrong}")
        self._check_print_back(log, fact, purchase)
        del self._purchases[pid]
        self._closed[outcome] += 1

    def _check_print_back(self, log: _Log, fact: Step, purchase: _Purchase) -> None:
        """L-20: an upgrade delivered took its print back at the mint; refunded, the mint took
        it back and issued it again to the buyer (a refunded upgrade hands its print back);
        rejected, or a single, the mint took nothing back for it."""
        pid, outcome = fact.purchase_id, fact.outcome
        taken = self._order_returns.get(pid)
        again = self._order_reissues.get(pid)
        if outcome == "delivered" and purchase.upgrade is not None:
            wrong = (
                None
                if taken == purchase.upgrade and again is None
                else "the mint's log did not take back the print returned for it"
            )
        elif outcome == "refunded" and purchase.upgrade is not None:
            # L-20: a refunded upgrade hands its print back, taken and issued again.
            handed = again is not None and again[2] == purchase.buyer and again == purchase.reissued
            wrong = (
                None
                if taken == purchase.upgrade and handed
                else "the print returned for it is not handed back to the buyer exactly"
            )
        else:
            wrong = (
                None
                if taken is None and again is None
                else "the mint's log took a print back for it"
            )
        if wrong is not None:
            raise log.fail(fact.seq, f"purchase {pid!r} closed {outcome} but not exactly: {wrong}")
        self._unaccounted.pop(pid, None)

    def _treasury_figures(self) -> TreasuryFigures | None:
        if not self._logs["treasury"].served:
            return None
        count = self.manifest.note_set.count_of
        return TreasuryFigures(
            issues=self._issues,
            returns=self._returns,
            denominations=tuple((d, n, n - self._out[d], self._out[d]) for d, n in count.items()),
            claimed=self._claimed,
            purchases=dict(self._closed),
            open_purchases=len(self._purchases),
            note_hops=self._note_hops,
            unmatched_returns=sum(r[0] == "treasury" for r in self._returning.values()),
        )

    # -- the notary's projection -------------------------------------------------------------

    def holders(self, after: str, page: Holders) -> None:
        """A page of the notary's holders (``GET /notary/holders?after=AFTER``), given in
        order from ``after=""`` before the notary's events past ``page.log_size``: compared
        with the holders derived from the events when the log reaches that size."""
        fail = self._log("notary").fail
        if after != self._holders_next:
            raise ValueError("give the holders pages in order, each after the one before")
        rows: dict[str, tuple[int, int, str]] = {}
        last = after
        for row in page.holders:
            if row.serial <= last:
                raise fail(
                    None,
                    f"the notary's holders page after {after!r} is not in serial "
                    f"order at {row.serial}",
                )
            rows[row.serial] = (row.issue, row.hops, row.holder)
            last = row.serial
        if page.next_after is not None and page.next_after != last:
            raise fail(
                None,
                f"the notary's holders page after {after!r} says it ends at "
                f"{page.next_after!r}, but its last row is {last!r}",
            )
        if page.log_size < self.size("notary"):
            raise ValueError("give every holders page before the events it reflects")
        self._holders_next = page.next_after
        self._holders.append(_HoldersPage(after, page.log_size, rows))
        self._compare_holders()

    def _compare_holders(self) -> None:
        """Compare the pages read at the log's present size; wait for the next size."""
        size = self.size("notary")
        fail = self._log("notary").fail
        for page in self._holders:
            if page.size != size or page.compared:
                continue
            page.compared = True
            for serial, (issue, hops, holder) in page.rows.items():
                derived = self._prints.get(serial) or self._note_holding.get(serial)
                if derived is None or derived.hops == 0:
                    raise fail(
                        None,
                        f"the notary's projection says {serial} is held by "
                        f"{holder} after {hops} hops, but its log records no hop "
                        f"of {serial} in its first {size} events",
                    )
                if (issue, hops, holder) != (derived.issue, derived.hops, derived.holder):
                    raise fail(
                        derived.last_hop,
                        f"the notary's projection says {serial} is held by {holder} "
                        f"(issue {issue}, hop {hops}), but its log's events make the "
                        f"holder {derived.holder} (issue {derived.issue}, hop "
                        f"{derived.hops})",
                    )
                self._compared += 1
        later = [p.size for p in self._holders if p.size > size]
        self._holders_waiting = min(later, default=-1)

    def _check_holders(self) -> None:
        """Every page reached, and every print with a hop in the log when a page was read
        listed on the page that covers it."""
        if not self._holders:
            return
        fail = self._log("notary").fail
        size = self.size("notary")
        for page in self._holders:
            if page.size > size:
                raise fail(
                    size,
                    f"the notary's holders page after {page.after!r} reflects "
                    f"{page.size} events of its log, but its feed ends after "
                    f"{size}",
                )
        if self._holders_next is not None:
            raise ValueError("give the holders pages to the end (next_after null)")
        starts = [page.after for page in self._holders]
        for serial, derived in (*self._prints.items(), *self._note_holding.items()):
            if derived.hops == 0:
                continue
            page = self._holders[bisect.bisect_left(starts, serial) - 1]
            if derived.first_hop < page.size and serial not in page.rows:
                raise fail(
                    derived.first_hop,
                    f"the notary's projection has no holder for "
                    f"{serial}, whose hops its log records",
                )

    # -- the witnesses ---------------------------------------------------------------------

    def evidence(self, witness: str, page: EvidenceList) -> None:
        """A page of the evidence ``witness`` keeps: any at all is a violation of the log it
        accuses (raised by :meth:`report`, after the logs' own checks)."""
        if self._evidence is None:
            self._evidence = {}
        self._evidence[witness] = self._evidence.get(witness, 0) + 1
        if self._accused is not None or not page.evidence:
            return
        found = page.evidence[0]
        league = self.manifest.league
        accused = next(
            (name for name in WITNESSES if f"{league}/{name}" == found.origin), found.origin
        )
        try:
            key = _public(getattr(self.manifest, accused)) if accused in WITNESSES else None
            proven = "convicts the log" if key is not None and found.convicts(key) else "not proven"
        except LedgerError as exc:
            proven = f"which does not verify: {exc.diagnostics()}"
        self._accused = AuditFailure(
            accused,
            None,
            f"the {witness} witness keeps evidence against its log "
            f"({found.kind}, {proven}): {found.reason}",
        )

    # -- the end ---------------------------------------------------------------------------

    def holder(self, serial: str) -> str | None:
        """The key (text) holding ``serial`` as derived from the events audited so far: the
        holder of its latest issue's chain (L-20: a print issued again is its receiver's)."""
        latest = self._print_chains.get((serial, self._print_issue.get(serial, 0)))
        return latest.holder if latest is not None else None

    def _check_returns(self) -> None:
        """Every return matched to the notary's hop it names, unless that hop lies past the
        notary's audited log (not matched this run); every print the mint took back and not
        yet accounted for by a closed purchase taken for a purchase still open with that
        upgrade, and issued again only to its buyer (L-20)."""
        size = self.size("notary")
        for notarized, (service, seq, serial, issue, _, _) in self._returning.items():
            if notarized < size:
                raise AuditFailure(
                    service,
                    seq,
                    f"the return of {serial} (issue {issue}) names the notary's "
                    f"hop at seq {notarized}, which its log (audited to "
                    f"{size} events) never matched to it",
                )
        treasury = self._logs["treasury"].served or self._logs["treasury"].tree.size > 0
        for order, taken in self._unaccounted.items():
            what = f"{taken.serial} (issue {taken.issue}) taken back for order {order!r}"
            if not treasury:
                raise AuditFailure(
                    "mint",
                    taken.seq,
                    f"{what}, but the treasury serves no log: a return without "
                    f"a purchase cannot be accounted for (L-20)",
                )
            purchase = self._purchases.get(order)
            if purchase is None or purchase.upgrade != (taken.serial, taken.issue):
                raise AuditFailure(
                    "mint",
                    taken.seq,
                    f"{what}, which names no purchase opened with that print "
                    f"returned for an upgrade (L-20)",
                )
            if taken.reissued is not None and taken.reissued[0] != purchase.buyer:
                raise AuditFailure(
                    "mint",
                    taken.reissued[1],
                    f"{taken.serial} issued again for order {order!r} to "
                    f"{taken.reissued[0]}, who is not its buyer (L-20)",
                )

    def report(self) -> AuditReport:
        """Finish: every checkpoint reached, every run's numbers dense, every holder compared,
        no evidence kept; the report."""
        services = tuple(
            self._logs[name].finish()
            for name in AUDITED_SERVICES
            if name != "treasury" or self._logs[name].served or self._logs[name].tree.size
        )
        self._check_runs()
        self._check_holders()
        self._check_returns()
        if self._accused is not None:
            raise self._accused
        return AuditReport(
            services=services,
            prints=len(self._prints),
            hops=self._hops,
            conflicts=self._conflicts,
            holders=len({p.holder for p in self._prints.values()}),
            compared=self._compared if self._holders else None,
            verifications=self._verified,
            evidence=self._evidence,
            treasury=self._treasury_figures(),
            returned_prints=self._print_returns,
            reissued_prints=len(self._order_reissues),
            notarized_prints=self._print_notarized,
        )


def _link_error(e: Hop, stamped: _Print) -> str | None:
    """Why ``e`` is not the next link of ``stamped``'s chain, or ``None``: the checks
    :func:`ledger.endorsements.verify_chain` makes at each hop, one hop at a time."""
    n = stamped.hops + 1
    if e.hop != n:
        return f"hop {e.hop} of {e.serial} is recorded where hop {n} is next"
    if not hmac.compare_digest(e.prev, stamped.prev):
        what = "the certificate the mint stamped" if n == 1 else "the hop before"
        return f"hop {n} of {e.serial} does not link to {what}"
    # Key texts are canonical base64url of the key (the models refuse any other spelling),
    # so equal texts are equal keys.
    if e.from_ != stamped.holder:
        return f"hop {n} of {e.serial} is signed away by a key that did not hold it"
    if not e.signed:
        return f"hop {n} of {e.serial}: the endorsement's signature does not verify"
    return None


__all__ = [
    "AUDITED_SERVICES",
    "WITNESSES",
    "AuditFailure",
    "AuditReport",
    "Auditor",
    "CheckedPage",
    "Cosigned",
    "PageContext",
    "ServiceReport",
    "TreasuryFigures",
    "check_page",
]
