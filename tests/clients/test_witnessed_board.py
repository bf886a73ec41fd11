"""The board ``cz play --league`` rebuilds (``clients.witnessed.Board``): every action the league
reports is parsed and applied by the engine here, and one it cannot apply, a history that
changes, or a table said to wait for another thing than the rules say, is refused
(``Untrusted``), nothing applied (docs/formats.md, "The player's check")."""

from __future__ import annotations

import pytest

from clients.witnessed import Board, Untrusted
from game.window import format_action, new_base_table
from ledger.api.tables import TableView
from ledger.tables import Deal

ME = "me"


def view(actions: list[str], waiting: str = "move", turn: str | None = ME) -> TableView:
    state = new_base_table(3)
    hands = tuple(tuple(state.title_of(c) for c in state.hands[s]) for s in (0, 1))
    return TableView(
        table="0" * 32,
        venue="clerk-1",
        player=ME,
        commitment="c",
        waiting=waiting,  # type: ignore[arg-type]
        turn=turn,
        ply=len(actions),
        deal=Deal.from_wire({"table": "base", "hands": hands, "market": ()}),
        actions=actions,
    )


def first_two() -> list[str]:
    state = new_base_table(3)
    taken = []
    for _ in range(2):
        action = state.legal_actions()[0]
        taken.append(format_action(state, action))
        state.apply(action)
    return taken


def test_reported_actions_are_applied_by_the_engine() -> None:
    """Two legal actions, the player's then the clerk's: applied, and the table waits for the
    player's move, as the view says."""
    board = Board.dealt(view([]))
    taken = board.follow(view(first_two()), ME)
    assert [text for _, _, text in taken] == first_two()
    assert board.waiting == "move"


@pytest.mark.parametrize(
    ("reported", "waiting", "says"),
    [
        (["build Nothing-Such"], "move", "which the rules do not allow"),
        (["collect", "collect", "collect"], "move", "which the rules do not allow"),
        (None, "drill", "waits for 'drill'"),
    ],
)
def test_an_action_it_cannot_apply_is_refused(
    reported: list[str] | None, waiting: str, says: str
) -> None:
    """An unknown card, an action the position does not allow, or a wait the rules do not
    make: refused, and the board is left as it was."""
    board = Board.dealt(view([]))
    with pytest.raises(Untrusted, match=says):
        board.follow(view(reported if reported is not None else first_two(), waiting), ME)
    assert board.actions == []


def test_a_history_that_changes_is_refused() -> None:
    """Once applied, the reported history may only grow: another first action is refused."""
    board = Board.dealt(view([]))
    board.follow(view(first_two()), ME)
    changed = ["accelerate", *first_two()[1:]]
    with pytest.raises(Untrusted, match="another history"):
        board.follow(view(changed), ME)
