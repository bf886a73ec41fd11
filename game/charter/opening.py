"""A new game: the decks dealt to their seats, shuffled, seven cards drawn, mulligans asked
(Game setup). Seat 0 takes the first turn (ruling C-02)."""

from __future__ import annotations

from game.charter.cards import CardSet
from game.charter.charters import Charter
from game.charter.effects import draw
from game.charter.errors import CardDataError
from game.charter.state import DECK, DEFAULT_MAX_TURNS, HAND_SIZE, NO_COMBAT, SETUP, State
from game.charter.tables import tables_for
from game.charter.turns import _next_mulligan

MAX_CARDS = 255  # card ids fit an action argument
MAX_SEATS = 8


def new_game(
    card_set: CardSet,
    charter: Charter,
    decks: list[list[str]],
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> State:
    """The opening position for ``decks`` (card names, seat order) under ``charter``.

    Decks are taken as given: judge them with :func:`game.charter.charters.deck_failures`
    first. Card ids follow the decks in seat order and each deck in its listed order; each
    deck is then shuffled by the game's generator seeded with ``seed``."""
    if not 2 <= len(decks) <= MAX_SEATS:
        raise CardDataError(f"a game seats 2 to {MAX_SEATS} players")
    names = [name for deck in decks for name in deck]
    if len(names) > MAX_CARDS:
        raise CardDataError(f"a game holds at most {MAX_CARDS} cards")
    unknown = [name for name in names if name not in card_set.by_name]
    if unknown:
        raise CardDataError(f"no card {unknown[0]!r} in the card set {card_set.name!r}")
    if max_turns < 1:
        raise CardDataError("a game lasts at least one turn")
    s = State.__new__(State)
    n = len(decks)
    s.card_set, s.charter, s.grant = card_set, charter.name, charter.manifest
    s.defs = tuple(card_set.card(name) for name in names)
    s.tables = tables_for(s.defs)
    s.owner = tuple(seat for seat, deck in enumerate(decks) for _ in deck)
    s.n, s.max_turns = n, max_turns
    total = len(names)
    s.place = bytearray(total)  # every card starts in its deck (DECK = 0)
    assert DECK == 0
    start = 0
    s.decks = []
    for deck in decks:
        s.decks.append(list(range(start, start + len(deck))))
        start += len(deck)
    s.hands = [[] for _ in range(n)]
    s.discards = [[] for _ in range(n)]
    s.board = []
    s.host = [-1] * total
    s.bond = bytearray(total)
    s.free_ctrl = list(s.owner)
    s.ctrl = list(s.owner)
    s.committed = bytearray(total)
    s.damage = [0] * total
    s.boost = {}
    s.withheld = frozenset()
    s.pools = [[0] * len(card_set.identities) for _ in range(n)]
    s.manifest_used = [0] * n
    s.alive = [True] * n
    s.first_turn = [True] * n
    s.turn_player, s.turns, s.phase, s.step = 0, 0, SETUP, NO_COMBAT
    s.stack = []
    s.priority, s.passes, s.resolving = 0, 0, False
    s.pending = None
    s.attackers, s.blocks, s.blocked, s.divisions, s.assigned = [], [], [], [], []
    s.triggers, s.deferred = [], []
    s.rng = seed & 0xFFFFFFFFFFFFFFFF
    s.dirty, s.winner, s.steps = False, -1, 0
    s._legal = None
    for seat in range(n):
        s.shuffle(s.decks[seat])
        draw(s, seat, HAND_SIZE)
    _next_mulligan(s, 0)
    from game.charter.turns import run

    run(s)
    return s
