"""A duel's fair deal and join code (ledger.tables, docs/formats.md "Duels"): the seed takes
the secret and both players' seeds, in seat order, so none of the three chooses it; the code
is the secret's."""

from __future__ import annotations

from ledger.manifest import (
    DEFAULT_POLICIES,
    DEFAULT_TABLE_JOIN_SECONDS,
    DEFAULT_TABLE_MOVE_SECONDS,
    Policies,
)
from ledger.tables import (
    DUEL_VENUES,
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
    """The clock is the manifest's policy: by default a duel waits longer for its second key
    (15 minutes) than any table for a seed, a move or a drill (5); a league publishing
    another clock is held to it."""
    policies = DEFAULT_POLICIES
    assert clock_for(policies, "join") == DEFAULT_TABLE_JOIN_SECONDS == 900
    assert {clock_for(policies, w) for w in ("seed", "move", "drill")} == {300}
    assert DEFAULT_TABLE_MOVE_SECONDS == 300
    other = policies.model_copy(update={"table_move_seconds": 60, "table_join_seconds": 120})
    assert (clock_for(other, "move"), clock_for(other, "join")) == (60, 120)


def test_a_manifest_at_the_default_clock_hashes_as_before_it_was_published() -> None:
    """The clock's two policies are left out of the manifest's bytes at their defaults (a
    league founded before them reads and hashes as it always did), and written when set."""
    wire = DEFAULT_POLICIES.to_wire()
    assert "table_move_seconds" not in wire
    assert "table_join_seconds" not in wire
    assert Policies.model_validate(wire) == DEFAULT_POLICIES
    other = Policies.model_validate({**wire, "table_move_seconds": 60})
    assert other.to_wire()["table_move_seconds"] == 60
    assert "table_join_seconds" not in other.to_wire()


def test_the_duel_venues() -> None:
    """Every duel venue is a duel; a clerk's table is not."""
    assert all(is_duel(v) for v in DUEL_VENUES)
    assert not is_duel("clerk-1")
