"""The campaign (Book IV): unlocks, the record kept apart, and every reward rule of IV.5–IV.6."""

from __future__ import annotations

import pytest

from game.window.campaign import (
    ASSESSOR,
    CHAIR_MARKS,
    CLERK_MARKS,
    REGISTRAR_FIRST_MARKS,
    REGISTRAR_REPEAT_MARKS,
    Campaign,
    CampaignRefusal,
    Tally,
    Venue,
    chair,
    clerk,
    registrar,
    settle,
)
from game.window.economy.prints import MISPRINT, Finish, Print
from game.window.scoring import Verdict
from ledger.catalog import ARCHIVE_SETS, CardSet
from ledger.errors import SchemaError

W, L, B = Verdict.WIN, Verdict.LOSS, Verdict.BALANCE


def _play(state: Campaign, *steps: tuple[Venue, Verdict]) -> Campaign:
    for venue, result in steps:
        state, _ = settle(state, venue, result)
    return state


def _past_assessor(seed: int = 1) -> Campaign:
    return _play(Campaign(seed), (clerk(1), W), (clerk(2), B), (clerk(3), W), (ASSESSOR, W))


def _cleared_to(n: int, state: Campaign | None = None) -> Campaign:
    state = state or _past_assessor()
    return _play(state, *((chair(k), W) for k in range(1, n + 1)))


def test_three_of_four_clerks_break_the_market_seal() -> None:
    """IV.1: settle three of the four clerks' tables (a win or a Balance) and the seal breaks;
    losses do not settle."""
    state = _play(Campaign(0), (clerk(1), W), (clerk(2), L), (clerk(2), L), (clerk(3), B))
    assert not state.is_open(ASSESSOR)
    with pytest.raises(CampaignRefusal):
        settle(state, ASSESSOR, W)
    state = _play(state, (clerk(4), B))
    assert state.market_seal_broken()
    assert state.is_open(ASSESSOR)


def test_registrars_and_chair_one_open_when_the_assessor_settles() -> None:
    """M-06: Registrars and Chair I open once the Assessor's table is settled, not before."""
    sealed = _play(Campaign(0), (clerk(1), W), (clerk(2), W), (clerk(3), W), (ASSESSOR, L))
    assert not sealed.is_open(chair(1))
    assert not sealed.is_open(registrar(CardSet.COUNTED))
    opened = _play(sealed, (ASSESSOR, B))
    assert opened.is_open(chair(1))
    assert all(opened.is_open(Venue("registrar", n)) for n in range(1, 5))
    assert not opened.is_open(chair(2))


def test_beat_chair_n_to_unlock_n_plus_1() -> None:
    """IV.6: beating (a win) Chair n unlocks Chair n+1; a Balance or a loss does not."""
    state = _play(_past_assessor(), (chair(1), B), (chair(1), L))
    assert not state.is_open(chair(2))
    with pytest.raises(CampaignRefusal, match="chair-II is still locked"):
        settle(state, chair(2), W)
    state = _play(state, (chair(1), W))
    assert state.is_open(chair(2))
    assert not state.is_open(chair(3))


def test_record_keeps_wins_losses_and_balances_apart() -> None:
    """I.10, IV.6: the Standing record counts wins, losses and Balances in separate columns."""
    state = _play(_past_assessor(), (chair(1), W), (chair(1), B), (chair(1), L), (chair(1), B))
    assert state.tally(chair(1)) == Tally(wins=1, losses=1, balances=2)
    assert state.tally(clerk(2)) == Tally(balances=1)


def test_marks_follow_the_published_table() -> None:
    """docs/modes.md: marks per result as published; a loss pays nothing."""
    state, reward = settle(Campaign(0), clerk(1), W)
    assert reward.marks == CLERK_MARKS[W] == state.collection.marks
    _, lost = settle(state, clerk(2), L)
    assert lost.marks == 0
    _, at_chair = settle(_cleared_to(6), chair(7), L)
    assert at_chair.marks == CHAIR_MARKS[7][L] == 0
    assert CHAIR_MARKS[7][W] > CHAIR_MARKS[6][W]


def test_registrar_first_settlement_strikes_the_seven_one_holofoil() -> None:
    """IV.5: the first settlement strikes the set's seven prints, exactly one holofoil, plus
    marks; which one is holofoil is a seeded draw (same seed, same print)."""
    venue = registrar(CardSet.BEGOTTEN)
    state, reward = settle(_past_assessor(seed=5), venue, W)
    assert sorted(p.title for p in reward.prints) == sorted(
        c.name for c in ARCHIVE_SETS[CardSet.BEGOTTEN]
    )
    assert [p.finish for p in reward.prints].count(Finish.HOLOFOIL) == 1
    assert [p.finish for p in reward.prints].count(Finish.STANDARD) == 6
    assert all(not p.stamped for p in reward.prints)
    assert reward.marks == REGISTRAR_FIRST_MARKS[W]
    assert reward.bundles == 0
    assert set(reward.prints) <= set(state.collection.prints)
    _, again = settle(_past_assessor(seed=5), venue, W)
    assert again == reward
    holofoils = {
        next(
            p.title for p in settle(_past_assessor(s), venue, W)[1].prints if p.finish == "holofoil"
        )
        for s in range(40)
    }
    assert len(holofoils) > 1


def test_registrar_balance_pays_better_than_a_win() -> None:
    """IV.5: "a Balance pays better than a win; the Registrars respect a level table"."""
    venue = registrar(CardSet.LETTERED)
    _, by_win = settle(_past_assessor(), venue, W)
    _, by_balance = settle(_past_assessor(), venue, B)
    assert by_balance.marks > by_win.marks
    assert len(by_balance.prints) == len(by_win.prints) == 7
    assert REGISTRAR_REPEAT_MARKS[B] > REGISTRAR_REPEAT_MARKS[W]


def test_registrar_repeat_settlements_pay_marks_and_a_sealed_bundle() -> None:
    """IV.5: after the first settlement, each settlement pays marks and a sealed bundle and no
    prints; a loss pays nothing and a loss before any settlement is not a first settlement."""
    venue = registrar(CardSet.SEALED)
    state, lost = settle(_past_assessor(), venue, L)
    assert lost.marks == 0
    assert lost.prints == ()
    state, first = settle(state, venue, W)
    assert len(first.prints) == 7
    state, repeat = settle(state, venue, B)
    assert repeat.prints == ()
    assert repeat.bundles == 1
    assert repeat.marks == REGISTRAR_REPEAT_MARKS[B]
    assert state.collection.bundles == 1


def test_sealed_bundle_at_every_second_first_clearing() -> None:
    """IV.6: a sealed bundle at the 2nd, 4th, ... first clearing of a Chair; a second win at an
    already-cleared Chair is no first clearing."""
    state = _past_assessor()
    bundles = []
    for n in range(1, 13):
        state, reward = settle(state, chair(n), W)
        bundles.append(reward.bundles)
        state, again = settle(state, chair(n), W)
        assert again.bundles == 0
    assert bundles == [0, 1] * 6
    assert state.collection.bundles == 6


def test_the_first_balance_at_chair_six_is_recorded_and_no_misprint_made_offline() -> None:
    """IV.6, V.8, L-24: the first Balance at Chair VI or above is recorded (once; not below
    VI), and the offline campaign makes no Misprint: it exists once, awarded by the league to
    a witnessed Balance."""
    state = _cleared_to(5)
    state, low = settle(state, chair(5), B)
    assert not state.misprint_paid
    state, first = settle(state, chair(6), B)
    assert state.misprint_paid
    assert any("L-24" in reason for reason in first.reasons)
    state = _play(state, (chair(6), W))
    state, second = settle(state, chair(7), B)
    assert not any("L-24" in reason for reason in second.reasons)
    for reward in (low, first, second):
        assert MISPRINT not in reward.prints
    assert MISPRINT not in state.collection.prints


def test_holofoil_zenoseal_for_first_clearing_of_the_twelfth_chair() -> None:
    """IV.6: first clearing of the Twelfth Chair pays a holofoil Zenoseal, once."""
    state = _cleared_to(11)
    state, reward = settle(state, chair(12), W)
    assert Print("Zenoseal", Finish.HOLOFOIL) in reward.prints
    _, again = settle(state, chair(12), W)
    assert again.prints == ()


def test_json_round_trip_and_refusals() -> None:
    """A campaign read back from its plain form is the same state; malformed forms are refused."""
    state = _play(_cleared_to(6), (registrar(CardSet.COUNTED), B), (chair(7), B))
    assert Campaign.from_json(state.to_json()) == state
    bad = state.to_json()
    bad["record"]["chair-XIII"] = {"wins": 1, "losses": 0, "balances": 0}
    with pytest.raises(SchemaError):
        Campaign.from_json(bad)
    bad = state.to_json()
    bad["record"]["chair-I"]["wins"] = -1
    with pytest.raises(SchemaError):
        Campaign.from_json(bad)


def test_unknown_venues_are_refused() -> None:
    """There are four clerks, four Registrars and twelve Chairs: nothing else convenes."""
    for kind, n in (("chair", 13), ("clerk", 0), ("registrar", 5), ("tavern", 1)):
        with pytest.raises(CampaignRefusal):
            Venue(kind, n)


def test_each_venue_convenes_its_table() -> None:
    """IV.1: clerks convene base tables; IV.2/M-09: the Assessor and the Chairs market tables;
    IV.5: a Registrar a portfolio table with its set in the pool."""
    from game.window.campaign import convene
    from game.window.economy.collection import Collection
    from game.window.registrars import HOUSE_TITLES, player_portfolio, set_titles

    assert convene(clerk(2), 5).kind == "base"
    assert convene(ASSESSOR, 5).kind == "market"
    assert convene(chair(9), 5).kind == "market"
    mine = player_portfolio(Collection(), HOUSE_TITLES[:8])
    table = convene(registrar(CardSet.BEGOTTEN), 5, mine)
    assert table.kind == "portfolio"
    assert set(set_titles(CardSet.BEGOTTEN)) <= set(table.titles_in_deal_order())


def test_random_campaigns_keep_their_invariants() -> None:
    """Seeded random campaigns: only open venues are ever played, every settlement lands in one
    column of one venue (never added), no Chair is played before the one below it is beaten, the
    Misprint is paid at most once, and the collection holds exactly what the rewards paid."""
    import random

    for seed in range(30):
        rng = random.Random(seed)
        state = Campaign(seed)
        paid_marks = paid_bundles = paid_prints = 0
        steps = 150
        for _ in range(steps):
            venue = rng.choice(state.open_venues())
            state, reward = settle(state, venue, rng.choice([W, L, B, W]))
            paid_marks += reward.marks
            paid_bundles += reward.bundles
            paid_prints += len(reward.prints)
        tallies = [t for _, t in state.record]
        assert sum(t.wins + t.losses + t.balances for t in tallies) == steps
        for venue, _ in state.record:
            if venue.kind == "chair" and venue.number > 1:
                assert state.tally(chair(venue.number - 1)).wins > 0
        assert sum(p == MISPRINT for p in state.collection.prints) <= 1
        assert state.collection.marks == paid_marks
        assert state.collection.bundles == paid_bundles
        assert len(state.collection.prints) == paid_prints
        assert Campaign.from_json(state.to_json()) == state
