"""Triggered abilities that choose, consequences that fall on other cards, damage to players, and
the triggers of blocking and releasing (Triggered abilities, Static abilities: "Static is the
only kind that cannot choose", Maintenance, Defense and defeat, Commitment; C-33, C-34).

The sample prints none of these, so the scenes add test cards (``with_cards``)."""

from __future__ import annotations

import json

from game.charter import from_json, to_json
from game.charter.state import BOARD, MAINTENANCE, P_TARGET
from tests.game.charter.scenes import act, card, legal, scene, until, with_cards

SNIPER = {
    "name": "Sniper", "type": "entity", "complexity": 2, "strength": 1, "resilience": 0,
    "integrity": 1, "price": {"additional": 1},
    "abilities": [{"kind": "triggered", "trigger": "enters",
                   "effect": {"do": "damage", "amount": 1, "target": {"types": ["entity"]}}}],
    "text": "When it enters, 1 damage to an entity.",
}  # fmt: skip
HOTHEAD = {
    "name": "Hothead", "type": "entity", "complexity": 2, "strength": 2, "resilience": 0,
    "integrity": 2, "price": {"additional": 1},
    "maintenance": {"price": {"named": ["aurum"]}, "consequence": {
        "do": "damage", "amount": 2, "target": {"types": ["location"], "controller": "you"}}},
    "text": "Maintenance: an aurum, or 2 damage to a location you control.",
}  # fmt: skip
SCORCH = {
    "name": "Scorch", "type": "edict", "complexity": 2, "price": {"additional": 1},
    "abilities": [{"kind": "transactional",
                   "effect": {"do": "damage", "amount": 1, "target": "opponents"}}],
    "text": "1 damage to each opponent.",
}  # fmt: skip
BULWARK = {
    "name": "Bulwark", "type": "entity", "complexity": 2, "strength": 0, "resilience": 1,
    "integrity": 3, "price": {"additional": 1},
    "abilities": [{"kind": "triggered", "trigger": "blocks", "effect": {"do": "draw", "amount": 1}},
                  {"kind": "triggered", "trigger": "releases",
                   "effect": {"do": "add", "identity": "ember", "amount": 1}}],
    "text": "When it blocks, draw a card. When it releases, add an ember.",
}  # fmt: skip
CARDS = with_cards(SNIPER, HOTHEAD, SCORCH, BULWARK)


# Triggered abilities, Static abilities
def test_a_triggered_ability_chooses_its_target_as_it_goes_on_the_stack() -> None:
    """Sniper enters: its controller chooses which entity takes the damage (only static
    abilities cannot choose); the decision is a position of its own, saved and loaded."""
    s = scene([["Sniper"], []], [["Keep"], ["Squire", "Raider", "Keep"]], card_set=CARDS)
    act(s, "play Sniper#0")
    assert s.pending is not None
    assert s.pending[0] == P_TARGET
    assert sorted(legal(s)) == ["target Raider#3", "target Squire#2"]  # never itself
    copy = from_json(json.loads(json.dumps(to_json(s))), CARDS)
    assert copy == s
    assert copy.legal_actions() == s.legal_actions()
    act(s, "target Raider#3")
    until(s, lambda s: not s.stack)
    assert (s.damage[3], s.damage[2]) == (1, 0)


# Triggered abilities, C-26, C-09
def test_a_trigger_with_one_candidate_takes_it_and_with_none_does_nothing() -> None:
    """One entity to choose: chosen without asking (C-26). None: the ability does nothing."""
    s = scene([["Sniper"], []], [["Keep"], ["Squire", "Keep"]], card_set=CARDS)
    act(s, "play Sniper#0")
    until(s, lambda s: not s.stack)
    assert s.damage[2] == 1
    s = scene([["Sniper"], []], [["Keep"], ["Keep"]], card_set=CARDS)
    act(s, "play Sniper#0")
    assert s.place[0] == BOARD
    assert all(d == 0 for d in s.damage)


# Maintenance
def test_an_unpaid_obligations_consequence_may_fall_on_another_card() -> None:
    """Hothead's consequence is 2 damage to a location its controller controls: "an unpaid
    obligation triggers the card's stated consequence" — here, its controller chooses which."""
    s = scene([[], []], [["Keep"], ["Hothead", "Keep", "Harbor"]], card_set=CARDS)
    hothead, keep, harbor = 1, 2, 3
    assert (s.turn_player, s.phase) == (1, MAINTENANCE)
    act(s, f"neglect Hothead#{hothead}")
    assert sorted(legal(s)) == [f"target Harbor#{harbor}", f"target Keep#{keep}"]
    act(s, f"target Harbor#{harbor}")
    until(s, lambda s: not s.stack)
    assert (s.damage[harbor], s.damage[keep]) == (2, 0)
    assert s.place[hothead] == BOARD  # the stated consequence replaces destruction


# Defense and defeat
def test_damage_to_an_exposed_opponent_defeats_them_and_a_located_one_takes_nothing() -> None:
    """Scorch deals 1 damage to each opponent: an exposed one is defeated at once (Defense and
    defeat: "the moment any damage is dealt to an exposed player"); one who controls a
    location carries no counters and is unharmed (C-34)."""
    s = scene([["Scorch"], []], [["Keep"], ["Squire"]], card_set=CARDS)
    act(s, "play Scorch#0")
    assert s.is_over
    assert s.winner == 0
    s = scene([["Scorch", "Keep"], []], [["Keep"], ["Harbor"]], card_set=CARDS)
    act(s, "play Scorch#0")
    until(s, lambda s: not s.stack)
    assert not s.is_over
    assert s.alive == [True, True]


# Triggered abilities, Combat
def test_blocking_triggers_once_the_blockers_are_declared() -> None:
    """Bulwark draws a card when it blocks: its trigger goes on the stack as the blockers'
    atomic action ends (seat 0 holds a Recall, so it is asked, and the position is seen)."""
    s = scene(
        [["Recall"], []], [["Raider", "Harbor"], ["Bulwark", "Keep"]], card_set=CARDS, deck_filler=2
    )
    raider, bulwark, keep = card(s, "Raider"), card(s, "Bulwark"), card(s, "Keep")
    act(s, "pass", f"attack Raider#{raider} at Keep#{keep}", "attacks done")
    until(s, lambda s: s.pending is not None and s.pending[1] == 1)
    hand = len(s.hands[1])
    act(s, f"block Bulwark#{bulwark} on Raider#{raider}", "blocks done")
    assert [item[1] for item in s.stack] == [bulwark]
    act(s, "pass")
    assert len(s.hands[1]) == hand + 1


# Triggered abilities, Commitment
def test_releasing_triggers_when_a_committed_card_releases() -> None:
    """Bulwark adds an ember when it releases: committed, it releases in its controller's
    release phase and the trigger resolves (seat 1 holds a Keep to play, so it is asked with
    the ember still in its pool)."""
    s = scene(
        [[], ["Keep"]],
        [["Keep"], ["Bulwark", "Harbor"]],
        card_set=CARDS,
        turn_player=1,
    )
    bulwark = card(s, "Bulwark")
    s.committed[bulwark] = 1
    act(s, "pass")  # seat 1's turn ends; seat 0's passes by itself; seat 1's next begins
    assert (s.turn_player, s.current_player) == (1, 1)
    assert s.committed[bulwark] == 0
    assert s.pools[1][1] == 1


def test_random_games_with_choosing_triggers_keep_the_invariants() -> None:
    """Random two-player games with the test cards in both decks: every invariant of the
    random-play test holds after every action, and every position — a trigger's target
    decision among them — round-trips through JSON and continues the same."""
    import random

    from game.charter import library, new_game
    from tests.game.charter.invariants import check_invariants

    extra = ["Sniper", "Sniper", "Hothead", "Scorch", "Bulwark", "Bulwark"]
    lists = [
        library.deck("ember").card_list()[:14] + extra,
        library.deck("tide").card_list()[:14] + extra,
    ]
    targets = 0
    for seed in range(12):
        s = new_game(CARDS, library.charter("skirmish"), lists, seed)
        rng = random.Random(seed)
        while not s.is_over:
            check_invariants(s)
            if s.pending is not None and s.pending[0] == P_TARGET:
                targets += 1
                copy = from_json(json.loads(json.dumps(to_json(s))), CARDS)
                assert copy.legal_actions() == s.legal_actions()
            s.apply(rng.choice(s.legal_actions()))
        check_invariants(s)
    assert targets > 0  # the games did reach target decisions
