"""cz counts in words: one is singular, every other count (none included) plural
(``ledger/words.py``)."""

from __future__ import annotations

from pathlib import Path

from game.window.economy.prints import Print
from tests.clients.conftest import Player, wallet_with
from tests.harness.league import InProcessLeague


def test_cz_counts_one_print_in_the_singular(
    served: InProcessLeague, players: dict[str, Player], tmp_path: Path
) -> None:
    """``cz stamp`` of one print says "stamped 1 print:", and ``cz notes`` of none "0 notes"
    (not "1 prints", not "0 note")."""
    a = players["A"]
    a.ok("load", str(wallet_with(tmp_path / "a.code", [Print("Tally")])))
    a.ok("league", "set", served.url)
    assert a.ok("stamp").startswith("stamped 1 print:\n")
    assert a.ok("notes").startswith("0 notes, M0 in all:")
