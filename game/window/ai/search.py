"""One search for every AI: alpha-beta over the engine's State, with a transposition table,
chance nodes for the No-Go drill, iterative deepening, and a budget counted in nodes.

Strength is set by the node budget alone (and, in :mod:`game.window.ai.player`, an error
rate): never by the clock, so the same position, budget and seed give the same move on any
machine.

- Decisions belong to whoever :attr:`State.current_player` names: the seat to move, a defender
  answering a Cut or a Hold, the seat placing a Turn's order. Values are from the searching
  seat's side: it maximizes at its own decisions and minimizes at the other seat's.
- The drill (IV.4, R-02) is a chance node: success with the challenger's listed competence.
- A closed table is worth its verdict exactly; a position at the depth horizon gets the
  heuristic of :mod:`game.window.ai.evaluation`. An iteration that never met the horizon has solved
  the position: its value is exact, deepening stops, and the move is perfect play.
"""

from __future__ import annotations

from dataclasses import dataclass

from game.window import actions as A
from game.window.ai.evaluation import evaluate, terminal_value
from game.window.state import CHANCE, State

_INF = 1 << 30
_SOLVED = 1 << 20  # the depth recorded for a value that holds at any depth
_EXACT, _LOWER, _UPPER = 0, 1, 2
_DRILL_SUCCESS = A.encode(A.DRILL, 1)
_DRILL_FAILURE = A.encode(A.DRILL, 0)
#: Move ordering only (it changes what is pruned, never what is legal): takings first.
_ORDER = {
    A.CUT: 0, A.HOLD: 0, A.NOGO: 1, A.SWAP: 1, A.YIELD: 2, A.REFUSE: 2, A.CONSTRUCT: 3,
    A.BUILD: 4, A.COLLECT: 5, A.CONVERT: 5, A.RANSOM: 5, A.ACCELERATE: 9,
}  # fmt: skip
MAX_DEPTH = 64
#: The solve attempt may spend 1/SOLVE_SHARE of the budget before iterative deepening.
SOLVE_SHARE = 2
#: Entries kept between decisions at most (solved values only are carried over).
MAX_TABLE = 400_000


class _OutOfBudget(Exception):
    """The node budget is spent: the running iteration is abandoned."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen action, its value for the searching seat, and what the search cost."""

    action: int
    value: int
    depth: int
    nodes: int
    exact: bool


class Search:
    """Alpha-beta from the seat to decide at the root, within ``budget`` nodes.

    ``competence[seat]`` is the probability that ``seat``'s drill succeeds: the listed
    competence of an AI, or the model of a human the AI is told to assume.
    """

    def __init__(self, budget: int, competence: tuple[float, float]) -> None:
        if budget < 1:
            raise ValueError("a node budget is at least one node")
        self.budget = budget
        self.competence = competence
        self.nodes = 0
        self.limit = budget
        self.seat = -1
        self.table: dict[tuple[object, ...], tuple[int, int, int, int]] = {}
        self.history: dict[int, int] = {}

    def choose(self, state: State) -> SearchResult:
        """The best action for ``state.current_player`` found within the budget.

        First an attempt to solve the position outright (no horizon) with half the budget;
        failing that, iterative deepening with the heuristic until the budget is spent. Solved
        values are kept for the searcher's later decisions at the same table.
        """
        legal = state.legal_actions()
        seat = state.current_player
        if seat < 0:
            raise ValueError("the search decides for a seat, not for chance or a closed table")
        if seat != self.seat or len(self.table) > MAX_TABLE:
            self.table = {}
        else:
            self.table = {k: v for k, v in self.table.items() if v[0] == _SOLVED}
        self.seat = seat
        self.nodes = 0
        if len(legal) == 1:
            return SearchResult(legal[0], 0, 0, 0, exact=False)
        ordered = self._ordered(legal, None)
        self.limit = max(1, self.budget // SOLVE_SHARE)
        solved, _ = self._root(state, ordered, MAX_DEPTH)
        if solved is not None and solved.exact:
            return solved
        self.limit = self.budget
        best = SearchResult(ordered[0], 0, 0, self.nodes, exact=False)
        for depth in range(1, MAX_DEPTH + 1):
            found, complete = self._root(state, ordered, depth)
            if found is not None:
                best = found
                ordered = self._ordered(legal, found.action)
            if not complete or best.exact:
                break
        return best

    def _root(
        self, state: State, ordered: list[int], depth: int
    ) -> tuple[SearchResult | None, bool]:
        """One pass over the root's actions to ``depth``: the best found, and whether the pass
        completed (an abandoned pass still names the best of the actions it finished)."""
        best_action, best_value, exact = -1, -_INF, True
        try:
            for action in ordered:
                child = state.clone()
                child.apply(action)
                value, child_exact = self._value(child, depth - 1, best_value, _INF)
                exact = exact and child_exact
                if value > best_value:
                    best_action, best_value = action, value
        except _OutOfBudget:
            if best_action < 0:
                return None, False
            return SearchResult(best_action, best_value, depth, self.nodes, exact=False), False
        return SearchResult(best_action, best_value, depth, self.nodes, exact), True

    def _value(self, s: State, depth: int, alpha: int, beta: int) -> tuple[int, bool]:
        if self.nodes >= self.limit:
            raise _OutOfBudget
        self.nodes += 1
        if s.closed:
            return terminal_value(s, self.seat), True
        player = s.current_player
        if player == CHANCE:
            return self._chance(s, depth)
        if depth <= 0:
            return evaluate(s, self.seat), False
        key = s.key()
        entry = self.table.get(key)
        hint = None
        if entry is not None:
            e_depth, e_value, e_flag, hint = entry
            if e_depth >= depth:
                solved = e_depth == _SOLVED
                if e_flag == _EXACT:
                    return e_value, solved
                if e_flag == _LOWER and e_value >= beta:
                    return e_value, solved
                if e_flag == _UPPER and e_value <= alpha:
                    return e_value, solved
        maximizing = player == self.seat
        a0, b0 = alpha, beta
        best = -_INF if maximizing else _INF
        best_move = -1
        exact = True
        for action in self._ordered(s.legal_actions(), hint):
            child = s.clone()
            child.apply(action)
            value, child_exact = self._value(child, depth - 1, alpha, beta)
            exact = exact and child_exact
            if maximizing:
                if value > best:
                    best, best_move = value, action
                alpha = max(alpha, value)
            else:
                if value < best:
                    best, best_move = value, action
                beta = min(beta, value)
            if alpha >= beta:
                self.history[action] = self.history.get(action, 0) + depth
                break
        flag = _EXACT
        if best <= a0:
            flag = _UPPER
        elif best >= b0:
            flag = _LOWER
        self.table[key] = (_SOLVED if exact else depth, best, flag, best_move)
        return best, exact

    def _ordered(self, legal: tuple[int, ...], first: int | None) -> list[int]:
        """``first`` (the table's best move) first, then by cutoffs seen, then takings first."""
        history = self.history
        ranked = sorted(legal, key=lambda a: (-history.get(a, 0), _ORDER.get(a & 31, 6)))
        if first is not None and first in legal:
            ranked.remove(first)
            ranked.insert(0, first)
        return ranked

    def _chance(self, s: State, depth: int) -> tuple[int, bool]:
        assert s.pending is not None  # a chance node is a pending drill
        p = self.competence[s.pending[1]]
        total, exact = 0.0, True
        for outcome, probability in ((_DRILL_SUCCESS, p), (_DRILL_FAILURE, 1.0 - p)):
            if probability <= 0.0:
                continue
            child = s.clone()
            child.apply(outcome)
            value, child_exact = self._value(child, depth, -_INF, _INF)
            total += probability * value
            exact = exact and child_exact
        return round(total), exact
