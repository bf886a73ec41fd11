"""Every parser of untrusted bytes in ``ledger/``, fuzzed: arbitrary text and valid inputs
mutated (characters replaced, inserted, deleted, slices doubled, cut short) either parse or
raise the library's own error (:class:`ledger.errors.LedgerError`), never another exception;
a parsed value written back parses to the same value (docs/architecture.md §2 "the protocol refuses
what it cannot read with a typed error").

The existing tests round-trip valid values (tests/ledger/test_wire.py, test_armor.py,
test_checkpoint.py, test_savecode.py ...); these feed the parsers what an attacker would:
JSON with repeated keys at any depth, wire objects of every kind mutated, signed notes,
checkpoints and witness requests, verifier keys, save codes and key files, slips, addresses,
manifests, service URLs, serials, keys, times and the seen-registry.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apiclient.league import stamp_request
from ledger.address import address_of, parse_address
from ledger.api.logs import FeedEvent
from ledger.api.treasury import Upgrade, buy_request, claim_request
from ledger.armor import armor, dearmor
from ledger.audit import Auditor, check_page, facts
from ledger.canonical import jcs
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import (
    AddCheckpoint,
    Checkpoint,
    Cosigner,
    parse_witness_vkey,
    sign_checkpoint,
)
from ledger.encoding import decode_b64, decode_b64url, encode_b64, encode_b64url
from ledger.endorsements import Chain, Endorsement, endorse
from ledger.errors import DecodeError, LedgerError
from ledger.events import PrintStamped
from ledger.fraud import FraudProof, SeenRegistry
from ledger.keys import PublicKey
from ledger.leaf import Event, event_leaf, format_time, parse_time
from ledger.manifest import LeagueManifest, check_service_url
from ledger.merkle import leaf_hash
from ledger.note_set import note_serial_for, parse_note_serial
from ledger.print_runs import parse_serial, serial_for
from ledger.savecode import (
    MINIMUM_KDF,
    open_private_key,
    open_save_code,
    seal_private_key,
    seal_save_code,
)
from ledger.signed_note import NoteSigner, parse_note, parse_vkey
from ledger.slips import Slip
from ledger.wire import WireModel, parse_json
from tests.ledger.factories import chain_of, key, make_league
from tests.reliability.figures import long_form, record

LEAGUE = make_league()
ALICE, BOB, CAROL = key(10), key(11), key(12)
PASSPHRASE = "correct horse battery staple"
#: Examples per test: a quick pass in CI, a long one in the long form.
FUZZ = settings(
    max_examples=2_000 if long_form() else 60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_CASES: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    """The cases run, recorded once the module's tests are done."""
    yield
    record("fuzz_parsers", {"parsers": len(PARSERS) + 1, **dict(_CASES)})  # + the feed page


@dataclass(frozen=True)
class Parser:
    """One parser: what it reads, a valid input, and the value's form that must survive a
    write-back (``again`` parses that form; the two parsed values must be equal)."""

    name: str
    parse: Callable[[str], Any]
    valid: str
    write: Callable[[Any], str]
    same: Callable[[Any], Any] = lambda value: value
    #: What it raises for a bad input: the library's error, or what its docstring says.
    refusal: tuple[type[Exception], ...] = (LedgerError,)


def _wire(model: WireModel) -> str:
    return json.dumps(model.to_wire())


def _parsers() -> list[Parser]:
    manifest = LEAGUE.manifest
    tally = LEAGUE.print_certificate(ALICE, "CZ-TALLY-0001", title="Tally", card_set="base")
    note = LEAGUE.note_certificate(ALICE, "CZ-M25-000001")
    chain = chain_of(tally, ALICE, BOB)
    forked = chain_of(tally, ALICE, CAROL)
    proof = FraudProof(
        kind="fraud-proof", first=chain.endorsements[0], second=forked.endorsements[0]
    )
    checkpoint = sign_checkpoint("test-league/mint", 42, bytes(range(32)), LEAGUE.mint)
    cosigned = checkpoint.with_signature(
        Cosigner("test-league/notary", LEAGUE.notary).cosign(checkpoint, 1_700_000_000)
    )
    add = AddCheckpoint(7, (bytes(32), bytes(range(32))), checkpoint)
    now = int(time.time())
    claim = claim_request(ALICE, manifest, 30, request_id="fuzz-claim-0001", at=now, work=1)
    stamp = stamp_request(
        ALICE, manifest, [("Tally", "standard")], request_id="fuzz-stamp-0001", at=now, works=[1]
    )
    treasury_key = PublicKey.from_text(manifest.treasury)
    mint_key = PublicKey.from_text(manifest.mint)
    paid = chain_of(note, ALICE)
    payment = endorse(paid, ALICE, treasury_key, 1_700_000_100)
    returned = endorse(Chain(certificate=tally, endorsements=()), ALICE, mint_key, 1_700_000_100)
    buy = buy_request(
        ALICE,
        manifest,
        "Tally",
        [payment],
        purchase_id="fuzz-buy-0001",
        at=now,
        upgrade=Upgrade(finish="gilt", returned=returned),
    )
    models: list[WireModel] = [
        manifest,
        tally,
        note,
        chain.endorsements[0],
        chain,
        proof,
        claim,
        stamp,
        buy,
    ]
    parsers = [
        Parser(f"wire:{type(m).__name__}", type(m).from_wire, _wire(m), _wire) for m in models
    ]
    seen = SeenRegistry(chain.endorsements)
    return [
        *parsers,
        Parser("json", parse_json, _wire(buy), json.dumps),
        Parser(
            "slip",
            Slip.from_armor,
            Slip(chains=(chain, paid)).to_armor(),
            lambda slip: slip.to_armor(),
        ),
        Parser(
            "seen-registry",
            SeenRegistry.from_wire,
            json.dumps(seen.to_wire()),
            lambda registry: json.dumps(registry.to_wire()),
            lambda registry: registry.to_wire(),
        ),
        Parser("signed-note", parse_note, str(cosigned.note), str),
        Parser(
            "checkpoint",
            Checkpoint.from_note,
            str(cosigned),
            str,
            lambda c: (c.origin, c.size, c.root, c.extensions, str(c.note)),
        ),
        Parser(
            "add-checkpoint",
            AddCheckpoint.parse,
            str(add),
            str,
            lambda a: (a.old_size, a.proof, str(a.checkpoint)),
        ),
        Parser(
            "vkey",
            parse_vkey,
            NoteSigner("test-league/mint", LEAGUE.mint).verifier().vkey(),
            lambda v: v.vkey(),
            lambda v: v.vkey(),
        ),
        Parser(
            "witness-vkey",
            parse_witness_vkey,
            Cosigner("test-league/notary", LEAGUE.notary).verifier().vkey(),
            lambda v: v.vkey(),
            lambda v: v.vkey(),
        ),
        Parser(
            "save-code",
            lambda text: open_save_code(text, PASSPHRASE),
            seal_save_code({"marks": 5, "prints": []}, PASSPHRASE, MINIMUM_KDF),
            lambda payload: seal_save_code(payload, PASSPHRASE, MINIMUM_KDF),
        ),
        Parser(
            "private-key",
            lambda text: open_private_key(text, PASSPHRASE),
            seal_private_key(ALICE, PASSPHRASE, MINIMUM_KDF),
            lambda k: seal_private_key(k, PASSPHRASE, MINIMUM_KDF),
            lambda k: k.public.to_text(),
        ),
        Parser("address", parse_address, address_of(ALICE.public), str),
        Parser("public-key", PublicKey.from_text, ALICE.public.to_text(), lambda k: k.to_text()),
        Parser(
            "service-url",
            check_service_url,
            "https://league.example:8443/base",
            str,
            refusal=(ValueError,),
        ),  # its documented refusal (a validator's)
        Parser(
            "print-serial",
            parse_serial,
            "CZ-MODEL-A-0042",
            lambda parsed: serial_for(parsed.title, parsed.finish, parsed.number),
        ),
        Parser(
            "note-serial",
            parse_note_serial,
            "CZ-M25-000001",
            lambda parsed: note_serial_for(parsed.denomination, parsed.number),
        ),
        Parser("time", parse_time, "2026-12-03T18:40:00.123456Z", format_time),
        Parser("b64url", lambda text: decode_b64url(text), "AAECAwQFBgcICQ", encode_b64url),
        Parser("b64", lambda text: decode_b64(text), "AAECAwQFBgcICQ==", encode_b64),
        Parser(
            "armor",
            lambda text: dearmor(text, "CZ SLIP"),
            Slip(chains=(paid,)).to_armor(),
            lambda raw: armor("CZ SLIP", raw),
        ),
    ]


PARSERS = _parsers()
BY_NAME = {parser.name: parser for parser in PARSERS}

#: Characters an edit inserts: the syntax of every format, and some that no format allows.
SYNTAX = st.sampled_from(list('{}[]":,\\ \n\t-+.=_/0123456789eEaZ—\x00\x7f\u2028\ud800é'))
EDIT_CHARS = st.one_of(SYNTAX, st.characters())


@st.composite
def mutated(draw: st.DrawFn, valid: str) -> str:
    """``valid`` with one to four edits: a character replaced, inserted or deleted, a slice
    doubled, or the text cut short."""
    text = valid
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(0, len(text) - 1)))
        edit = draw(st.sampled_from(["replace", "insert", "delete", "double", "cut"]))
        if edit == "replace" and text:
            text = text[:at] + draw(EDIT_CHARS) + text[at + 1 :]
        elif edit == "insert":
            text = text[:at] + draw(EDIT_CHARS) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        elif edit == "double":
            end = draw(st.integers(at, min(len(text), at + 40)))
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at]
    return text


def parses_or_refuses(parser: Parser, text: str) -> bool:
    """The parser's contract on ``text``: a value that survives its write-back, or its
    refusal, a LedgerError (anything else fails the test). True when it parsed."""
    try:
        value = parser.parse(text)
    except parser.refusal:
        return False
    again = parser.parse(parser.write(value))
    assert parser.same(again) == parser.same(value), (parser.name, text)
    return True


def test_every_valid_input_parses_and_survives_its_write_back() -> None:
    """Each parser's valid sample parses (so the mutations start from something real)."""
    for parser in PARSERS:
        assert parses_or_refuses(parser, parser.valid), parser.name
    checked = check_page(MINT_PAGE, FEED_PAGE)
    assert (checked.failure, len(checked.facts)) == (None, 1)


@FUZZ
@given(data=st.data(), which=st.sampled_from([p.name for p in PARSERS]))
def test_a_mutated_input_parses_or_is_refused_with_a_ledger_error(
    data: st.DataObject, which: str
) -> None:
    """A valid input of any parser, mutated: parsed (and its write-back parses the same) or
    refused with a LedgerError, never another exception."""
    parser = BY_NAME[which]
    text = data.draw(mutated(parser.valid), label="input")
    _CASES["mutated"] += 1
    _CASES["mutated_parsed"] += parses_or_refuses(parser, text)


@FUZZ
@given(
    which=st.sampled_from([p.name for p in PARSERS]),
    text=st.one_of(st.text(max_size=300), st.text(SYNTAX, max_size=300)),
)
def test_arbitrary_text_parses_or_is_refused_with_a_ledger_error(which: str, text: str) -> None:
    """Arbitrary text, to every parser: parsed or refused with a LedgerError."""
    _CASES["arbitrary"] += 1
    _CASES["arbitrary_parsed"] += parses_or_refuses(BY_NAME[which], text)


@FUZZ
@given(raw=st.binary(max_size=400))
def test_arbitrary_bytes_to_the_parsers_that_take_bytes(raw: bytes) -> None:
    """Bytes (not necessarily UTF-8) to the parsers that take bytes: JSON, signed notes,
    checkpoints, witness requests and wire objects."""
    for parse in (
        parse_json,
        parse_note,
        Checkpoint.from_note,
        AddCheckpoint.parse,
        PrintCertificate.from_wire,
        NoteCertificate.from_wire,
        Chain.from_wire,
        Endorsement.from_wire,
        LeagueManifest.from_wire,
    ):
        with contextlib.suppress(LedgerError):
            parse(raw)
    _CASES["bytes"] += 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def with_repeated_key(draw: st.DrawFn) -> str:
    """JSON text of an object, somewhere inside a value, whose members repeat one key."""
    members = draw(st.dictionaries(st.text(max_size=5), JSON_VALUES, min_size=1, max_size=4))
    repeated = draw(st.sampled_from(sorted(members)))
    again = json.dumps(draw(JSON_VALUES))
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in members.items()]
    parts.insert(draw(st.integers(0, len(parts))), f"{json.dumps(repeated)}: {again}")
    text = "{" + ", ".join(parts) + "}"
    for _ in range(draw(st.integers(0, 3))):  # nested inside arrays and objects
        text = draw(st.sampled_from([f"[{text}]", f'{{"k": {text}}}', f'[1, {{"x": {text}}}]']))
    return text


@FUZZ
@given(text=with_repeated_key())
def test_json_repeating_a_key_at_any_depth_is_refused(text: str) -> None:
    """A JSON object that repeats a key, at any depth, is refused by the wire's JSON parser
    and by every wire object's parser (two readers could read it two ways)."""
    with pytest.raises(DecodeError, match="repeats the key"):
        parse_json(text)
    for parse in (LeagueManifest.from_wire, Chain.from_wire):
        with pytest.raises(LedgerError):
            parse(text)
    _CASES["repeated_keys"] += 1


@FUZZ
@given(value=JSON_VALUES)
def test_canonical_json_parses_back_to_the_value_and_is_its_own_canonical_form(
    value: Any,
) -> None:
    """RFC 8785: the canonical bytes of any JSON value parse back to it, and canonicalizing
    them again changes nothing (one text per value, which armored objects require)."""
    canonical = jcs(value)
    assert parse_json(canonical) == value
    assert jcs(parse_json(canonical)) == canonical
    _CASES["canonical"] += 1


def _feed_page() -> str:
    """A page of the mint's feed holding one stamp, signed as the mint signs its log."""
    tally = LEAGUE.print_certificate(ALICE, "CZ-TALLY-0001", title="Tally", card_set="base")
    body = PrintStamped(certificate=tally, request_id="fuzz-stamp-0001")
    at = datetime(2026, 12, 3, 18, 40, 0, 123456, tzinfo=UTC)
    fields: dict[str, Any] = {
        "seq": 0,
        "stream": body.stream(),
        "stream_version": 1,
        "type": PrintStamped.TYPE,
        "body": body.to_wire(),
        "recorded_at": at,
    }
    leaf = event_leaf(**fields)
    event = Event(**fields, leaf_hash=leaf_hash(leaf), signature=LEAGUE.mint.sign_raw(leaf))
    return json.dumps({"events": [FeedEvent.of(event).model_dump(mode="json")], "next_after": 0})


FEED_PAGE = _feed_page()
MINT_PAGE = Auditor(LEAGUE.manifest, LEAGUE.root.public).context("mint")


@FUZZ
@given(text=st.one_of(mutated(FEED_PAGE), st.text(max_size=200)))
def test_a_mutated_feed_page_gets_the_reference_verdict(text: str) -> None:
    """The auditor's page check (``league audit`` reads pages a league serves, untrusted)
    never raises on a page, mutated or arbitrary: it returns its facts and the first failure;
    and its fast path gives the verdict the protocol's own code gives (tests/ledger/
    test_audit.py pins it on hand-made defects; here on any)."""
    fast = check_page(MINT_PAGE, text)
    with pytest.MonkeyPatch.context() as slow:

        def reference_only(*args: object) -> object:
            raise facts._Slow

        slow.setattr(facts, "_fast", reference_only)
        reference = check_page(MINT_PAGE, text)
    assert fast == reference
    _CASES["feed_pages"] += 1
    _CASES["feed_pages_clean"] += fast.failure is None
