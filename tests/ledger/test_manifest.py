"""The league manifest (DESIGN §3 and §5): root-signed keys, runs, note set and policies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.errors import (
    BadSignatureError,
    DecodeError,
    SchemaError,
    UnknownKindError,
    WrongLeague,
)
from ledger.manifest import DEFAULT_POLICIES, LeagueManifest, Policies, build_manifest
from ledger.note_set import DEFAULT_NOTE_SET, NoteIssue, NoteSet
from ledger.print_runs import DEFAULT_PRINT_RUNS, PrintRun, PrintRunTable
from ledger.wire import hash_text
from tests.ledger.factories import League, key, make_league


def test_default_manifest_publishes_the_runs_notes_and_policies(league: League) -> None:
    """By default the manifest carries the published runs, the 1,500,000-mark note set with
    its hash, the faucet (50 marks per key per day) and a stamping allowance of 50 a day."""
    manifest = league.manifest
    assert manifest.print_runs == DEFAULT_PRINT_RUNS
    assert manifest.note_set == DEFAULT_NOTE_SET
    assert manifest.note_set.total_marks == 1_500_000
    assert manifest.note_set_hash == hash_text(DEFAULT_NOTE_SET.hash())
    assert manifest.policies == DEFAULT_POLICIES
    assert manifest.policies.faucet_marks_per_day == 50
    assert manifest.policies.stamp_allowance_per_day == 50
    assert (manifest.mint, manifest.treasury, manifest.notary) == (
        league.mint.public.to_text(),
        league.treasury.public.to_text(),
        league.notary.public.to_text(),
    )


def test_manifest_is_root_signed_and_pinnable(league: League) -> None:
    """Without a pin the manifest verifies under the root it names (first use); with a pin,
    a manifest naming or signed by another root is refused."""
    assert league.manifest.verify_root() == league.root.public
    assert league.manifest.verify_root(league.root.public) == league.root.public
    with pytest.raises(BadSignatureError, match="pinned"):
        league.manifest.verify_root(key(99).public)
    forged = LeagueManifest.from_wire(
        {**league.manifest.to_wire(), "sig": league.manifest.sig[:-2] + "AA"}
    )
    with pytest.raises(BadSignatureError):
        forged.verify_root(league.root.public)


def test_manifest_carries_a_custom_run_table(small_league: League) -> None:
    """The runs are data in the manifest: a league with one run of three prints round-trips."""
    manifest = LeagueManifest.from_wire(small_league.manifest.to_wire())
    assert manifest == small_league.manifest
    assert manifest.print_runs.total == 3
    manifest.verify_root(small_league.root.public)


def test_note_set_hash_must_match_the_note_set(league: League) -> None:
    """A manifest whose note_set_hash is not the hash of its note set is refused."""
    other = NoteSet(issues=(NoteIssue(denomination=1, count=1),))
    wire = {**league.manifest.to_wire(), "note_set_hash": hash_text(other.hash())}
    with pytest.raises(SchemaError, match="note_set_hash"):
        LeagueManifest.from_wire(wire)


@pytest.mark.parametrize(
    "change",
    [
        {"league": "Has Spaces"},
        {"league": "-dash"},
        {"name": ""},
        {"name": "line\nbreak"},
        {"policies": {**DEFAULT_POLICIES.to_wire(), "stamp_batch_limit": 0}},
        {"policies": {**DEFAULT_POLICIES.to_wire(), "faucet_marks_per_day": -1}},
        {"policies": {"faucet_marks_per_day": 50}},
        {"mint": "not-a-key"},
    ],
)
def test_malformed_manifests_are_refused(league: League, change: dict[str, object]) -> None:
    """League ids are slugs, names one line, policies complete and in range, keys valid."""
    with pytest.raises(DecodeError):
        LeagueManifest.from_wire({**league.manifest.to_wire(), **change})


def test_a_manifest_is_not_a_certificate(league: League) -> None:
    """Kinds do not cross: a manifest wire object is refused by the manifest's neighbours."""
    from ledger.certificates import PrintCertificate

    with pytest.raises(UnknownKindError):
        PrintCertificate.from_wire(league.manifest.to_wire())


def test_manifest_hash_changes_with_any_field() -> None:
    """Two leagues differing only in name have different manifest hashes, so a certificate
    names exactly one manifest."""
    assert make_league(name="A").manifest.hash_text() != make_league(name="B").manifest.hash_text()


@settings(max_examples=30)
@given(
    league_id=st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?\Z"),
    name=st.text(st.characters(exclude_categories=["Cc", "Cs"]), min_size=1, max_size=40),
    sizes=st.lists(st.integers(1, 3000), min_size=1, max_size=5),
    policies=st.tuples(st.integers(0, 1000), st.integers(0, 1000), st.integers(1, 100)),
    seeds=st.lists(st.binary(min_size=32, max_size=32), min_size=4, max_size=4),
)
def test_manifest_wire_round_trip(
    league_id: str,
    name: str,
    sizes: list[int],
    policies: tuple[int, int, int],
    seeds: list[bytes],
) -> None:
    """Any manifest (league, name, runs, policies, keys) survives to_wire/from_wire and still
    verifies under its root."""
    from ledger.keys import SigningKey

    root, mint, treasury, notary = (SigningKey(s) for s in seeds)
    titles = ["Tally", "Pairing", "Model-A", "No-Go", "Zenoseal"]
    runs = PrintRunTable(
        runs=tuple(
            PrintRun(title=t, set="base", standard=n, gilt=0, holofoil=0)
            for t, n in zip(titles, sizes, strict=False)
        )
    )
    faucet, allowance, batch = policies
    manifest = build_manifest(
        root,
        league=league_id,
        name=name,
        mint=mint.public,
        treasury=treasury.public,
        notary=notary.public,
        print_runs=runs,
        policies=Policies(
            faucet_marks_per_day=faucet, stamp_allowance_per_day=allowance, stamp_batch_limit=batch
        ),
    )
    parsed = LeagueManifest.from_wire(manifest.to_wire())
    assert parsed == manifest
    assert parsed.verify_root(root.public) == root.public
    assert parsed.hash_text() == manifest.hash_text()


def test_a_request_is_good_only_at_the_league_and_manifest_it_names() -> None:
    """V.4/V.5: a signed request (a stamp, a claim, a purchase, an order) names its league and
    the manifest's hash; another league, or another manifest of the same league, refuses it
    and says which the server serves."""
    manifest = make_league().manifest
    manifest.check_addressed("mint", "the request", manifest.league, manifest.hash_text())
    other = make_league(name="Other League").manifest
    assert other.hash_text() != manifest.hash_text()
    with pytest.raises(WrongLeague, match="this mint serves league test-league under manifest"):
        manifest.check_addressed("mint", "the request", "another-league", manifest.hash_text())
    with pytest.raises(WrongLeague, match="the claim is for league test-league under manifest"):
        manifest.check_addressed("treasury", "the claim", manifest.league, other.hash_text())
