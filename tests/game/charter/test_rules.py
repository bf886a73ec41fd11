"""One or more scenarios per paragraph of the charter rulebook: a board, actions, a result.

Each test cites its paragraph by name (and a ruling of docs/charter-rulings.md where one
applies). Boards are set up by hand with :mod:`tests.game.charter.scenes`.
"""

from __future__ import annotations

import json

import pytest

from game.charter import IllegalActionError, from_json, library, new_game, to_json
from game.charter.board import check, destroy, leave, resilience, strength, zone_of
from game.charter.state import (
    BOARD,
    COMBAT,
    DISCARD,
    DRAW,
    FREE,
    HAND,
    MAINTENANCE,
    P_BLOCK,
    P_MULLIGAN,
    P_SUPPORT,
    RELEASE,
)
from tests.game.charter.scenes import act, card, legal, scene, until, with_cards


# Resources
def test_a_named_requirement_is_paid_only_by_its_identity() -> None:
    """Raider names an ember: a stone producer alone cannot pay it; an ember producer can,
    and is committed to produce it (C-01)."""
    s = scene([["Raider"], []], [["Keep"], ["Keep"]])
    assert "play Raider#0" not in legal(s)
    s = scene([["Raider"], []], [["Keep", "Lantern"], ["Keep"]])
    act(s, "play Raider#0")
    assert s.committed[card(s, "Lantern")] == 1
    assert s.committed[card(s, "Keep", 0)] == 0
    assert s.pools[0] == [0, 0, 0, 0]


# Resources
def test_an_additional_requirement_takes_any_identity() -> None:
    """Squire's one additional requirement is paid by a stone or an ember: the payer chooses
    which producer to commit."""
    s = scene([["Squire"], []], [["Keep", "Lantern"], ["Keep"]])
    act(s, "play Squire#0")
    assert sorted(legal(s)) == ["produce Keep#1", "produce Lantern#2"]
    act(s, "produce Lantern#2")
    assert s.committed[card(s, "Lantern")] == 1
    assert s.committed[card(s, "Keep", 0)] == 0


# Commitment
def test_a_committed_card_cannot_be_committed_again() -> None:
    """Lancer's ability commits it; once committed the ability is not offered again."""
    s = scene([[], []], [["Lancer", "Keep"], ["Squire", "Keep"]])
    act(s, "use Lancer#0 1 at Squire#2")
    assert not any(a.startswith("use Lancer") for a in legal(s))
    assert s.committed[card(s, "Lancer")] == 1


# Commitment
def test_a_card_arrives_released_and_may_attack_at_once() -> None:
    """An entity played this turn may be committed to an attack in the same combat phase."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    act(s, "play Raider#0")
    assert s.phase == COMBAT
    assert "attack Raider#0 at Keep#2" in legal(s)


# Commitment, Turn structure
def test_committed_cards_release_in_their_controllers_release_phase() -> None:
    """A committed card releases at the start of its controller's next turn."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    act(s, "play Raider#0")
    lantern = card(s, "Lantern")
    assert s.committed[lantern] == 1
    act(s, "attacks done")
    # Seat 1 has nothing to do: its turn passes by itself, and seat 0's next turn comes.
    assert (s.turn_player, s.turns) == (0, 5)
    assert s.committed[lantern] == 0


# Static abilities, Commitment
def test_a_withheld_card_does_not_release() -> None:
    """Shackles grants its host withheld release: the committed host stays committed."""
    s = scene([[], []], [["Lancer", "Shackles", "Keep"], ["Squire", "Keep"]], anchored={1: 0})
    act(s, "use Lancer#0 1 at Squire#3")
    until(s, lambda s: s.turns == 5 and s.phase > RELEASE)
    assert s.committed[0] == 1
    s = scene([[], []], [["Lancer", "Keep"], ["Squire", "Keep"]])
    act(s, "use Lancer#0 1 at Squire#2")
    until(s, lambda s: s.turns == 5 and s.phase > RELEASE)
    assert s.committed[0] == 0  # without Shackles it releases


# Anchoring, Edicts
def test_an_affixed_edict_persists_and_goes_when_its_host_leaves() -> None:
    """Shackles affixes to an entity as it resolves and stands; when the host leaves the
    board the edict is evaluated as free and its type rule destroys it."""
    s = scene([["Shackles", "Bolt"], []], [["Harbor", "Lantern", "Lantern"], ["Squire", "Keep"]])
    act(s, "play Shackles#0 on Squire#5")
    shackles, squire = card(s, "Shackles"), card(s, "Squire")
    assert s.place[shackles] == BOARD
    assert s.host[shackles] == squire
    assert zone_of(s, shackles) == ("free", 1)  # in its host's zone, wherever that stands
    assert s.ctrl[shackles] == 1  # control follows the zone
    act(s, "play Bolt#1 at Squire#5")
    assert s.place[squire] == DISCARD
    assert s.place[shackles] == DISCARD
    assert shackles in s.discards[0]  # its owner's pile


# Edicts
def test_an_edict_without_affix_goes_to_its_owners_discard_pile() -> None:
    """Bolt performs its damage as it resolves, then goes to its owner's discard pile."""
    s = scene([["Bolt"], []], [["Lantern"], ["Knight", "Keep"]])
    act(s, "play Bolt#0 at Knight#2")
    assert s.damage[card(s, "Knight")] == 1  # 2 less Knight's resilience 1
    assert s.place[card(s, "Bolt")] == DISCARD


# Anchoring, Ability keywords
def test_attach_is_paid_and_moves_to_a_new_host_and_free_ends_it() -> None:
    """Banner attaches (paid), moves to a new host (paid again), grants +1 strength; only
    Free (Crowbar) ends the anchoring, and the card stands free in its controller's zone."""
    s = scene([[], []], [["Banner", "Raider", "Squire", "Keep", "Harbor", "Crowbar"], ["Keep"]])
    banner, raider, squire = card(s, "Banner"), card(s, "Raider"), card(s, "Squire")
    act(s, "use Banner#0 1 at Raider#1", "produce Keep#3")
    assert s.host[banner] == raider
    assert strength(s, raider) == 3
    assert "use Banner#0 1 at Raider#1" not in legal(s)  # a new host only
    act(s, "use Banner#0 1 at Squire#2", "produce Harbor#4")
    until(s, lambda s: not s.stack)
    assert s.host[banner] == squire
    assert strength(s, raider) == 2
    act(s, "use Crowbar#5 1 at Banner#0")
    until(s, lambda s: not s.stack)
    assert s.host[banner] == -1
    assert zone_of(s, banner) == ("free", 0)


# Objects, Anchoring
def test_an_object_whose_host_leaves_stands_free_again() -> None:
    """Banner on an entity that is destroyed stays on the board, free (C-11)."""
    s = scene(
        [[], ["Bolt"]],
        [["Banner", "Raider", "Keep"], ["Lantern", "Keep"]],
        turn_player=1,
        anchored={0: 1},
    )
    banner, raider = 0, 1
    act(s, "play Bolt#3 at Raider#1")
    assert s.place[raider] == DISCARD
    assert s.place[banner] == BOARD
    assert s.host[banner] == -1
    assert s.ctrl[banner] == 0


# Anchoring, Edicts, Objects, Construction, Structures, Defense and defeat
@pytest.mark.parametrize(
    ("bonded", "host", "bond", "stays"),
    [
        ("Wall", "Keep", "constructed", False),  # Structures: unsupported, destroyed
        ("Shackles", "Squire", "anchored", False),  # Edicts: free, so destroyed
        ("Banner", "Squire", "anchored", True),  # Objects: free, it stands on its own
    ],
)
def test_a_host_that_leaves_as_its_owner_is_defeated_frees_what_it_holds(
    bonded: str, host: str, bond: str, stays: bool
) -> None:
    """Seat 0 seizes seat 1's last location or entity, with seat 0's own card bonded to it,
    and strikes the exposed seat 1: seat 1 is defeated and leaves with every card they own
    (C-17), the host among them, and the game is over. "When the host leaves the board ... the
    card is immediately evaluated as free with whatever its type rule then does" (Anchoring),
    and a structure stands only while supported (Construction) — the game ending in the same
    moment changes nothing (C-28). Found by the random games (4 players, seed 57): the bonded
    card stood on, still naming a host in a discard pile, in a position from_json refuses."""
    bonds = {"constructed": {}, "anchored": {}}
    bonds[bond] = {2: 6}
    s = scene(
        [["Seize"], []],
        [["Raider", bonded, "Harbor", "Harbor", "Harbor"], [host]],
        constructed=bonds["constructed"],
        anchored=bonds["anchored"],
    )
    raider, card_, host_ = 1, 2, 6
    act(s, f"play Seize#0 at {host}#{host_}")
    until(s, lambda s: s.phase == COMBAT)
    assert (s.ctrl[host_], s.ctrl[card_], s.host[card_]) == (0, 0, host_)
    act(s, f"attack Raider#{raider} at seat 1", "attacks done")
    assert s.is_over
    assert s.winner == 0
    assert host_ in s.discards[1]
    assert s.host[card_] == -1
    if stays:
        assert s.place[card_] == BOARD
        assert zone_of(s, card_) == ("free", 0)
    else:
        assert card_ in s.discards[0]
        assert s.place[card_] == DISCARD
    assert not s.dirty  # the final position is sound ...
    assert from_json(json.loads(json.dumps(to_json(s)))) == s  # ... and loads again


# Anchoring, Construction
def test_a_card_leaving_the_board_frees_its_bonded_cards_at_once() -> None:
    """Anchoring: the card is "immediately" evaluated as free — as its host leaves, before
    any check runs; every way off the board (destroy, return, consume, defeat) is leave()."""
    s = scene(
        [[], []],
        [["Banner", "Raider", "Keep", "Wall"], ["Keep"]],
        anchored={0: 1},
        constructed={3: 2},
    )
    banner, raider, keep, wall = 0, 1, 2, 3
    leave(s, raider, HAND)
    assert (s.host[banner], s.bond[banner], s.free_ctrl[banner]) == (-1, FREE, 0)
    destroy(s, keep)
    assert (s.host[wall], s.bond[wall]) == (-1, FREE)
    check(s)
    assert s.place[banner] == BOARD  # Objects: stands on its own again
    assert s.place[wall] == DISCARD  # Structures: no ability rescues it


# Construction, Structures
def test_over_extent_the_controller_chooses_and_the_rest_are_destroyed() -> None:
    """Keep's extent is 3: Tower (2) and Wall (1) fit; a second Wall does not, and Keep's
    controller chooses which structure to let go (C-23)."""
    s = scene(
        [["Wall"], []],
        [["Keep", "Tower", "Wall", "Keep", "Keep"], ["Keep"]],
        constructed={2: 1, 3: 1},
    )
    act(s, "play Wall#0 on Keep#1")
    # The Keep holding structures and a bare one differ; the two bare ones do not (C-26).
    assert sorted(legal(s)) == ["produce Keep#1", "produce Keep#4"]
    act(s, "produce Keep#4")
    assert s.pending is not None
    assert s.pending[0] == P_SUPPORT
    assert sorted(legal(s)) == ["unsupport Tower#2", "unsupport Wall#0", "unsupport Wall#3"]
    act(s, "unsupport Tower#2")
    assert s.place[card(s, "Tower")] == DISCARD
    assert s.place[card(s, "Wall", 0, 0)] == BOARD


# Construction, Structures
def test_a_structure_whose_location_leaves_is_destroyed() -> None:
    """No ability rescues an unsupported structure."""
    s = scene(
        [["Bolt", "Bolt"], []],
        [["Lantern", "Lantern"], ["Harbor", "Wall", "Keep"]],
        constructed={5: 4},
    )
    harbor, wall = 4, 5
    s.damage[harbor] = 3
    act(s, f"play Bolt#0 at Harbor#{harbor}")
    assert s.place[harbor] == DISCARD
    assert s.place[wall] == DISCARD


# Locations, Defense and defeat
def test_attacks_go_to_locations_while_the_player_controls_one() -> None:
    """With a location, only it can be attacked; exposed, the player is attacked directly."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    act(s, "play Raider#0")
    assert sorted(legal(s)) == ["attack Raider#0 at Keep#2", "attacks done"]
    s = scene([["Raider"], []], [["Lantern"], ["Squire"]])
    act(s, "play Raider#0")
    assert "attack Raider#0 at seat 1" in legal(s)


# Defense and defeat
def test_an_exposed_player_dealt_damage_is_defeated() -> None:
    """The moment any damage is dealt to an exposed player, that player is defeated."""
    s = scene([["Raider"], []], [["Lantern"], ["Lantern"]])
    act(s, "play Raider#0", "attack Raider#0 at seat 1", "attacks done")
    assert s.is_over
    assert s.winner == 0
    assert s.returns() == [1.0, -1.0]


# Defense and defeat, Locations, Combat
def test_a_struck_location_strikes_back_divided_by_the_defender() -> None:
    """Two unblocked Raiders strike a Keep (strength 1): its controller divides its one point."""
    s = scene([[], []], [["Raider", "Raider"], ["Keep"]])
    a, b, keep = card(s, "Raider", 0, 0), card(s, "Raider", 0, 1), card(s, "Keep")
    act(s, f"attack Raider#{a} at Keep#{keep}", f"attack Raider#{b} at Keep#{keep}")
    act(s, "attacks done")
    assert sorted(legal(s)) == [f"deal Keep#2 to Raider#{a}", f"deal Keep#2 to Raider#{b}"]
    act(s, f"deal Keep#{keep} to Raider#{b}")
    assert s.damage[keep] == 2  # (2 - 1) + (2 - 1): each share less its resilience (C-16)
    assert s.damage[b] == 1
    assert s.damage[a] == 0


# Structures, Defense and defeat
def test_a_structure_blocks_only_attackers_of_its_own_location() -> None:
    """Wall on Keep A may block a Raider attacking Keep A, not one attacking Keep B."""
    s = scene([[], []], [["Raider", "Raider"], ["Keep", "Keep", "Wall"]], constructed={4: 2})
    a, b, ka, kb = 0, 1, 2, 3
    act(s, f"attack Raider#{a} at Keep#{ka}", f"attack Raider#{b} at Keep#{kb}")
    act(s, "attacks done")
    assert sorted(legal(s)) == ["block Wall#4 on Raider#0", "blocks done"]


# Entities, Combat
def test_a_committed_entity_blocks_and_strength_is_a_pool() -> None:
    """Any entity may block without committing; a blocked attacker divides its strength
    among its blockers, and deals nothing to the location."""
    s = scene([[], []], [["Knight"], ["Keep", "Squire", "Herald"]])
    knight, keep, squire, lancer = 0, 1, 2, 3
    s.committed[lancer] = 1
    act(s, f"attack Knight#{knight} at Keep#{keep}", "attacks done")
    act(s, f"block Squire#{squire} on Knight#{knight}", f"block Herald#{lancer} on Knight#{knight}")
    act(s, "blocks done")
    assert s.committed[squire] == 0  # blocking commits nothing
    act(s, f"deal Knight#{knight} to Squire#{squire}", f"deal Knight#{knight} to Squire#{squire}")
    act(s, f"deal Knight#{knight} to Herald#{lancer}")
    assert s.place[squire] == DISCARD  # 2 counters exceed integrity 1
    assert s.damage[lancer] == 1
    assert s.damage[keep] == 0
    assert s.damage[knight] == 0  # each blocker's 1, less Knight's resilience 1


# Game setup
def test_mulligans_redraw_one_fewer_down_to_three_as_often_as_wished() -> None:
    """Seven cards; each mulligan one fewer, to a minimum hand of three; a player "may take as
    many mulligans as they wish", so at three a mulligan is still offered and redraws three
    (Game setup; C-29)."""
    decks = [library.deck("ember").card_list(), library.deck("tide").card_list()]
    s = new_game(library.card_set(), library.charter("skirmish"), decks, seed=3)
    assert [len(h) for h in s.hands] == [7, 7]
    for size in (6, 5, 4, 3):
        act(s, "mulligan")
        assert len(s.hands[0]) == size
    assert s.pending == (P_MULLIGAN, 0)
    assert legal(s) == ["keep", "mulligan"]
    before = s.hands[0][:]
    act(s, "mulligan", "mulligan")
    assert len(s.hands[0]) == 3
    assert s.hands[0] != before  # returned, reshuffled, redrawn
    act(s, "keep")
    assert s.pending == (P_MULLIGAN, 1)


# Game setup
def test_no_attack_on_a_players_own_first_turn() -> None:
    """On seat 0's first turn its combat phase offers no attack."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    s.first_turn[0] = True
    act(s, "play Raider#0")
    # No attack was offered on turn 3: the next decision is seat 0's next combat phase.
    assert (s.turns, s.phase) == (5, COMBAT)


# Turn structure, Resources
def test_the_turn_player_draws_one_and_every_pool_clears() -> None:
    """The draw phase draws one card; when the end phase closes every pool clears."""
    s = scene([["Herald"], []], [["Keep"], ["Keep"]], deck_filler=3)
    hand, deck = len(s.hands[0]), len(s.decks[0])
    s.pools[1][2] = 2  # resources in a non-turn player's pool (an effect could put them)
    act(s, "pass")
    assert s.pools == [[0, 0, 0, 0], [0, 0, 0, 0]]
    until(s, lambda s: s.turns == 5 and s.phase > DRAW)
    assert (len(s.hands[0]), len(s.decks[0])) == (hand + 1, deck - 1)


# Maintenance
def test_an_unpaid_obligation_triggers_its_stated_consequence() -> None:
    """Knight's obligation left unpaid returns it to its owner's hand; Forge's destroys it."""
    s = scene([[], []], [["Keep"], ["Knight", "Keep", "Forge", "Lantern"]], constructed={3: 2})
    knight, forge = 1, 3
    assert (s.turn_player, s.phase) == (1, MAINTENANCE)  # seat 0 had nothing to do
    assert sorted(legal(s)) == [
        f"neglect Forge#{forge}",
        f"neglect Knight#{knight}",
        f"upkeep Forge#{forge}",
        f"upkeep Knight#{knight}",
    ]
    act(s, f"neglect Knight#{knight}", f"neglect Forge#{forge}")
    assert s.place[knight] == HAND
    assert s.place[forge] == DISCARD


# Resolution, Transactional abilities
def test_responses_pass_clockwise_and_the_last_addition_resolves_first() -> None:
    """Bolt is answered by Refusal from the player to the left; the stack resolves last in
    first out, so Bolt is countered and its transactional damage never happens."""
    s = scene(
        [["Bolt"], ["Refusal"]], [["Lantern"], ["Knight", "Keep", "Wall"]], constructed={5: 4}
    )
    knight = 3
    act(s, f"play Bolt#0 at Knight#{knight}")
    assert s.current_player == 1  # the opportunity begins to the left of who played it
    refusal = card(s, "Refusal")
    act(s, f"play Refusal#{refusal} at Bolt#0")
    assert sorted(legal(s)) == ["consume Knight#3", "consume Wall#5"]  # value 1 or more
    act(s, "consume Wall#5")
    assert s.damage[knight] == 0
    assert s.place[0] == DISCARD


# Zones, Control and ownership
def test_a_zone_changing_hands_carries_its_contents() -> None:
    """Seize takes a location: the structure constructed on it changes controller with it."""
    s = scene(
        [["Seize"], []],
        [["Harbor", "Harbor", "Keep"], ["Keep", "Wall", "Keep"]],
        constructed={5: 4},
    )
    keep, wall = 4, 5
    act(s, "play Seize#0 at Keep#4")
    assert s.ctrl[keep] == 0
    assert s.ctrl[wall] == 0
    assert s.owner[wall] == 1


# Control and ownership
def test_taking_an_anchored_card_breaks_the_bond_and_leaving_goes_to_the_owner() -> None:
    """Seize on an anchored Banner: it stands free in the taker's zone; Recall then sends it
    to its owner's hand, never the taker's."""
    s = scene(
        [["Seize", "Recall"], []],
        [["Harbor", "Harbor", "Harbor", "Keep"], ["Banner", "Squire", "Keep"]],
        anchored={6: 7},
    )
    banner = 6
    act(s, "play Seize#0 at Banner#6", "produce Keep#5", "pass")
    assert s.host[banner] == -1
    assert zone_of(s, banner) == ("free", 0)
    assert s.ctrl[banner] == 0
    act(s, "play Recall#1 at Banner#6")
    until(s, lambda s: not s.stack)
    assert banner in s.hands[1]


# Triggered abilities
def test_simultaneous_triggers_go_on_in_turn_order_turn_player_first() -> None:
    """Two Heralds, one per seat, trigger at the start of seat 0's turn: seat 0's is added
    first, so seat 1's resolves first (the stack is last in, first out)."""
    s = scene([[], []], [["Herald", "Keep", "Lancer"], ["Herald", "Keep"]], turn_player=1)
    until(s, lambda s: s.turn_player == 0 and s.phase == RELEASE and len(s.stack) == 2)
    assert [item[2] for item in s.stack] == [0, 1]


# Triggered abilities
def test_an_entering_trigger_goes_on_the_stack() -> None:
    """Herald: when it enters, its controller draws a card (the trigger uses the stack)."""
    s = scene([["Herald"], []], [["Keep"], ["Keep"]], deck_filler=2)
    before = len(s.decks[0])
    act(s, "play Herald#0")
    assert len(s.decks[0]) == before - 1


# Activated abilities
def test_standard_speed_only_in_the_owners_action_phase_interrupt_any_time() -> None:
    """Attach (standard) is offered only in the action phase with the stack empty; Lancer's
    interrupt-speed ability is offered on the opponent's turn."""
    s = scene([["Raider"], []], [["Lantern"], ["Lancer", "Banner", "Keep", "Keep"]])
    act(s, "play Raider#0", "pass", "attack Raider#0 at Keep#4", "attacks done")
    assert s.current_player == 1
    assert sorted(legal(s)) == ["pass", "use Lancer#2 1 at Raider#0"]  # no Attach now


# Activated abilities
def test_a_reserve_ability_takes_effect_when_the_card_next_releases() -> None:
    """Warden: commit now, draw when it next releases (C-08)."""
    s = scene([[], []], [["Warden", "Keep"], ["Keep"]], deck_filler=3)
    warden = card(s, "Warden")
    hand = len(s.hands[0])
    act(s, f"use Warden#{warden} 1")
    assert len(s.hands[0]) == hand
    assert s.deferred
    while s.turn_player != 0 or s.phase < DRAW:
        s.apply(s.legal_actions()[0])
    assert s.committed[warden] == 0
    assert len(s.hands[0]) >= hand + 1  # the reserve draw (and the turn's draw)


# Static abilities
def test_a_static_term_names_every_matching_card() -> None:
    """Crown: entities you control have +1 resilience — all of them, and only yours."""
    s = scene([[], []], [["Crown", "Raider", "Squire", "Keep"], ["Raider", "Keep"]])
    assert resilience(s, card(s, "Raider", 0)) == 1
    assert resilience(s, card(s, "Squire")) == 1
    assert resilience(s, card(s, "Raider", 1)) == 0


# Ability keywords
def test_interrupt_term_lets_matching_cards_be_played_at_interrupt_speed() -> None:
    """With Chalice on the board seat 1 may play Bolt on seat 0's turn; without it, not."""
    s = scene([["Raider"], ["Bolt"]], [["Lantern"], ["Lantern", "Lantern", "Keep", "Chalice"]])
    act(s, "play Raider#0")
    assert any(a.startswith("play Bolt") for a in legal(s))
    s = scene([["Raider"], ["Bolt"]], [["Lantern"], ["Lantern", "Lantern", "Keep"]])
    act(s, "play Raider#0")
    assert s.current_player != 1 or not any(a.startswith("play Bolt") for a in legal(s))


# Consume
def test_consume_spends_a_qualifying_card_the_payer_chooses() -> None:
    """Offering consumes an entity of resource value 1 or more: the payer picks among them."""
    s = scene([["Offering"], []], [["Raider", "Lancer", "Squire", "Keep"], ["Keep"]])
    act(s, "play Offering#0")
    assert sorted(legal(s)) == ["consume Lancer#2", "consume Raider#1"]  # Squire's value is 0
    act(s, "consume Lancer#2")
    assert s.place[card(s, "Lancer")] == DISCARD


# Manifest, Privileges
def test_manifest_places_a_card_a_limited_number_of_times_per_turn() -> None:
    """Skirmish grants one manifest use per turn: one Militia, not two."""
    s = scene([["Militia", "Militia"], []], [["Keep"], ["Keep"]])
    act(s, "play Militia#0")
    assert s.manifest_used[0] == 1
    assert "play Militia#1" not in legal(s)


# Manifest, Privileges
def test_without_a_grant_a_manifest_card_cannot_be_played() -> None:
    """Siege holds no manifest grant: Militia is never playable under it."""
    s = scene([["Militia", "Raider"], []], [["Lantern"], ["Keep"]], charter="siege")
    assert "play Militia#0" not in legal(s)
    assert "play Raider#1" in legal(s)


# Resolution
def test_an_illegal_action_is_refused_and_nothing_moves() -> None:
    """apply refuses an action not among the legal ones, naming it."""
    s = scene([["Raider"], []], [["Lantern"], ["Keep"]])
    with pytest.raises(IllegalActionError, match="attacks done"):
        act(s, "attacks done")


# Combat, Defense and defeat
@pytest.mark.parametrize("exposed", [False, True])
def test_a_blocked_attacker_whose_blockers_all_leave_deals_no_damage(exposed: bool) -> None:
    """Seat 0's Raider attacks seat 1's Harbor (or the exposed seat 1); seat 1 blocks with a
    Squire; after blocks seat 0 returns the Squire with Recall. "A blocked attacker's damage
    goes only to its blockers" (Combat): the Raider stays blocked and deals nothing — the
    Harbor keeps its counters, the exposed seat 1 is not defeated (C-24)."""
    board1 = ["Squire"] if exposed else ["Harbor", "Squire"]
    s = scene([["Recall"], []], [["Raider", "Harbor"], board1])
    recall, raider, squire = 0, 1, card(s, "Squire")
    target = "seat 1" if exposed else "Harbor#3"
    if not exposed:
        s.damage[3] = 3  # two more would exceed its integrity 4
    act(s, "pass", f"attack Raider#{raider} at {target}", "attacks done")
    until(s, lambda s: s.pending is not None and s.pending[0] == P_BLOCK)  # its trigger first
    act(s, f"block Squire#{squire} on Raider#{raider}", "blocks done")
    act(s, f"play Recall#{recall} at Squire#{squire}")  # then nobody can do more: damage
    assert s.place[squire] == HAND
    assert not s.is_over
    assert s.alive == [True, True]
    assert s.turns > 3  # combat damage resolved, the turn passed
    if not exposed:
        assert s.place[3] == BOARD
        assert s.damage[3] == 3
    assert s.damage[raider] == 0


# Commitment, Anchoring
@pytest.mark.parametrize("carried", ["Banner", "Shackles"])
def test_producers_that_differ_in_what_they_carry_are_each_offered(carried: str) -> None:
    """Paying Lantern's one additional requirement with two Squires, one carrying a Banner (or
    Shackles, which withholds its release): they differ, so the payer chooses which one to
    commit (Commitment; C-26 merges only producers alike in every respect). Committing the
    bare one leaves the carrier ready; the shackled one, if chosen, would never release."""
    s = scene([["Lantern"], []], [["Squire", carried, "Squire"], ["Keep"]], anchored={2: 1})
    lantern, carrier, bare = 0, 1, 3
    act(s, f"play Lantern#{lantern}")
    assert sorted(legal(s)) == [f"produce Squire#{carrier}", f"produce Squire#{bare}"]
    act(s, f"produce Squire#{bare}")
    assert (s.committed[bare], s.committed[carrier]) == (1, 0)


# Commitment, Anchoring
def test_producers_alike_in_every_respect_are_offered_once() -> None:
    """Two bare Squires of one owner, undamaged, holding nothing: the choice between them is
    none, so the first is committed without asking (C-26)."""
    s = scene([["Lantern"], []], [["Squire", "Squire"], ["Keep"]])
    act(s, "play Lantern#0")
    assert s.committed[1] == 1
    assert s.committed[2] == 0
    assert not any(a.startswith("produce") for a in legal(s))


# Resources, Commitment
@pytest.mark.parametrize(
    ("hand", "pooled", "producer"), [("Squire", "tide", "Keep"), ("Raider", "ember", "Lantern")]
)
def test_the_payer_chooses_between_a_pooled_resource_and_production(
    hand: str, pooled: str, producer: str
) -> None:
    """With a resource in the pool and a producer ready, a requirement it can fill — Squire's
    additional one, Raider's named ember — is paid by either: the book gives no order
    (Resources: "filled by a resource of any identity"; C-01). Committing the producer keeps
    the pooled resource for later in the turn."""
    s = scene([[hand], []], [[producer], ["Keep"]])
    identity = library.card_set().identities.index(pooled)
    s.pools[0][identity] = 1
    s._legal = None
    act(s, f"play {hand}#0")
    assert sorted(legal(s)) == [f"pay {pooled}", f"produce {producer}#1"]
    act(s, f"produce {producer}#1")
    assert s.committed[1] == 1
    assert s.pools[0][identity] == 1  # kept, and the producer's resource paid
    assert sum(s.pools[0]) == 1


# Resources
def test_a_pooled_resource_alone_pays_without_asking() -> None:
    """With nothing to produce, the pooled resource that can pay is spent without a decision
    (C-26)."""
    s = scene([["Squire", "Keep"], []], [[], ["Keep"]])  # a Keep in hand: a decision to stop at
    s.pools[0][2] = 1
    s._legal = None
    act(s, "play Squire#0")
    assert s.pools[0] == [0, 0, 0, 0]
    assert s.place[0] == BOARD


# Maintenance, Commitment
def test_a_producer_may_produce_for_its_own_obligation() -> None:
    """Citadel owes one resource of any identity and produces a stone: nothing in the book
    keeps it from committing to production for its own obligation (Commitment names production
    among the tasks; only a card already committed cannot be committed again), so it pays its
    own upkeep (C-30)."""
    s = scene([[], []], [["Keep"], ["Citadel", "Knight"]])
    citadel = 1
    assert (s.turn_player, s.phase) == (1, MAINTENANCE)
    assert f"upkeep Citadel#{citadel}" in legal(s)
    act(s, f"upkeep Citadel#{citadel}")
    assert s.place[citadel] == BOARD
    assert s.committed[citadel] == 1


LEECH = {
    "name": "Leech", "type": "object", "complexity": 2, "price": {"additional": 1},
    "abilities": [{"kind": "activated", "keyword": "Attach", "price": {"additional": 1},
                   "host": {"types": ["object", "entity"]}, "complexity": 1}],
    "text": "Attach (1): to an object or entity.",
}  # fmt: skip


# Anchoring, Ability keywords
def test_attach_never_offers_a_host_anchored_beneath_the_card() -> None:
    """Leech#1 is anchored to Leech#0: anchoring Leech#0 to it would make each the other's
    host, and "an anchored card moves with its host" (Anchoring) cannot hold both ways. Such a
    card is no host Attach can anchor to, so the ability is not offered at it (C-09, C-31) —
    before, it was offered, charged, and did nothing."""
    cards = with_cards(LEECH)
    s = scene([[], []], [["Leech", "Leech", "Raider", "Keep"], ["Keep"]], anchored={1: 0},
              card_set=cards)  # fmt: skip
    offered = legal(s)
    assert "use Leech#0 1 at Raider#2" in offered
    assert "use Leech#0 1 at Leech#1" not in offered
    assert "use Leech#1 1 at Raider#2" in offered  # moving the lower one is fine


# Combat, Defense and defeat, Control and ownership
def test_an_attack_on_a_location_its_attacker_now_controls_deals_nothing() -> None:
    """Seat 0's Raider attacks seat 1's Harbor; after attacks seat 0 takes the Harbor (Seize at
    interrupt speed through Chalice). An attack is "against that player" (Defense and defeat):
    no player attacks their own location, so the Raider deals it nothing (C-32)."""
    s = scene(
        [["Seize"], []],
        [["Raider", "Chalice", "Harbor", "Harbor", "Keep"], ["Harbor", "Keep"]],
    )
    raider, harbor = 1, 6
    s.damage[harbor] = 3  # the Raider's two would destroy it
    act(s, "pass", f"attack Raider#{raider} at Harbor#{harbor}", "attacks done")
    until(s, lambda s: not s.stack and s.current_player == 0)  # the Raider's trigger
    act(s, f"play Seize#0 at Harbor#{harbor}")
    until(s, lambda s: s.ctrl[harbor] == 0 and not s.stack)
    until(s, lambda s: s.turns > 3)
    assert s.place[harbor] == BOARD
    assert s.damage[harbor] == 3
    assert s.damage[raider] == 0


# Combat, Control and ownership
def test_a_blocker_taken_by_the_attacker_blocks_no_more() -> None:
    """Seat 1's Squire blocks seat 0's Raider; after blocks seat 0 takes the Squire. It is no
    longer the defender's blocker against its own controller's attacker: it takes no combat
    damage, and the Raider, blocked, deals none to the Harbor (C-24, C-32)."""
    s = scene(
        [["Seize"], []],
        [["Raider", "Chalice", "Harbor", "Harbor", "Keep"], ["Harbor", "Squire"]],
    )
    raider, harbor, squire = 1, 6, 7
    act(s, "pass", f"attack Raider#{raider} at Harbor#{harbor}", "attacks done")
    until(s, lambda s: s.pending is not None and s.pending[0] == P_BLOCK)
    act(s, f"block Squire#{squire} on Raider#{raider}", "blocks done")
    act(s, f"play Seize#0 at Squire#{squire}")
    until(s, lambda s: s.ctrl[squire] == 0 and not s.stack)
    until(s, lambda s: s.turns > 3)
    assert s.place[squire] == BOARD
    assert s.damage[squire] == 0
    assert s.damage[harbor] == 0
