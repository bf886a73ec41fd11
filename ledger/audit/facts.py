"""The auditor's stateless half: a page of a service's feed in, the facts the stateful checks
need out (:func:`check_page`: leaf hashes and signatures verified, bodies parsed), so a caller
may run it in worker processes, one page each. A fast path reads the page with orjson and
batches the signatures; anything it does not vouch for goes to the reference path (the wire
models), which names the fault."""

from __future__ import annotations

import binascii
import hashlib
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple

import orjson
from pydantic import ValidationError

from ledger.api.logs import Feed, FeedEvent
from ledger.api.treasury import purchase_price
from ledger.audit.reward_facts import Rewarded, rewarded_fact
from ledger.canonical import domain_tag
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.encoding import decode_b64url, is_canonical_b64url
from ledger.endorsements import Endorsement
from ledger.errors import BadSignatureError, DecodeError, LedgerError, VerificationError
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
    RewardPaid,
    parse_event,
)
from ledger.keys import SIGNATURE_SIZE, PublicKey
from ledger.manifest import LeagueManifest
from ledger.print_runs import MISPRINT
from ledger.wire import MAX_SAFE_INTEGER, hash_text

#: The services whose logs are audited, in the order they must be fed (a hop refers to a
#: stamp or a note's issue; a note's return names the notary's hop, matched when the notary's

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
    #: Stamped on the treasury's order (``ordered``): the order id (a reward's names its table).
    ordered: str | None = None
    #: The Misprint's stamp (finish ``misprint``): the table its request id names (L-24).
    awarded: str | None = None


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


Fact = Stamped | Hop | Refused | Issued | Returned | Step | Rewarded


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
# alike (tests/ledger/audit/test_facts.py compares them). Its signatures are verified a run of
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


# Not ledger.canonical.jcs: that walks every member in Python to decide its own fast path (about
# four times this per event, twice per event here); this path needs only orjson's bytes and the
# ASCII test, and anything else goes to the reference path (_Slow), which uses jcs.
# tests/ledger/audit/test_facts.py pins that the two agree.
def _canonical(value: Any) -> bytes:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer past 64 bits, nested too deeply: not ours
        raise _Slow from None
    if not data.isascii():
        raise _Slow
    return data


def _signature(text: object) -> bytes:
    """An event's signature, when it is canonical base64url of 64 bytes (the reference path
    names anything else)."""
    if not is_canonical_b64url(text, SIGNATURE_SIZE):
        raise _Slow
    return decode_b64url(str(text), length=SIGNATURE_SIZE)


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
        key.verify_raw(signing, decode_b64url(sig, length=SIGNATURE_SIZE))
    except (BadSignatureError, DecodeError):
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
            body.request_id if isinstance(body, PrintStamped) and body.ordered else None,
            body.request_id
            if isinstance(body, PrintStamped) and certificate.finish == MISPRINT
            else None,
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
    if isinstance(body, RewardPaid):
        return rewarded_fact(setup.manifest, seq, stream, version, leaf_hash, body)
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
        reissued = _handed(body.reissued)
    elif isinstance(body, PrintDelivered):
        delivered = _handed(body.certificate)
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


def _handed(certificate: PrintCertificate) -> tuple[str, str, str]:
    """A print the mint handed over: its serial, the hash of its certificate, its receiver."""
    return (
        certificate.serial,
        hash_text(hashlib.sha256(certificate.signing_bytes).digest()),
        certificate.issued_to,
    )


def verifications(fact: Fact) -> int:
    """The Ed25519 signatures checked for one event: the service's, and those it carries."""
    return 3 if isinstance(fact, Refused) else 1 if isinstance(fact, Step) else 2
