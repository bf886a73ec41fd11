"""The auditor's pure core (docs/operations.md "Auditing a running league"), over logs built in
memory with real signatures (tests/ledger/audit/world.py). The auditor over the mint and the
notary: a clean league passes page by page; an edited, foreign or misplaced event, a checkpoint
of another log or one the log does not extend, a run exceeded, a serial twice, a bad
certificate, hop or conflict fails naming service and seq; the notary's holders compared;
witnesses' cosignatures and evidence."""

from __future__ import annotations

import pytest

from ledger.api.witness import Evidence, EvidenceList
from ledger.audit import AuditFailure, Auditor, Cosigned
from ledger.checkpoint import Cosigner
from ledger.endorsements import Chain, Endorsement
from ledger.events import (
    PrintStamped,
)
from ledger.print_runs import PrintRun, PrintRunTable
from ledger.wire import hash_text
from tests.ledger.audit.world import (
    World,
    a,
    audit_with_holders,
    b,
    c,
    d,
    failure,
    holders_page,
    traded,
)
from tests.ledger.factories import League, chain_of, key, make_league


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
