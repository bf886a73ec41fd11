"""Witnessed campaigns (``game.window.rewards``): a table's due is what the offline campaign's
``settle`` pays given the player's tables before it, with the league's readings L-25 (a locked
venue settles nothing), L-26 (a bundle opened into three prints under the deal seed) and L-28
(no proof of work, no pay)."""

from __future__ import annotations

import time

import pytest

from game.window.economy.bundles import open_bundle
from game.window.rewards import (
    WitnessedCampaigns,
    bundle_seed,
    check_work,
    table_open,
    table_work,
)
from ledger.api.rewards import RewardDue, RewardPrint
from ledger.errors import InsufficientWork
from ledger.keys import SigningKey
from ledger.manifest import DEFAULT_POLICIES, LeagueManifest
from ledger.tables import TableOpen
from tests.ledger.factories import make_league

POLICIES = DEFAULT_POLICIES.model_copy(update={"table_work_per_mark": 1})


@pytest.fixture
def manifest() -> LeagueManifest:
    return make_league(policies=POLICIES).manifest


def opened(manifest: LeagueManifest, key: SigningKey, venue: str, n: int) -> TableOpen:
    return table_open(key, manifest, venue=venue, request_id=f"table-{n:04d}", at=int(time.time()))


def test_a_clerk_pays_its_marks_and_a_loss_nothing(manifest: LeagueManifest) -> None:
    """# IV.1: 10 marks a win or a Balance at a clerk's, every time; nothing for a loss."""
    campaigns = WitnessedCampaigns(POLICIES)
    key = SigningKey.generate()
    assert campaigns.settle(opened(manifest, key, "clerk-1", 1), "win", 1) == RewardDue(marks=10)
    assert campaigns.settle(opened(manifest, key, "clerk-1", 2), "balance", 2) == RewardDue(
        marks=10
    )
    assert campaigns.settle(opened(manifest, key, "clerk-1", 3), "loss", 3).nothing


def test_a_locked_venue_settles_nothing_and_unlocks_nothing(manifest: LeagueManifest) -> None:
    """# IV.1, IV.6, L-25: the Assessor before three clerks settle, and Chair II before Chair I
    is beaten, pay nothing and count nothing; once open, they pay."""
    campaigns = WitnessedCampaigns(POLICIES)
    key = SigningKey.generate()
    n = iter(range(100))
    assert campaigns.settle(opened(manifest, key, "assessor", next(n)), "win", 0).nothing
    for venue in ("clerk-1", "clerk-2", "clerk-3"):
        campaigns.settle(opened(manifest, key, venue, next(n)), "win", 0)
    assert campaigns.settle(opened(manifest, key, "assessor", next(n)), "win", 0).marks == 25
    assert campaigns.settle(opened(manifest, key, "chair-II", next(n)), "win", 0).nothing
    assert campaigns.settle(opened(manifest, key, "chair-I", next(n)), "win", 0).marks == 20
    second = campaigns.settle(opened(manifest, key, "chair-II", next(n)), "win", 7)
    # IV.6, L-26: the second first-clearing's bundle, opened under the deal seed.
    expected = tuple(
        RewardPrint(title=p.title, finish=p.finish.value) for p in open_bundle(bundle_seed(7, 0))
    )
    assert second == RewardDue(marks=30, prints=expected, bundles=1)
    # Another key's campaign is its own.
    other = SigningKey.generate()
    assert campaigns.settle(opened(manifest, other, "chair-I", next(n)), "win", 0).nothing


def test_the_twelfth_chair_first_cleared_pays_a_holofoil_zenoseal(
    manifest: LeagueManifest,
) -> None:
    """# IV.6: Chair XII's first clearing pays the holofoil Zenoseal and its bundle (the 12th
    first-clearing is a second one); clearing it again pays marks only."""
    campaigns = WitnessedCampaigns(POLICIES)
    key = SigningKey.generate()
    n = iter(range(100))
    for venue in ("clerk-1", "clerk-2", "clerk-3", "assessor"):
        campaigns.settle(opened(manifest, key, venue, next(n)), "win", 0)
    for chair in ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI"):
        campaigns.settle(opened(manifest, key, f"chair-{chair}", next(n)), "win", 0)
    first = campaigns.settle(opened(manifest, key, "chair-XII", next(n)), "win", 3)
    assert first.prints[0] == RewardPrint(title="Zenoseal", finish="holofoil")
    assert (first.marks, first.bundles, len(first.prints)) == (130, 1, 4)
    again = campaigns.settle(opened(manifest, key, "chair-XII", next(n)), "win", 4)
    assert again == RewardDue(marks=130)


def test_a_table_without_its_work_pays_nothing(manifest: LeagueManifest) -> None:
    """# L-28: no work, or too little, settles nothing; the price is the manifest's work per
    mark times the venue's most marks, and too little is refused at the open."""
    key = SigningKey.generate()
    bare = table_open(
        key, manifest, venue="clerk-1", request_id="bare-table", at=int(time.time()), worked=False
    )
    campaigns = WitnessedCampaigns(POLICIES)
    assert campaigns.settle(bare, "win", 0).nothing
    check_work(POLICIES, bare)  # none is allowed: it pays nothing
    assert table_work(DEFAULT_POLICIES, "clerk-1") == 34_953 * 10
    assert table_work(DEFAULT_POLICIES, "chair-XII") == 34_953 * 130
    worked = opened(manifest, key, "chair-XII", 1)
    with pytest.raises(InsufficientWork):
        check_work(DEFAULT_POLICIES, worked)  # 130 hashes' work is not 4.5 M hashes' worth


def test_a_registrars_first_settlement_strikes_its_sets_seven_prints(
    manifest: LeagueManifest,
) -> None:
    """# IV.5: once the Assessor is settled, a Registrar's first Balance pays 150 marks and its
    set's seven prints, one holofoil; a repeat win pays 30 marks and a sealed bundle (three
    prints)."""
    campaigns = WitnessedCampaigns(POLICIES)
    key = SigningKey.generate()
    n = iter(range(100))
    for venue in ("clerk-1", "clerk-2", "clerk-3", "assessor"):
        campaigns.settle(opened(manifest, key, venue, next(n)), "win", 0)
    first = campaigns.settle(opened(manifest, key, "registrar-lettered", next(n)), "balance", 0)
    assert first.marks == 150
    assert len(first.prints) == 7
    assert [p.finish for p in first.prints].count("holofoil") == 1
    again = campaigns.settle(opened(manifest, key, "registrar-lettered", next(n)), "win", 5)
    assert (again.marks, again.bundles, len(again.prints)) == (30, 1, 3)


def test_only_a_settling_balance_at_chair_six_is_the_players_first_for_the_misprint(
    manifest: LeagueManifest,
) -> None:
    """# IV.6, L-25, L-28, L-41: ``settles`` is the one judgement of a table's settling: a
    Balance at a locked chair-VI, or one opened without its work, does not settle and leaves
    the campaign's first Balance at Chair VI+ (``misprint_paid``) unrecorded; the settling one
    records it."""
    campaigns = WitnessedCampaigns(POLICIES)
    key = SigningKey.generate()
    player = key.public.to_text()
    n = iter(range(100))
    locked = opened(manifest, key, "chair-VI", next(n))
    assert not campaigns.settles(locked)
    assert campaigns.settle(locked, "balance", 0).nothing
    for venue in ("clerk-1", "clerk-2", "clerk-4", "assessor", "chair-I", "chair-II"):
        campaigns.settle(opened(manifest, key, venue, next(n)), "win", 0)
    for venue in ("chair-III", "chair-IV", "chair-V"):
        campaigns.settle(opened(manifest, key, venue, next(n)), "win", 0)
    bare = table_open(
        key,
        manifest,
        venue="chair-VI",
        request_id="bare-chair-six",
        at=int(time.time()),
        worked=False,
    )
    assert not campaigns.settles(bare)
    assert campaigns.settle(bare, "balance", 0).nothing
    assert not campaigns.state(player).misprint_paid
    settling = opened(manifest, key, "chair-VI", next(n))
    assert campaigns.settles(settling)
    assert campaigns.settle(settling, "balance", 0).marks > 0
    assert campaigns.state(player).misprint_paid
