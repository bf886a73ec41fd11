"""The auditor's pure core (docs/operations.md "Auditing a running league"): logs built in memory
with real signatures."""

from __future__ import annotations

import copy
import json
import multiprocessing
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime

import pytest

from ledger.api.logs import Feed, FeedEvent
from ledger.api.notary import HolderRow, Holders
from ledger.api.treasury import Upgrade, buy_request
from ledger.api.witness import Evidence, EvidenceList
from ledger.audit import AuditFailure, Auditor, Cosigned, check_page, facts
from ledger.audit.facts import _canonical, _Slow
from ledger.canonical import jcs
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.checkpoint import Checkpoint, Cosigner, sign_checkpoint
from ledger.endorsements import Chain, Endorsement, endorse
from ledger.events import (
    ConflictRefused,
    EventBody,
    HopRecorded,
    NoteIssued,
    NoteReturned,
    OrderRefused,
    PaymentNotarized,
    PaymentRejected,
    PaymentReturned,
    PrintDelivered,
    PrintReissued,
    PrintReturned,
    PrintStamped,
    PurchaseClosed,
    PurchaseOpened,
)
from ledger.fraud import FraudProof
from ledger.keys import SigningKey
from ledger.leaf import Event, canonical_leaf
from ledger.merkle import LeafHashes, leaf_hash
from ledger.print_runs import PrintRun, PrintRunTable
from ledger.wire import hash_text
from tests.ledger.factories import League, chain_of, key, make_league

AT = datetime(2026, 12, 2, 15, 51, 34, 123456, tzinfo=UTC)


class Log:
    """A service's log in memory: events signed and hashed as the event store does."""

    def __init__(self, league: League, service: str, signer: SigningKey) -> None:
        self.origin = f"{league.manifest.league}/{service}"
        self.service = service
        self.signer = signer
        self.events: list[FeedEvent] = []
        self.versions: Counter[str] = Counter()

    def append(self, body: EventBody, *, edit: dict[str, object] | None = None) -> FeedEvent:
        stream = body.stream()
        self.versions[stream] += 1
        fields = {
            "seq": len(self.events),
            "stream": stream,
            "stream_version": self.versions[stream],
            "type": body.TYPE,
            "body": body.to_wire(),
            "recorded_at": AT,
        }
        leaf = canonical_leaf(**fields)  # type: ignore[arg-type]
        event = Event(**fields, leaf_hash=leaf_hash(leaf), signature=self.signer.sign_raw(leaf))  # type: ignore[arg-type]
        served = FeedEvent.of(event)
        if edit:  # the row edited after signing: the served body no longer matches its leaf
            served = served.model_copy(update={"body": {**served.body, **edit}})
        self.events.append(served)
        return served

    def checkpoint(self, size: int | None = None, signer: SigningKey | None = None) -> Checkpoint:
        size = len(self.events) if size is None else size
        leaves = [
            leaf_hash(
                canonical_leaf(
                    seq=e.seq,
                    stream=e.stream,
                    stream_version=e.stream_version,
                    type=e.type,
                    body=e.body,
                    recorded_at=AT,
                )
            )
            for e in self.events[:size]
        ]
        root = LeafHashes(leaves).root()
        return sign_checkpoint(self.origin, size, root, signer or self.signer)


class World:
    """A league's mint and notary logs, and how prints are stamped and traded in them."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.mint = Log(league, "mint", league.mint)
        self.treasury = Log(league, "treasury", league.treasury)
        self.notary = Log(league, "notary", league.notary)
        self.hops: dict[tuple[str, int], int] = {}

    def stamp(
        self,
        holder: SigningKey,
        serial: str,
        *,
        title: str = "Model-A",
        card_set: str = "begotten",
        finish: str = "standard",
        signer: SigningKey | None = None,
    ) -> Chain:
        certificate = self.league.print_certificate(
            holder,
            serial,
            title=title,
            card_set=card_set,
            finish=finish,
            event=len(self.mint.events),
        )
        if signer is not None:
            certificate = type(certificate).sign(signer, **certificate.body())
        self.mint.append(PrintStamped(certificate=certificate, request_id="request-0001"))
        return Chain(certificate=certificate, endorsements=())

    def record(self, chain: Chain, hop: int) -> None:
        self.hops[(chain.serial, hop)] = len(self.notary.events)
        self.notary.append(HopRecorded(issue=1, endorsement=chain.endorsements[hop - 1]))

    def refuse(self, recorded: Chain, other: Chain, hop: int) -> None:
        proof = FraudProof(first=recorded.endorsements[hop - 1], second=other.endorsements[hop - 1])
        self.notary.append(
            ConflictRefused(issue=1, prior=self.hops[(recorded.serial, hop)], proof=proof)
        )

    def audit(self, *, kept: dict[str, Checkpoint] | None = None, page: int = 1) -> Auditor:
        auditor = Auditor(self.league.manifest, self.league.root.public)
        for service, checkpoint in (kept or {}).items():
            auditor.checkpoint(service, checkpoint, kept=True)
        logs = (
            (self.mint, self.treasury, self.notary)
            if self.treasury.events
            else (self.mint, self.notary)
        )
        for log in logs:
            auditor.checkpoint(log.service, log.checkpoint())
            for start in range(0, len(log.events), page):
                auditor.add(log.service, log.events[start : start + page])
        return auditor

    def issue(
        self,
        holder: SigningKey,
        serial: str,
        *,
        issue: int = 1,
        reason: str = "claim",
        request_id: str = "claim-0001",
        signer: SigningKey | None = None,
    ) -> Chain:
        """A note issued by the treasury (its next event)."""
        certificate = NoteCertificate.sign(
            signer or self.league.treasury,
            serial=serial,
            denomination=int(serial.split("-")[1][1:]),
            issued_to=holder.public.to_text(),
            issue=issue,
            event=len(self.treasury.events),
            manifest=self.league.manifest.hash_text(),
        )
        self.treasury.append(
            NoteIssued(certificate=certificate, request_id=request_id, reason=reason)
        )  # type: ignore[arg-type]
        return Chain(certificate=certificate, endorsements=())

    def record_note(self, chain: Chain, hop: int) -> int:
        """The notary records hop ``hop`` of a note's chain; its seq."""
        seq = len(self.notary.events)
        self.notary.append(
            HopRecorded(issue=chain.certificate.issue, endorsement=chain.endorsements[hop - 1])
        )
        return seq


def failure(world: World, **kwargs: object) -> AuditFailure:
    with pytest.raises(AuditFailure) as caught:
        world.audit(**kwargs).report()  # type: ignore[arg-type]
    assert "\n" not in caught.value.diagnostics()
    return caught.value


@pytest.fixture
def world(league: League) -> World:
    return World(league)


a, b, c, d = key(10), key(11), key(12), key(13)


def traded(world: World) -> Chain:
    """Two prints stamped; the first traded a→b→c, and a's second signature (to d) refused."""
    chain = world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(b, "CZ-MODEL-A-0002")
    to_c = chain_of(chain.certificate, a, b, c)
    world.record(to_c, 1)
    world.record(to_c, 2)
    world.refuse(to_c, chain_of(chain.certificate, a, d), 1)
    return to_c


def test_a_clean_league_passes_page_by_page(world: World) -> None:
    """Every signature, leaf, root and checkpoint verifies; serials unique
    and in their runs; chains valid, the conflict's fraud proof valid; the holder derived."""
    to_c = traded(world)
    mid = world.mint.checkpoint(1)
    for page in (1, 2, 100):
        auditor = world.audit(kept={"mint": mid}, page=page)
        report = auditor.report()
        assert [(s.service, s.events) for s in report.services] == [("mint", 2), ("notary", 3)]
        assert [s.checkpoints for s in report.services] == [2, 1]
        assert (report.prints, report.hops, report.conflicts, report.holders) == (2, 2, 1, 2)
        assert auditor.holder(to_c.serial) == c.public.to_text()
        assert auditor.latest("mint") == world.mint.checkpoint()
        assert "2 prints" in report.lines()[2]
        assert report.compared is None
        assert "not compared" in report.lines()[3]
        assert report.verifications == 1 + 3 + 5 * 2 + 1  # root, checkpoints, events, proof


def test_an_edited_event_is_named_by_service_and_seq(world: World) -> None:
    """An edited row no longer matches its leaf hash: mint seq 1."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.mint.checkpoint()
    certificate = world.league.print_certificate(b, "CZ-MODEL-A-0002", event=1)
    world.mint.append(
        PrintStamped(certificate=certificate, request_id="request-0001"),
        edit={"request_id": "forged-0001"},
    )
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "leaf hash" in caught.diagnostics()


def test_an_event_signed_by_another_key_fails(world: World) -> None:
    """Every event's signature is the service's."""
    world.notary.signer = key(99)
    stamped = world.stamp(a, "CZ-MODEL-A-0001")
    world.record(chain_of(stamped.certificate, a, b), 1)
    world.notary.signer = world.league.notary  # its checkpoint is the notary's own
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 0)
    assert "signature" in caught.diagnostics()


def test_a_gap_in_the_seqs_fails(world: World) -> None:
    """Seqs are dense from 0."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(a, "CZ-MODEL-A-0002")
    auditor = Auditor(world.league.manifest, world.league.root.public)
    with pytest.raises(AuditFailure, match="mint seq 1: the feed serves seq 1 where seq 0"):
        auditor.add("mint", world.mint.events[1:])


def test_a_checkpoint_over_another_log_fails(world: World, league: League) -> None:
    """A checkpoint whose root is not the recomputed one (a split view) fails
    at its size; one not signed by the service fails as such."""
    world.stamp(a, "CZ-MODEL-A-0001")
    other = World(league)
    other.stamp(b, "CZ-MODEL-A-0001")
    auditor = Auditor(league.manifest, league.root.public)
    auditor.checkpoint("mint", other.mint.checkpoint())
    with pytest.raises(AuditFailure, match=r"mint seq 0: .* root of the checkpoint it serves"):
        auditor.add("mint", world.mint.events)
    with pytest.raises(AuditFailure, match="does not verify under the mint key"):
        auditor.checkpoint("mint", world.mint.checkpoint(signer=key(99)))


def test_a_log_inconsistent_with_the_kept_checkpoint_fails(world: World, league: League) -> None:
    """The previous run's checkpoint must be a prefix of the log now: a log
    restored from an older backup (shorter) or rewritten since (other leaves) fails."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(a, "CZ-MODEL-A-0002")
    kept = world.mint.checkpoint()
    older = World(league)
    older.stamp(a, "CZ-MODEL-A-0001")
    caught = failure(older, kept={"mint": kept})
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "kept from the previous audit" in caught.diagnostics()
    older.stamp(c, "CZ-MODEL-A-0002")
    caught = failure(older, kept={"mint": kept})
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "do not hash to the root of the checkpoint kept" in caught.diagnostics()


def test_a_print_run_exceeded_fails() -> None:
    """No run is ever exceeded: a tiny run of 2 standard Tallies; a third
    standard certificate, validly signed by the mint, is named at its seq."""
    runs = PrintRunTable(
        runs=(PrintRun(title="Tally", set="base", standard=2, gilt=1, holofoil=0),)
    )
    world = World(make_league(print_runs=runs))
    for n in (1, 2, 3):
        world.stamp(a, f"CZ-TALLY-000{n}", title="Tally", card_set="base")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "exceeds the standard run of Tally, which holds 2 prints" in caught.diagnostics()


def test_serials_unique_and_numbers_dense(world: World, league: League) -> None:
    """A serial stamped twice fails at the second; numbers that skip one
    fail (the run's numbers are exactly first..first+n-1)."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(b, "CZ-MODEL-A-0001")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "stamped before" in caught.diagnostics()
    skipping = World(league)
    skipping.stamp(a, "CZ-MODEL-A-0001")
    skipping.stamp(a, "CZ-MODEL-A-0003")
    caught = failure(skipping)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "must be 0001 to 0002" in caught.diagnostics()


def test_a_certificate_not_signed_by_the_mint_fails(world: World, league: League) -> None:
    """Every certificate mint-signed."""
    world.stamp(a, "CZ-MODEL-A-0001", signer=league.notary)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 0)
    assert "not signed by the league's mint" in caught.diagnostics()


def test_bad_hops_fail(league: League) -> None:
    """A hop of a print never stamped, a hop by a key that did not hold the
    print, and a second endorsement recorded at a recorded hop each fail at their seq."""
    never = World(league)
    never.stamp(a, "CZ-MODEL-A-0001")
    ghost = league.print_certificate(a, "CZ-MODEL-A-0002", event=1)
    never.record(chain_of(ghost, a, b), 1)
    caught = failure(never)
    assert (caught.service, caught.seq, "never stamped" in caught.reason) == ("notary", 0, True)

    forged = World(league)
    stamped = forged.stamp(a, "CZ-MODEL-A-0001")
    theft = Endorsement.sign(  # b signs away a's print
        b,
        serial=stamped.serial,
        hop=1,
        prev=hash_text(stamped.certificate.hash()),
        to=c.public.to_text(),
        time=1_700_000_000,
        **{"from": b.public.to_text()},
    )
    forged.record(Chain(certificate=stamped.certificate, endorsements=(theft,)), 1)
    caught = failure(forged)
    assert (caught.service, caught.seq) == ("notary", 0)
    assert "did not hold it" in caught.reason

    twice = World(league)
    stamped = twice.stamp(a, "CZ-MODEL-A-0001")
    twice.record(chain_of(stamped.certificate, a, b), 1)
    twice.record(chain_of(stamped.certificate, a, c), 1)
    caught = failure(twice)
    assert (caught.service, caught.seq) == ("notary", 1)
    assert "first was recorded at seq 0 and wins" in caught.reason


def test_a_bad_refused_conflict_fails(league: League) -> None:
    """A refused conflict must carry a valid fraud proof whose first
    endorsement is the recorded winner."""
    world = World(league)
    stamped = world.stamp(a, "CZ-MODEL-A-0001")
    to_b, to_c = chain_of(stamped.certificate, a, b), chain_of(stamped.certificate, a, c)
    world.record(to_b, 1)
    world.refuse(to_c, to_b, 1)  # the refused one named as the recorded first
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 1)
    assert "not the hop recorded at seq 0" in caught.reason


# -- the notary's projection compared ---------------------------------------------------------


def holders_page(
    world: World,
    rows: dict[str, tuple[int, int, str]],
    size: int | None = None,
) -> Holders:
    return Holders(
        holders=[
            HolderRow(serial=s, issue=i, hops=h, holder=k) for s, (i, h, k) in sorted(rows.items())
        ],
        log_size=len(world.notary.events) if size is None else size,
        next_after=None,
    )


def audit_with_holders(world: World, *pages: tuple[str, Holders]) -> Auditor:
    auditor = Auditor(world.league.manifest, world.league.root.public)
    for after, page in pages:
        auditor.holders(after, page)
    for log in (world.mint, world.notary):
        auditor.checkpoint(log.service, log.checkpoint())
        auditor.add(log.service, log.events)
    return auditor


def test_holders_equal_to_those_derived_pass(world: World) -> None:
    """Every holder in the notary's projection equal to the one derived from
    the events, compared at the log size each page was read at."""
    to_c = traded(world)
    c_text = c.public.to_text()
    early = holders_page(world, {}, size=0)  # read before any hop was recorded
    report = audit_with_holders(world, ("", early)).report()
    assert report.compared == 0
    now = holders_page(world, {to_c.serial: (1, 2, c_text)})
    report = audit_with_holders(world, ("", now)).report()
    assert report.compared == 1
    assert "all 1 in the notary's projection equal" in report.lines()[3]


def test_an_edited_holder_is_named_by_its_serial(world: World) -> None:
    """A projection row that is not what the log folds to fails, naming the
    serial (and the seq of the hop that makes the true holder)."""
    to_c = traded(world)
    forged = holders_page(world, {to_c.serial: (1, 2, d.public.to_text())})
    with pytest.raises(AuditFailure) as caught:
        audit_with_holders(world, ("", forged))
    assert (caught.value.service, caught.value.seq) == ("notary", 1)
    assert f"says {to_c.serial} is held by {d.public.to_text()}" in caught.value.reason
    missing = holders_page(world, {})
    with pytest.raises(AuditFailure, match=f"no holder for {to_c.serial}"):
        audit_with_holders(world, ("", missing)).report()
    invented = holders_page(world, {"CZ-MODEL-A-0002": (1, 1, c.public.to_text())})
    with pytest.raises(AuditFailure, match="records no hop of CZ-MODEL-A-0002"):
        audit_with_holders(world, ("", invented))
    ahead = holders_page(world, {to_c.serial: (1, 2, c.public.to_text())}, size=9)
    with pytest.raises(AuditFailure, match="reflects 9 events of its log, but its feed ends"):
        audit_with_holders(world, ("", ahead)).report()


# -- witnesses ---------------------------------------------------------------------------------


def test_cosignatures_are_verified_and_reported(world: World) -> None:
    """Every cosignature line by a known witness (another service, named by
    its own log's origin, tlog-cosignature) verifies and is reported; a bad one fails naming
    the service whose checkpoint carries it."""
    traded(world)
    league = world.league
    witness = Cosigner(f"{league.manifest.league}/notary", league.notary)
    served = world.mint.checkpoint()
    cosigned = served.with_signature(witness.cosign(served, 1_765_000_000))
    auditor = Auditor(league.manifest, league.root.public)
    auditor.checkpoint("mint", cosigned)
    auditor.add("mint", world.mint.events)
    auditor.checkpoint("notary", world.notary.checkpoint())
    auditor.add("notary", world.notary.events)
    report = auditor.report()
    assert report.services[0].cosigned == (Cosigned("notary", 2, 1_765_000_000),)
    assert "cosigned by notary at size 2" in report.lines()[0]
    assert "no witness cosignature" in report.lines()[1]
    other = world.mint.checkpoint(1)  # a cosignature of another checkpoint, moved onto this one
    moved = served.with_signature(witness.cosign(other, 1_765_000_000))
    with pytest.raises(AuditFailure) as caught:
        Auditor(league.manifest, league.root.public).checkpoint("mint", moved)
    assert (caught.value.service, caught.value.seq) == ("mint", None)
    assert "cosignature by the notary witness" in caught.value.reason
    stranger = Cosigner(f"{league.manifest.league}/notary", key(77))  # not the manifest's key
    ignored = served.with_signature(stranger.cosign(served, 1))
    auditor = Auditor(league.manifest, league.root.public)
    auditor.checkpoint("mint", ignored)  # a line by no known witness is not a cosignature
    assert auditor.latest("mint") == ignored


def test_evidence_kept_by_a_witness_fails_the_accused(world: World) -> None:
    """Any evidence a witness keeps is a violation naming the accused log."""
    traded(world)
    league = world.league
    served = world.mint.checkpoint()
    split = World(league)
    split.stamp(c, "CZ-MODEL-A-0001")
    split.stamp(d, "CZ-MODEL-A-0002")
    evidence = Evidence(
        id=1,
        origin=world.mint.origin,
        recorded_at="2026-12-03T04:00:00Z",
        kind="same-size",
        reason="two roots at size 2",
        cosigned=str(served),
        submitted=str(split.mint.checkpoint()),
        old_size=2,
        proof=[],
    )
    auditor = world.audit()
    auditor.evidence("notary", EvidenceList(witness=world.notary.origin, evidence=[], next_after=0))
    assert auditor.report().evidence == {"notary": 1}
    auditor = world.audit()
    auditor.evidence(
        "notary", EvidenceList(witness=world.notary.origin, evidence=[evidence], next_after=1)
    )
    with pytest.raises(AuditFailure) as caught:
        auditor.report()
    assert (caught.value.service, caught.value.seq) == ("mint", None)
    assert (
        "the notary witness keeps evidence against its log (same-size, convicts the log)"
        in caught.value.reason
    )


# -- the fast path and the pool give the reference's verdicts ----------------------------------


def test_fast_canonical_json_is_rfc8785() -> None:
    """The audit's canonical form of ASCII JSON is RFC 8785's, every C0 control and escape
    included; anything else goes to the reference path."""
    texts = ["".join(chr(n) for n in range(128)), 'quote " and \\ back', ""]
    value = {"z": texts, "a": {"k": [1, -9_007_199_254_740_991, True, None]}, "B": "x"}
    assert _canonical(value) == jcs(value)
    for refused in ({"é": 1}, {"k": "\U0001f600"}, {"k": "\ud800"}, {"k": "\u2028"}):
        with pytest.raises(_Slow):
            _canonical(refused)


def pages_of(log: Log, size: int = 2) -> list[str]:
    return [
        Feed(
            events=log.events[i : i + size], next_after=log.events[i : i + size][-1].seq
        ).model_dump_json()
        for i in range(0, len(log.events), size)
    ]


def mutations(world: World) -> list[tuple[str, str]]:
    """Pages of the notary's and the mint's feeds, clean and with each kind of defect."""
    out = [("mint", page) for page in pages_of(world.mint)]
    out += [("notary", page) for page in pages_of(world.notary)]
    raw = json.loads(pages_of(world.mint, 1)[0])
    event = raw["events"][0]

    def edited(
        service: str,
        change: dict[str, object],
        body: dict[str, object] | None = None,
        certificate: dict[str, object] | None = None,
    ) -> tuple[str, str]:
        e = copy.deepcopy(event)
        e.update(change)
        if body:
            e["body"].update(body)
        if certificate:
            e["body"]["certificate"].update(certificate)
        return service, json.dumps({"events": [e], "next_after": 0})

    out += [
        edited("mint", {"seq": 5}),
        edited("mint", {"seq": "0"}),
        edited("mint", {"recorded_at": "2026-02-30T15:51:34.123456Z"}),
        edited("mint", {"recorded_at": "0999-12-02T15:51:34.123456Z"}),
        edited("mint", {"signature": event["signature"][:-2] + "AA"}),
        edited("mint", {"leaf_hash": event["leaf_hash"].lower()}),
        edited("mint", {"type": "hop-recorded"}),
        edited("mint", {"stream": "print/CZ-MODEL-A-0009"}),
        edited("mint", {}, body={"request_id": "ré"}),
        edited("mint", {}, body={"extra": 1}),
        edited("mint", {}, certificate={"issue": 1.0}),
        edited("mint", {}, certificate={"event": 2**60}),
        edited("mint", {}, certificate={"title": "Faithful"}),
        ("mint", '{"events": [], "next_after": 1.5}'),
        ("mint", "not json"),
        ("mint", '{"events": [{"seq": 0}], "next_after": 0}'),
    ]
    # A run of good events, then one whose own signature fails, then more: the fast path
    # verifies a run's signatures together, and must stop where the reference path does.
    for service, log, bad in (
        ("notary", world.notary, 1),
        ("mint", world.mint, 1),
        ("notary", world.notary, 0),
    ):
        page = json.loads(pages_of(log, 3)[0])
        page["events"][bad]["signature"] = page["events"][bad]["signature"][:-2] + "AA"
        out.append((service, json.dumps(page)))
    return out


def test_the_fast_path_gives_the_reference_verdicts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page, clean or defective, gets the same facts and the same failure whether the
    fast path or only the protocol's own code (FeedEvent.verified, parse_event) checks it."""
    traded(world)
    pages = mutations(world)
    context = Auditor(world.league.manifest, world.league.root.public).context
    fast = [check_page(context(service), text) for service, text in pages]
    assert sum(page.failure is None for page in fast) == 4  # the clean pages only
    # The runs with a bad signature inside: the good events before it judged, none after.
    assert [(p.failure and p.failure[0], len(p.facts)) for p in fast[-3:]] == [
        (1, 1),
        (1, 1),
        (0, 0),
    ]
    with monkeypatch.context() as slow:

        def reference_only(*args: object) -> object:
            raise _Slow

        slow.setattr(facts, "_fast", reference_only)
        reference = [check_page(context(service), text) for service, text in pages]
    assert fast == reference


def test_a_process_pool_gives_the_same_verdicts(world: World) -> None:
    """check_page in worker processes (as league audit runs it) answers what it answers here."""
    traded(world)
    pages = mutations(world)
    context = Auditor(world.league.manifest, world.league.root.public).context
    here = [check_page(context(service), text) for service, text in pages]
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn) as pool:
        there = list(pool.map(check_page, [context(s) for s, _ in pages], [t for _, t in pages]))
    assert there == here


def test_holders_pages_tile_the_serials(world: World) -> None:
    """Pages are read in order (each after the last serial of the one
    before) and compared at their own log sizes; a page out of serial order fails."""
    to_c = traded(world)
    other = world.stamp(b, "CZ-MODEL-A-0003")
    world.record(chain_of(other.certificate, b, a), 1)
    first = Holders(
        holders=[HolderRow(serial=to_c.serial, issue=1, hops=2, holder=c.public.to_text())],
        log_size=2,
        next_after=to_c.serial,
    )  # read when two hops were recorded
    second = Holders(
        holders=[HolderRow(serial=other.serial, issue=1, hops=1, holder=a.public.to_text())],
        log_size=len(world.notary.events),
        next_after=None,
    )
    report = audit_with_holders(world, ("", first), (to_c.serial, second)).report()
    assert report.compared == 2
    with pytest.raises(ValueError, match="in order"):
        audit_with_holders(world, ("", first), ("", second))
    backwards = Holders(holders=second.holders + first.holders, log_size=2, next_after=None)
    with pytest.raises(AuditFailure, match="not in serial order"):
        audit_with_holders(world, ("", backwards))


# -- the treasury ----------------------------------------------------------------------------------

treasury_key = key(3)  # tests.ledger.factories.make_league's treasury


def purchase(
    world: World,
    buyer: SigningKey,
    paid: list[Chain],
    *,
    price: int = 30,
    change: tuple[str, ...] = ("CZ-M5-000001", "CZ-M5-000002", "CZ-M5-000003", "CZ-M5-000004"),
    misnamed: int = 0,
    stamped: bool = True,
) -> None:
    """A purchase's saga as the treasury writes it: the paid chains (each already endorsed to
    the treasury) notarized, the print (a common single, M30) delivered, the notes returned,
    the change issued."""
    pid = "purchase-0001"
    seqs = [world.record_note(chain, len(chain.endorsements)) for chain in paid]
    request = buy_request(
        buyer, world.league.manifest, "Tally", paid, purchase_id=pid, at=1_700_000_000
    )
    total = sum(int(chain.serial.split("-")[1][1:]) for chain in paid)
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=price, paid=total))
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    serial = "CZ-TALLY-0001"  # the first Tally the mint stamps
    printed = (
        world.stamp(buyer, serial, title="Tally", card_set="base").certificate
        if stamped
        else world.league.print_certificate(
            buyer, serial, title="Tally", card_set="base", finish="standard", event=0
        )
    )
    assert isinstance(printed, PrintCertificate)
    log.append(PrintDelivered(purchase_id=pid, certificate=printed))
    for chain, seq in zip(paid, seqs, strict=True):
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=chain.certificate.issue,
                endorsement=chain.endorsements[-1],
                notarized=seq + misnamed,
                purchase_id=pid,
            )
        )
    log.append(PaymentReturned(purchase_id=pid, notes=tuple(c.serial for c in paid)))
    notes = [
        world.issue(buyer, serial, reason="change", request_id=pid).certificate for serial in change
    ]
    log.append(PurchaseClosed(purchase_id=pid, outcome="delivered", notes=tuple(notes)))  # type: ignore[arg-type]


def both_paid(world: World, first: Chain, second: Chain) -> list[Chain]:
    """Both of treasury_world's M25s paid to the treasury by a (M50 for a single of M30: M20
    of change): a's second, and the first, which a paid b and b paid back (hop 2 recorded)."""
    back = endorse(first, b, a.public, 1_700_000_050)
    world.record_note(back, 2)
    return [
        chain_of(second.certificate, a, treasury_key),
        endorse(back, a, treasury_key.public, 1_700_000_100),
    ]


def treasury_world(world: World) -> list[Chain]:
    """a claims 50 marks (2 x M25), b 1 mark; a pays b one M25 at the notary."""
    first = world.issue(a, "CZ-M25-000001")
    second = world.issue(a, "CZ-M25-000002")
    world.issue(b, "CZ-M1-000001", request_id="claim-0002")
    to_b = chain_of(first.certificate, a, b)
    world.record_note(to_b, 1)
    return [to_b, second]


def test_a_treasury_log_passes(world: World) -> None:
    """Notes issued, notarized, paid to the treasury, returned and re-issued
    as change: every check passes; the report gives the treasury's figures."""
    traded(world)
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second))
    world.issue(b, "CZ-M25-000002", issue=2, request_id="claim-0003")  # re-issued, issue 2
    report = world.audit().report()
    figures = report.treasury
    assert figures is not None
    assert (figures.issues, figures.returns, figures.claimed) == (8, 2, 76)
    assert figures.purchases == {"delivered": 1}
    assert figures.note_hops == 4
    assert figures.denominations[1] == (25, 24_000, 23_999, 1)
    assert figures.denominations[2] == (5, 40_000, 39_996, 4)
    text = "\n".join(report.lines())
    assert "supply 1,500,000 marks after every event" in text
    assert "M25: 23999 in reserve, 1 out of 24000" in text
    assert [s.service for s in report.services] == ["mint", "treasury", "notary"]


def test_a_note_issued_twice_without_a_return_fails(world: World) -> None:
    """A note is never issued while out: issue 1 twice."""
    world.issue(a, "CZ-M25-000001")
    world.issue(b, "CZ-M25-000001", request_id="claim-0002")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "while its issue 1 is out" in caught.reason


def test_a_certificate_signed_by_another_key_fails(world: World) -> None:
    """Every note certificate is signed by the manifest's treasury key."""
    world.issue(a, "CZ-M25-000001")
    world.issue(a, "CZ-M5-000001", request_id="claim-0002", signer=world.league.mint)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "not signed by the league's treasury" in caught.reason


def test_a_serial_outside_the_note_set_fails(world: World) -> None:
    """A note's serial lies inside the manifest's note set (6,000 M100 notes)."""
    world.issue(a, "CZ-M100-006001")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 0)
    assert "note set" in caught.reason


def test_a_supply_broken_by_a_forged_issue_fails(world: World) -> None:
    """A forged issue 2 of a note whose issue 1 was never returned, at the stream version
    the service would write, would make the supply 1,500,025: named with its seq."""
    world.issue(a, "CZ-M25-000001")
    world.treasury.versions["note/CZ-M25-000001"] += 1  # as if a return had been written
    world.issue(c, "CZ-M25-000001", issue=2, request_id="claim-0002")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "the supply would be 1,500,025 marks, not 1,500,000" in caught.reason


def test_issue_numbers_are_dense(world: World) -> None:
    """Issue n only after issue n-1: a first issue numbered 2 fails."""
    world.issue(a, "CZ-M25-000001", issue=2)
    caught = failure(world)
    assert "where issue 1 is next" in caught.reason


def test_the_faucet_cap_per_key_and_day_holds(world: World) -> None:
    """Book V.5: at most the policy's 50 marks per key per UTC day: a 51st mark fails."""
    world.issue(a, "CZ-M25-000001")
    world.issue(a, "CZ-M25-000002")
    world.issue(b, "CZ-M1-000001", request_id="claim-0002")
    world.audit().report()
    world.issue(a, "CZ-M1-000002", request_id="claim-0003")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 3)
    assert "51 marks on 2026-12-02 (UTC), more than its 50 a day" in caught.reason


def test_a_hop_of_a_note_never_issued_fails(world: World) -> None:
    """The notary's hops of notes follow the treasury's issues."""
    world.issue(a, "CZ-M25-000001")
    other = world.league.note_certificate(a, "CZ-M25-000001", issue=2)
    world.record_note(chain_of(other, a, b), 1)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 0)
    assert "never issued" in caught.reason


def test_an_unknown_treasury_event_fails_naming_its_type(world: World) -> None:
    """An event type the auditor does not know fails loudly, naming it."""
    world.issue(a, "CZ-M25-000001")

    class Minted(EventBody):
        TYPE = "notes-minted"
        WHAT = "notes-minted event"
        serial: str

        def stream(self) -> str:
            return "note/CZ-M25-000002"

    world.treasury.append(Minted(serial="CZ-M25-000002"))
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", 1)
    assert "'notes-minted'" in caught.reason


def test_a_purchase_closed_without_exact_change_fails(world: World) -> None:
    """V.5 "exact change": paid M50 for a price of 30, changed only 15."""
    first, second = treasury_world(world)
    purchase(
        world,
        a,
        both_paid(world, first, second),
        change=("CZ-M5-000001", "CZ-M5-000002", "CZ-M5-000003"),
    )
    caught = failure(world)
    assert caught.service == "treasury"
    assert caught.seq == len(world.treasury.events) - 1
    assert "closed delivered but not exactly: paid 50" in caught.reason


def test_a_return_naming_another_notary_event_fails(world: World) -> None:
    """A note's return names the notary's hop that recorded its endorsement to the treasury."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), misnamed=-1)
    caught = failure(world)
    assert caught.service == "treasury"
    assert "names the notary's hop at seq" in caught.reason


def test_a_print_delivered_that_the_mint_never_stamped_fails(world: World) -> None:
    """Every purchase delivered is stamped: its print is the mint's stamp to the buyer."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), stamped=False)
    caught = failure(world)
    assert caught.service == "treasury"
    assert "which the mint's log did not stamp to its buyer" in caught.reason


def test_the_fast_path_gives_the_reference_verdicts_on_the_treasury(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The treasury's pages (issues, returns, a purchase's steps), clean or edited, get the
    same facts and failures from the fast path as from the protocol's own code."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second))
    pages = [("treasury", page) for page in pages_of(world.treasury, 3)]
    for event in world.treasury.events[:1] + world.treasury.events[-3:]:
        for change in (
            {"reason": "refund"},
            {"request_id": "claim-9999"},
            {"extra": 1},
            {"notarized": 0},
        ):
            raw = json.loads(event.model_dump_json())
            raw["body"].update(change)
            pages.append(("treasury", json.dumps({"events": [raw], "next_after": raw["seq"]})))
    context = Auditor(world.league.manifest, world.league.root.public).context
    fast = [check_page(context(service), text) for service, text in pages]
    assert sum(page.failure is None for page in fast) == len(pages_of(world.treasury, 3))
    with monkeypatch.context() as slow:

        def reference_only(*args: object) -> object:
            raise _Slow

        slow.setattr(facts, "_fast", reference_only)
        reference = [check_page(context(service), text) for service, text in pages]
    assert fast == reference


def refunded(world: World, buyer: SigningKey, paid: list[Chain], *, short: int = 0) -> None:
    """A purchase whose run was exhausted, as the treasury writes it: each paid note returned
    and issued again to the buyer (issue n+1), then the purchase closed refunded."""
    pid = "purchase-0002"
    seqs = [world.record_note(chain, len(chain.endorsements)) for chain in paid]
    request = buy_request(
        buyer, world.league.manifest, "Tally", paid, purchase_id=pid, at=1_700_000_000
    )
    total = sum(int(chain.serial.split("-")[1][1:]) for chain in paid)
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=30, paid=total))
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    log.append(OrderRefused(purchase_id=pid, reason="the run is exhausted"))
    notes = []
    for chain, seq in zip(paid[: len(paid) - short], seqs, strict=False):
        n = chain.certificate.issue
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=n,
                endorsement=chain.endorsements[-1],
                notarized=seq,
                purchase_id=pid,
            )
        )
        notes.append(
            world.issue(
                buyer, chain.serial, issue=n + 1, reason="refund", request_id=pid
            ).certificate
        )
    log.append(PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes)))  # type: ignore[arg-type]


def test_a_refund_and_a_rejection_pass(world: World) -> None:
    """L-18: an exhausted run refunds the very notes paid (issue 2 to the buyer); a payment
    the notary refused closes rejected, moving nothing."""
    first, second = treasury_world(world)
    refunded(world, a, [chain_of(second.certificate, a, treasury_key)])
    pid = "purchase-0003"
    paid = endorse(first, b, treasury_key.public, 1_700_000_100)
    request = buy_request(
        b, world.league.manifest, "Tally", [paid], purchase_id=pid, at=1_700_000_000
    )
    world.treasury.append(PurchaseOpened(purchase_id=pid, request=request, price=30, paid=25))
    world.treasury.append(PaymentRejected(purchase_id=pid, reason="another endorsement"))
    world.treasury.append(PurchaseClosed(purchase_id=pid, outcome="rejected"))
    figures = world.audit().report().treasury
    assert figures is not None
    assert figures.purchases == {"refunded": 1, "rejected": 1}
    assert (figures.issues, figures.returns, figures.open_purchases) == (4, 1, 0)
    assert figures.denominations[1] == (25, 24_000, 23_998, 2)


def test_a_refund_short_of_the_payment_fails(world: World) -> None:
    """A refund gives back the whole payment: one of two paid notes kept fails."""
    _, second = treasury_world(world)
    third = chain_of(world.issue(c, "CZ-M1-000002", request_id="claim-0004").certificate, c, a)
    world.record_note(third, 1)  # c pays a, who pays (L-21)
    refunded(
        world,
        a,
        [
            chain_of(second.certificate, a, treasury_key),
            endorse(third, a, treasury_key.public, 1_700_000_100),
        ],
        short=1,
    )
    caught = failure(world)
    assert caught.service == "treasury"
    assert "closed refunded but not exactly: paid 26, refunded 25" in caught.reason


# -- finish upgrades: prints returned to the mint (L-20) ------------------------------------------

mint_key = key(2)  # tests.ledger.factories.make_league's mint


def returned_to_mint(
    world: World, holder: SigningKey, order: str = "purchase-0004", *, notarized: int | None = None
) -> Chain:
    """A print stamped to ``holder``, endorsed to the mint's key, notarized (unless
    ``notarized`` names another seq for it), and taken back by the mint for ``order``."""
    chain = world.stamp(holder, "CZ-MODEL-A-0001")
    back = chain_of(chain.certificate, holder, mint_key)
    if notarized is None:
        notarized = len(world.notary.events)
        world.notary.append(HopRecorded(issue=1, endorsement=back.endorsements[0]))
    world.mint.append(
        PrintReturned(
            serial=chain.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=notarized,
            order_id=order,
        )
    )
    return back


def reissue(world: World, holder: SigningKey, order: str = "purchase-0004") -> PrintCertificate:
    certificate = world.league.print_certificate(
        holder, "CZ-MODEL-A-0001", issue=2, event=len(world.mint.events)
    )
    world.mint.append(PrintReissued(certificate=certificate, order_id=order))
    return certificate


def upgrade(
    world: World,
    buyer: SigningKey,
    back: Chain,
    pid: str = "purchase-0004",
    *,
    reissued: PrintCertificate | None = None,
    closed: bool = True,
) -> list[int]:
    """A gilt upgrade of ``back``'s print as the treasury writes it, paid M100 (a's and d's
    claimed M25s): opened, and unless not ``closed`` refused (handing back ``reissued``) and
    refunded in full. The seqs of the payment's hops at the notary."""
    issued = [
        (holder, world.issue(holder, f"CZ-M25-00000{n}", request_id=f"claim-000{n}").certificate)
        for n, holder in ((1, a), (2, a), (3, d), (4, d))
    ]
    # The buyer pays (L-21): a note of another key is paid to the buyer first, those hops
    # recorded after the buyer's own payment hops.
    gifts = [chain_of(note, holder, buyer) for holder, note in issued if holder != buyer]
    paid = [chain_of(note, buyer, treasury_key) for holder, note in issued if holder == buyer]
    paid += [endorse(gift, buyer, treasury_key.public, 1_700_000_050) for gift in gifts]
    seqs = [world.record_note(chain, 1) for chain in paid[: len(paid) - len(gifts)]]
    for gift in gifts:
        world.record_note(gift, 1)
    seqs += [world.record_note(chain, 2) for chain in paid[len(paid) - len(gifts) :]]
    request = buy_request(
        buyer,
        world.league.manifest,
        "Model-A",
        paid,
        purchase_id=pid,
        at=1_700_000_000,
        upgrade=Upgrade(finish="gilt", returned=back),
    )
    log = world.treasury
    log.append(PurchaseOpened(purchase_id=pid, request=request, price=80, paid=100))
    if not closed:
        return seqs
    log.append(PaymentNotarized(purchase_id=pid, notarized=tuple(seqs)))
    log.append(OrderRefused(purchase_id=pid, reason="the run is exhausted", reissued=reissued))
    notes = []
    for chain, seq in zip(paid, seqs, strict=True):
        log.append(
            NoteReturned(
                serial=chain.serial,
                issue=1,
                endorsement=chain.endorsements[-1],
                notarized=seq,
                purchase_id=pid,
            )
        )
        notes.append(
            world.issue(buyer, chain.serial, issue=2, reason="refund", request_id=pid).certificate
        )
    log.append(PurchaseClosed(purchase_id=pid, outcome="refunded", notes=tuple(notes)))  # type: ignore[arg-type]
    return seqs


def test_a_print_returned_and_issued_again_passes(world: World) -> None:
    """L-20: a print taken back by the mint (its hop to the mint's key notarized) for a gilt
    upgrade, refused (an exhausted run) and refunded: issued again as issue 2 to the buyer,
    whose chain then moves, passes; the runs count the stamp once."""
    back = returned_to_mint(world, a)
    again = reissue(world, a)
    upgrade(world, a, back, reissued=again)
    world.notary.append(HopRecorded(issue=2, endorsement=chain_of(again, a, b).endorsements[0]))
    auditor = world.audit()
    report = auditor.report()
    assert (report.prints, report.hops) == (1, 8)  # and the four notes paid, two via a
    assert (report.returned_prints, report.reissued_prints, report.notarized_prints) == (1, 1, 1)
    assert report.treasury is not None
    assert report.treasury.purchases == {"refunded": 1}
    text = "\n".join(report.lines())
    assert (
        "upgrades: 1 prints returned to the mint, each once per issue for a purchase of "
        "that upgrade, 1 on their notarized hop" in text
    )
    assert "past its audited log" not in text
    assert auditor.holder("CZ-MODEL-A-0001") == b.public.to_text()


def test_a_print_taken_back_for_no_upgrade_and_given_to_anyone_fails(world: World) -> None:
    """L-20, as a reviewer reproduced it: the notary records a→b, never a hop to the mint;
    the mint says the print came back on notary seq 999 for a made-up order and issues it
    again to c. With no treasury log the return cannot be accounted for; with one, it names no
    purchase of that upgrade; with a's real upgrade open, c is not its buyer."""

    def forged(world: World, order: str) -> Chain:
        chain = world.stamp(a, "CZ-MODEL-A-0001")
        to_b = chain_of(chain.certificate, a, b)
        world.record(to_b, 1)
        back = endorse(to_b, b, mint_key.public, 1_700_000_200)
        world.mint.append(
            PrintReturned(
                serial=back.serial,
                issue=1,
                endorsement=back.endorsements[1],
                notarized=999,
                order_id=order,
            )
        )
        reissue(world, c, order)
        return back

    forged(world, "purchase-0666")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "the treasury serves no log" in caught.reason

    world.issue(a, "CZ-M25-000001")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "names no purchase opened with that print returned" in caught.reason

    bought = World(world.league)
    upgrade(bought, b, forged(bought, "purchase-0004"), closed=False)
    caught = failure(bought)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "who is not its buyer" in caught.reason


def test_a_return_past_the_notary_log_is_not_matched_and_not_notarized(world: World) -> None:
    """A return naming a notary seq past the log read is "not matched this run", under the
    mint, never counted notarized; one the log reached but never matched fails."""
    back = returned_to_mint(world, a, notarized=6)
    upgrade(world, a, back, closed=False)
    report = world.audit().report()
    assert (report.returned_prints, report.notarized_prints) == (1, 0)
    text = "\n".join(report.lines())
    assert "mint: 1 print returns name notary hops past its audited log" in text
    assert report.treasury is not None
    assert report.treasury.unmatched_returns == 0
    assert "treasury: 1 returns" not in text

    # The notary's log fed before the return: seq 0 was read, the return never matched.
    late = World(world.league)
    back = returned_to_mint(late, a)
    upgrade(late, a, back, closed=False)
    auditor = Auditor(late.league.manifest, late.league.root.public)
    for log in (late.mint, late.treasury, late.notary):
        auditor.checkpoint(log.service, log.checkpoint())
    auditor.add("mint", late.mint.events[:1])
    auditor.add("treasury", late.treasury.events)
    auditor.add("notary", late.notary.events)
    auditor.add("mint", late.mint.events[1:])
    with pytest.raises(AuditFailure) as caught:
        auditor.report()
    assert (caught.value.service, caught.value.seq) == ("mint", 1)
    assert "at seq 0, which its log (audited to 7 events) never matched" in caught.value.reason


def test_two_returns_naming_one_notary_hop_fail(world: World) -> None:
    """A note's return and a print's return naming the same notary seq: the second fails
    (one overwrote the other before, leaving the print's return unchecked)."""
    back = chain_of(world.stamp(a, "CZ-MODEL-A-0001").certificate, a, mint_key)
    # The mint's return, never notarized, names the notary's hop of the first paid note.
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=0,
            order_id="purchase-0004",
        )
    )
    seqs = upgrade(world, a, back, reissued=reissue(world, a))
    assert seqs[0] == 0
    caught = failure(world)
    assert caught.service == "treasury"
    assert (
        f"names the notary's hop at seq {seqs[0]}, which the mint's return at seq 1 "
        f"names too" in caught.reason
    )


def test_a_refunded_upgrade_without_its_print_back_fails(world: World) -> None:
    """L-20: a refunded upgrade hands its print back: one where the mint neither took the
    print nor issued it again fails."""
    back = chain_of(world.stamp(a, "CZ-MODEL-A-0001").certificate, a, mint_key)
    upgrade(world, a, back)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("treasury", len(world.treasury.events) - 1)
    assert "closed refunded but not exactly: the print returned for it is not handed back" in (
        caught.reason
    )


def test_a_print_returned_twice_or_issued_again_before_its_return_fails(world: World) -> None:
    """L-20: a print comes back once per issue, and is issued again only after it came back."""
    back = returned_to_mint(world, a)
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[0],
            notarized=1,
            order_id="purchase-0010",
        )
    )
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "returned as issue 1, but it is back at the mint" in caught.reason

    early = World(world.league)
    early.stamp(a, "CZ-MODEL-A-0001")
    reissue(early, a)
    caught = failure(early)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "is not back at the mint" in caught.reason


def test_a_return_naming_another_hop_or_a_hop_by_the_mint_fails(world: World) -> None:
    """L-20: a print's return names the notary's hop that records its endorsement to the
    mint's key; the mint never signs a print it took back away again."""
    chain = world.stamp(a, "CZ-MODEL-A-0001")
    to_b = chain_of(chain.certificate, a, b)
    world.record(to_b, 1)  # seq 0: a→b
    back = endorse(to_b, b, mint_key.public, 1_700_000_200)
    world.record(back, 2)  # seq 1: b→mint
    world.mint.append(
        PrintReturned(
            serial=back.serial,
            issue=1,
            endorsement=back.endorsements[1],
            notarized=0,
            order_id="purchase-0004",
        )
    )
    upgrade(world, b, back, closed=False)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "names the notary's hop at seq 0, which records another event" in caught.reason

    signed = World(world.league)
    back = returned_to_mint(signed, a)
    onward = endorse(back, mint_key, c.public, 1_700_000_200)
    signed.notary.append(HopRecorded(issue=1, endorsement=onward.endorsements[1]))
    caught = failure(signed)
    assert (caught.service, caught.seq) == ("notary", 1)
    assert "signed away by the mint" in caught.reason


def test_a_purchase_priced_off_the_published_price_fails(world: World) -> None:
    """V.5: a single is sold at its rarity's price (a common one M30), never another."""
    first, second = treasury_world(world)
    purchase(world, a, both_paid(world, first, second), price=25, change=("CZ-M25-000003",))
    caught = failure(world)
    assert caught.service == "treasury"
    assert "priced 25 marks, but the published price of a single of its title is 30" in (
        caught.reason
    )


def test_a_purchase_taking_a_chain_its_buyer_did_not_sign_over_fails(world: World) -> None:
    """# L-21: a purchase takes only what its buyer signed over; a chain endorsed to the
    treasury by another key (copied from the feed) in a purchase-opened fails the audit."""
    first, second = treasury_world(world)
    purchase(world, c, both_paid(world, first, second))  # a's hops, c the buyer
    caught = failure(world)
    assert caught.service == "treasury"
    assert "whose last endorsement is not its buyer's (L-21)" in caught.reason
