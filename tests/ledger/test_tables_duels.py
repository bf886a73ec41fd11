"""A duel's fair deal and join code (ledger.tables, docs/formats.md "Duels"): the seed takes
the secret and both players' seeds, in seat order, so none of the three chooses it; the code
is the secret's."""

from __future__ import annotations

from ledger.tables import (
    DUEL_VENUES,
    JOIN_CLOCK_SECONDS,
    MOVE_CLOCK_SECONDS,
    clock_for,
    deal_seed,
    duel_seed,
    is_duel,
)

TABLE = "0123456789abcdef" * 2


def test_the_duel_seed_takes_each_of_the_three_halves_in_seat_order() -> None:
    """Changing the secret or either player's seed changes the seed; so does the seats' order;
    a duel's seed is not a single player's table seed of the same bytes."""
    secret, a, b = b"s" * 32, b"a" * 32, b"b" * 32
    seed = duel_seed(TABLE, secret, (a, b))
    assert 0 <= seed < 2**63
    others = {
        duel_seed(TABLE, b"t" * 32, (a, b)),
        duel_seed(TABLE, secret, (b"c" * 32, b)),
        duel_seed(TABLE, secret, (a, b"c" * 32)),
        duel_seed(TABLE, secret, (b, a)),
        deal_seed(TABLE, secret, a + b),
    }
    assert seed not in others
    assert len(others) == 5


def test_the_published_clock() -> None:
    """A duel waits longer for its second key than any table for a seed, a move or a drill."""
    assert clock_for("join") == JOIN_CLOCK_SECONDS > MOVE_CLOCK_SECONDS
    assert {clock_for(w) for w in ("seed", "move", "drill")} == {MOVE_CLOCK_SECONDS}
    assert all(is_duel(v) for v in DUEL_VENUES)
    assert not is_duel("clerk-1")
