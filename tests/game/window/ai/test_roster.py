"""The Chairs, clerks, Assessor and Registrars (IV.1–IV.6): legal moves only, seeded, the
published table rising, and the error rate doing what it says."""

from __future__ import annotations

from itertools import pairwise

from game.window.ai.player import AIPlayer, Strength
from game.window.ai.roster import CHAIR_STRENGTH, chair_player, opponent_for
from game.window.campaign import all_venues
from game.window.tables import convene_base, convene_market


class _Checked:
    """A seat that asks the AI and asserts the answer is among the legal actions."""

    def __init__(self, player: AIPlayer) -> None:
        self.player = player
        self.decisions = 0

    def decide(self, state):  # type: ignore[no-untyped-def]
        action = self.player.decide(state)
        assert action in state.legal_actions()
        self.decisions += 1
        return action

    def answer_drill(self):  # type: ignore[no-untyped-def]
        return self.player.answer_drill()


def _play(state, first: AIPlayer, second: AIPlayer) -> int:  # type: ignore[no-untyped-def]
    seats = [_Checked(first), _Checked(second)]
    from game.window.tables import play_out

    play_out(state, seats)
    assert state.is_over
    return seats[0].decisions + seats[1].decisions


def test_chairs_never_make_an_illegal_move() -> None:
    """IV.6: the Chairs play the same law you do: every decision (turns, a defender's answers,
    a Turn's order) is one of the legal actions, at base and market tables."""
    decisions = 0
    for n in range(1, 8, 2):
        decisions += _play(
            convene_market(n).new_state(), chair_player(n, n), chair_player(n + 1, n)
        )
    decisions += _play(convene_base(1).new_state(), chair_player(12, 1), chair_player(11, 1))
    assert decisions > 60


def test_every_venue_has_an_opponent_that_plays_legally() -> None:
    """IV.1–IV.5: clerks, the Assessor and the Registrars are AIs that play legal actions."""
    for venue in all_venues():
        if venue.kind == "chair":
            continue
        opponent = opponent_for(venue, 4)
        _play(convene_base(7).new_state(), chair_player(2, 4), opponent)


def test_published_chairs_rise_strictly() -> None:
    """IV.6: deeper search, thinner error: each Chair's budget rises, its error rate falls,
    its drill competence rises, from Chair I to Chair XII."""
    chairs = [CHAIR_STRENGTH[n] for n in range(1, 13)]
    for weaker, stronger in pairwise(chairs):
        assert stronger.node_budget > weaker.node_budget
        assert stronger.error_rate < weaker.error_rate
        assert stronger.drill_competence > weaker.drill_competence
    assert chairs[-1].error_rate == 0.0


def test_error_rate_one_is_uniform_and_zero_never_slips() -> None:
    """The error rate is the only other knob: at 1.0 every decision is a uniform legal draw
    (no search), at 0.0 every decision is the search's."""
    state = convene_market(2).new_state()
    reckless = AIPlayer(Strength(1_000, 1.0, 0.5), seed=1)
    picks = {reckless.decide(state) for _ in range(200)}
    assert picks == set(state.legal_actions())
    assert reckless.last is None
    careful = AIPlayer(Strength(1_000, 0.0, 0.5), seed=1)
    careful.decide(state)
    assert careful.last is not None


def test_drill_answers_follow_listed_competence() -> None:
    """R-02: Chairs answer the drill at their listed competence, seeded per table."""
    sure = AIPlayer(Strength(10, 0.0, 1.0), seed=3)
    hopeless = AIPlayer(Strength(10, 0.0, 0.0), seed=3)
    assert all(sure.answer_drill().value == "success" for _ in range(50))
    assert all(hopeless.answer_drill().value == "failure" for _ in range(50))
    a, b = chair_player(6, 8), chair_player(6, 8)
    assert [a.answer_drill() for _ in range(30)] == [b.answer_drill() for _ in range(30)]
