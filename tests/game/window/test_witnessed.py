"""A witnessed table as the tables service plays it and an auditor replays it
(``game.window.witnessed``, docs/formats.md "Witnessed tables"): the offline convening and AI
of its seed, the player's No-Go drill judged on the seconds the log's times give (IV.4), and a
recorded move that is not what the table plays named."""

from __future__ import annotations

import pytest

from game.window.drill import TIME_LIMIT_SECONDS
from game.window.errors import IllegalActionError
from game.window.notation import format_action
from game.window.tables import convene_market
from game.window.witnessed import WitnessedTable, WitnessMismatch, check_move

#: A Chair I table whose player, taking the first legal action each time, reaches a No-Go
#: drill of its own (found by playing seeds in order).
DRILL_SEED = 2


def first_legal(table: WitnessedTable) -> str:
    return format_action(table.state, table.state.legal_actions()[0])


def at_the_drill() -> WitnessedTable:
    table = WitnessedTable.convene("chair-I", DRILL_SEED)
    while not table.drilling:
        table.play(first_legal(table))
    return table


def test_a_table_is_the_offline_table_of_its_seed() -> None:
    """The deal is the venue's offline convening of the seed; the player sits first."""
    table = WitnessedTable.convene("chair-VI", 12345)
    offline = convene_market(12345)
    assert table.deal() == ("market", offline.hands, offline.market)
    assert table.state.current_player == 0
    with pytest.raises(IllegalActionError):
        table.play("build Zenoseal")
    assert table.ply == 0  # a refused move takes nothing


@pytest.mark.parametrize(
    ("answer", "elapsed", "outcome"),
    [
        ("shown", 1.0, "drill success"),
        ("shown", TIME_LIMIT_SECONDS, "drill success"),
        ("shown", TIME_LIMIT_SECONDS + 0.5, "drill failure"),
        ("other", 1.0, "drill failure"),
    ],
)
def test_the_player_s_drill_is_judged_on_the_seconds_given(
    answer: str, elapsed: float, outcome: str
) -> None:
    """IV.4: the shown pattern within the limit succeeds; late, or another pattern, fails; the
    same answer and seconds judge the same on a replay of the table."""
    table, again = at_the_drill(), at_the_drill()
    shown = table.pattern()
    assert again.pattern() == shown
    text = (
        shown.notation()
        if answer == "shown"
        else shown.notation().replace("1", "x").replace("0", "1").replace("x", "0")
    )
    taken = table.play(text, elapsed)
    assert taken[0] == outcome
    check_move(again, text, taken, elapsed)  # the auditor's replay agrees


def test_a_recorded_move_the_table_does_not_play_is_named() -> None:
    """A recorded reply edited (or one left out) fails the replay at its ply."""
    table = WitnessedTable.convene("clerk-1", 7)
    reference = WitnessedTable.convene("clerk-1", 7)
    move = first_legal(table)
    taken = table.play(move)
    edited = [*taken[:-1], "collect" if taken[-1] != "collect" else "accelerate"]
    with pytest.raises(WitnessMismatch, match="the log records"):
        check_move(reference, move, edited, None)


def test_a_duel_has_no_ai_and_each_move_is_the_deciding_seats() -> None:
    """A duel convenes the base (or market) table of its seed with no AI: a move takes only
    itself, the deciding seat alternates as the engine says, and a move signed by the other
    seat's key is refused (docs/rulings.md L-30)."""
    from game.window.tables import convene_base
    from game.window.witnessed import OutOfTurnMove, check_seat

    table = WitnessedTable.convene("duel-base", 777)
    offline = convene_base(777)
    assert table.ai is None
    assert table.deal() == ("base", offline.hands, offline.market)
    keys = ("opener", "joiner")
    seats = []
    while not table.closed and table.ply < 12:
        seat = table.decider
        assert seat is not None
        seats.append(seat)
        with pytest.raises(OutOfTurnMove):
            check_seat(table, keys, keys[1 - seat])
        check_seat(table, keys, keys[seat])
        text = table.pattern().notation() if table.drilling else first_legal(table)
        assert len(table.play(text, 0.0 if table.drilling else None)) == 1
    assert seats[0] == 0
    assert 1 in seats
    market = WitnessedTable.convene("duel-market", 777)
    assert market.deal()[0] == "market"
    assert market.ai is None


@pytest.mark.parametrize("venue", ["clerk-1", "assessor", "chair-I", "chair-VI"])
def test_a_table_followed_from_its_actions_is_the_table_played(venue: str) -> None:
    """A table's recorded actions taken as they stand (``follow``, no search: what the
    service shows a table it does not hold) give, at every ply, the state, the legal actions
    and a pending drill's pattern of the table as it was played, the AI's replies included."""
    for seed in range(6):
        played = WitnessedTable.convene(venue, seed)
        shown = WitnessedTable.convene(venue, seed)
        turn = 0
        while not played.closed:
            if played.drilling:
                answer = played.pattern().notation() if turn % 3 else "000/000/000"
                taken = played.play(answer, 1.0)
            else:
                legal = played.state.legal_actions()
                taken = played.play(format_action(played.state, legal[turn % len(legal)]))
            for text in taken:
                shown.follow(text)
            turn += 1
            assert shown.actions == played.actions
            assert shown.state.legal_actions() == played.state.legal_actions()
            assert (shown.drilling, shown.drills) == (played.drilling, played.drills)
            if played.drilling:
                assert shown.pattern() == played.pattern()
        assert shown.closed
        assert (shown.verdict(), shown.columns()) == (played.verdict(), played.columns())
