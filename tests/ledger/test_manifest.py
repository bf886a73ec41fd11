"""The league manifest (docs/architecture.md §3 and §5): root-signed keys, runs, note set and
policies."""

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
from ledger.manifest import (
    DEFAULT_POLICIES,
    MAX_URL_CHARS,
    LeagueManifest,
    Policies,
    ServiceUrls,
    build_manifest,
)
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


# -- where the services answer (docs/operations.md "Separate processes") ---------------------------

#: The hash of :func:`pinned_league`'s manifest as manifests were made before they could name
#: URLs (computed then): a manifest naming none must keep it, or every certificate issued under
#: such a manifest would name a manifest that no longer exists.
PINNED_HASH = "bRp7EwrFkHYh2TYU1I0Tw9FYI2ZR7srVTPV6ZngA-CA"
URLS = ServiceUrls(
    mint="https://mint.example",
    treasury="https://league.example:8443/treasury",
    notary="http://10.0.0.7:8080",
)


def pinned_league(**overrides: object) -> League:
    """A league whose every manifest field is given here (no default that may move)."""
    return make_league(
        print_runs=PrintRunTable(
            runs=(PrintRun(title="Tally", set="base", standard=2, gilt=1, holofoil=0),)
        ),
        note_set=NoteSet(issues=(NoteIssue(denomination=5, count=3),)),
        policies=Policies(
            faucet_marks_per_day=10,
            stamp_allowance_per_day=10,
            stamp_batch_limit=5,
            stamp_work=1,
            stamp_work_rise=4,
            source_prints_per_minute=120,
            source_prints_burst=200,
            checkpoint_interval_ms=1000,
            checkpoint_max_pending=10000,
        ),
        **overrides,
    )


def test_a_manifest_naming_no_urls_hashes_as_before() -> None:
    """No ``urls`` member on the wire, in the signed body or in the hash: the same bytes."""
    manifest = pinned_league().manifest
    assert manifest.urls is None
    assert "urls" not in manifest.to_wire()
    assert "urls" not in manifest.body()
    assert manifest.hash_text() == PINNED_HASH
    assert LeagueManifest.from_wire(manifest.to_wire()).hash_text() == PINNED_HASH


def test_a_manifest_names_the_services_urls_under_the_root_signature() -> None:
    plain = pinned_league().manifest
    named = pinned_league(urls=URLS).manifest
    assert named.to_wire()["urls"] == {
        "mint": "https://mint.example",
        "treasury": "https://league.example:8443/treasury",
        "notary": "http://10.0.0.7:8080",
    }
    assert list(named.to_wire())[-1] == "sig"
    parsed = LeagueManifest.from_wire(named.to_wire())
    assert parsed == named
    assert parsed.verify_root(key(1).public) == key(1).public
    assert parsed.urls is not None
    assert parsed.urls.of("treasury") == "https://league.example:8443/treasury"
    assert named.hash_text() != plain.hash_text()
    moved = {**named.to_wire(), "urls": {**URLS.to_wire(), "mint": "https://evil.example"}}
    with pytest.raises(BadSignatureError):  # the URLs are signed with the rest
        LeagueManifest.from_wire(moved).verify_root()
    stripped = {k: v for k, v in named.to_wire().items() if k != "urls"}
    with pytest.raises(BadSignatureError):
        LeagueManifest.from_wire(stripped).verify_root()


def test_a_manifest_naming_no_urls_has_no_null_member() -> None:
    """One wire form per manifest: ``"urls": null`` is refused, not read as absent."""
    with pytest.raises(SchemaError, match="never null"):
        LeagueManifest.from_wire({**pinned_league().manifest.to_wire(), "urls": None})


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://mint.example", "http:// or https://"),
        ("mint.example", "http:// or https://"),
        ("https://user:secret@mint.example", "no credentials"),
        ("https://token@mint.example", "no credentials"),
        ("https://mint.example/", "no trailing /"),
        ("https://mint.example/?a=1", "no query"),
        ("https://mint.example#top", "no query or fragment"),
        ("https://", "names a host"),
        ("https://mint.example:0", "port is a number from 1"),
        ("https://mint.example:", "port is a number from 1"),
        ("http://%65vil.example", "not percent-encoded"),
        ("http://a%40b.example", "not percent-encoded"),
        ("https://mint.example/a/../b", "no . or .. segments"),
        ("https://mint.example/./league", "no . or .. segments"),
        ("https://mint.example:99999", "not a URL"),
        ("https://mint.exämple", "printable ASCII"),
        ("https://mint.example/a b", "printable ASCII"),
        ("https://mint.example/" + "a" * MAX_URL_CHARS, "at most"),
    ],
)
def test_bad_service_urls_are_refused(url: str, why: str) -> None:
    with pytest.raises(SchemaError, match=why):
        ServiceUrls.from_wire({**URLS.to_wire(), "mint": url})
    with pytest.raises(SchemaError, match="mint"):
        LeagueManifest.from_wire(
            {**pinned_league(urls=URLS).manifest.to_wire(), "urls": {**URLS.to_wire(), "mint": url}}
        )


def test_urls_name_every_service() -> None:
    with pytest.raises(SchemaError, match="notary"):
        ServiceUrls.from_wire({"mint": "https://a.example", "treasury": "https://a.example"})
    with pytest.raises(SchemaError):
        ServiceUrls.from_wire({**URLS.to_wire(), "witness": "https://a.example"})
