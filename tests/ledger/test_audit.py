"""The auditor's pure core (issue 10 item 3): logs built in memory with real signatures."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from ledger.api.logs import FeedEvent
from ledger.audit import AuditFailure, Auditor
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.endorsements import Chain, Endorsement
from ledger.events import ConflictRefused, EventBody, HopRecorded, PrintStamped
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
        leaves = [leaf_hash(canonical_leaf(
            seq=e.seq, stream=e.stream, stream_version=e.stream_version, type=e.type,
            body=e.body, recorded_at=AT,
        )) for e in self.events[:size]]
        root = LeafHashes(leaves).root()
        return sign_checkpoint(self.origin, size, root, signer or self.signer)


class World:
    """A league's mint and notary logs, and how prints are stamped and traded in them."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.mint = Log(league, "mint", league.mint)
        self.notary = Log(league, "notary", league.notary)
        self.hops: dict[tuple[str, int], int] = {}

    def stamp(self, holder: SigningKey, serial: str, *, title: str = "Model-A",
              card_set: str = "begotten", finish: str = "standard",
              signer: SigningKey | None = None) -> Chain:
        certificate = self.league.print_certificate(
            holder, serial, title=title, card_set=card_set, finish=finish,
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
        for log in (self.mint, self.notary):
            auditor.checkpoint(log.service, log.checkpoint())
            for start in range(0, len(log.events), page):
                auditor.add(log.service, log.events[start:start + page])
        return auditor


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
    """issue 10 item 3: every signature, leaf, root and checkpoint verifies; serials unique
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
        assert "2 prints" in report.lines()[-1]


def test_an_edited_event_is_named_by_service_and_seq(world: World) -> None:
    """issue 10 item 3: an edited row no longer matches its leaf hash: mint seq 1."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.mint.checkpoint()
    certificate = world.league.print_certificate(b, "CZ-MODEL-A-0002", event=1)
    world.mint.append(PrintStamped(certificate=certificate, request_id="request-0001"),
                      edit={"request_id": "forged-0001"})
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 1)
    assert "leaf hash" in caught.diagnostics()


def test_an_event_signed_by_another_key_fails(world: World) -> None:
    """issue 10 item 3: every event's signature is the service's."""
    world.notary.signer = key(99)
    stamped = world.stamp(a, "CZ-MODEL-A-0001")
    world.record(chain_of(stamped.certificate, a, b), 1)
    world.notary.signer = world.league.notary  # its checkpoint is the notary's own
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 0)
    assert "signature" in caught.diagnostics()


def test_a_gap_in_the_seqs_fails(world: World) -> None:
    """issue 10 item 3: seqs are dense from 0."""
    world.stamp(a, "CZ-MODEL-A-0001")
    world.stamp(a, "CZ-MODEL-A-0002")
    auditor = Auditor(world.league.manifest, world.league.root.public)
    with pytest.raises(AuditFailure, match="mint seq 1: the feed serves seq 1 where seq 0"):
        auditor.add("mint", world.mint.events[1:])


def test_a_checkpoint_over_another_log_fails(world: World, league: League) -> None:
    """issue 10 item 3: a checkpoint whose root is not the recomputed one (a split view) fails
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
    """issue 10 item 3: the previous run's checkpoint must be a prefix of the log now: a log
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
    """issue 10 item 3 ("no run ever exceeded"): a tiny run of 2 standard Tallies; a third
    standard certificate, validly signed by the mint, is named at its seq."""
    runs = PrintRunTable(runs=(PrintRun(title="Tally", set="base", standard=2, gilt=1,
                                        holofoil=0),))
    world = World(make_league(print_runs=runs))
    for n in (1, 2, 3):
        world.stamp(a, f"CZ-TALLY-000{n}", title="Tally", card_set="base")
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 2)
    assert "exceeds the standard run of Tally, which holds 2 prints" in caught.diagnostics()


def test_serials_unique_and_numbers_dense(world: World, league: League) -> None:
    """issue 10 item 3: a serial stamped twice fails at the second; numbers that skip one
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
    """issue 10 item 3: every certificate mint-signed."""
    world.stamp(a, "CZ-MODEL-A-0001", signer=league.notary)
    caught = failure(world)
    assert (caught.service, caught.seq) == ("mint", 0)
    assert "not signed by the league's mint" in caught.diagnostics()


def test_bad_hops_fail(league: League) -> None:
    """issue 10 item 3: a hop of a print never stamped, a hop by a key that did not hold the
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
        b, serial=stamped.serial, hop=1, prev=hash_text(stamped.certificate.hash()),
        to=c.public.to_text(), time=1_700_000_000, **{"from": b.public.to_text()},
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
    """issue 10 item 3: a refused conflict must carry a valid fraud proof whose first
    endorsement is the recorded winner."""
    world = World(league)
    stamped = world.stamp(a, "CZ-MODEL-A-0001")
    to_b, to_c = chain_of(stamped.certificate, a, b), chain_of(stamped.certificate, a, c)
    world.record(to_b, 1)
    world.refuse(to_c, to_b, 1)  # the refused one named as the recorded first
    caught = failure(world)
    assert (caught.service, caught.seq) == ("notary", 1)
    assert "not the hop recorded at seq 0" in caught.reason
