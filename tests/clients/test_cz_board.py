"""The board ``cz play`` draws (``clients.cz_board.draw``): a hostage names the chain it was
taken from in plain English, "your chain" for the player's own."""

from __future__ import annotations

import io

from clients.cz_board import Screen, draw
from game.window import new_base_table


def test_a_hostage_from_your_chain_reads_your_chain() -> None:
    """Not "you's chain": the player's own chain is "your chain", the other seat's by name."""
    state = new_base_table(1)
    state.hostage = 0
    for owner, says in ((0, "(from your chain)"), (1, "(from clerk-1's chain)")):
        state.hostage_owner = owner
        out = io.StringIO()
        draw(Screen(out, colour=False, terminal=False), state, None, 0, "clerk-1", kind="base")
        assert says in out.getvalue()
