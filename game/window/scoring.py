"""The reckoning at the close: three columns per seat, compared one against one, never added.

I.9 and the scoring clauses of Books II and III, with the order the book gives: each card scores
(Noninscript nothing; Descent folded the Seal's final step; Hemiring folded cards one; Genealogy
doubles a face-up innermost card), Primeladder's steps, strokes; then debts (Spend-Covering,
R-05), floored at zero; then Torsor on the difference after debts (R-06), unless Independence
forbids it (R-12). Form and Holdings follow I.9 with Gram, Shadow, Noninscript and Wellformed.
Balance claims a single level column (R-12 again). Every reading is in docs/rulings.md.
"""

from __future__ import annotations

from enum import Enum
from itertools import pairwise
from typing import NamedTuple

from game.window import titles as T
from game.window.state import CHAIN, State


class Verdict(Enum):
    """The three verdicts of a settled table (I.9, I.10). Names, never numbers."""

    WIN = "win"
    LOSS = "loss"
    BALANCE = "balance"


Columns = tuple[int, int, int]


class Reckoning(NamedTuple):
    """The columns of both seats, who takes each column, and each seat's verdict."""

    columns: tuple[Columns, Columns]
    #: per column (Substance, Form, Holdings): the seat that takes it, or None when level
    takers: tuple[int | None, int | None, int | None]
    verdicts: tuple[Verdict, Verdict]


def substance_before_torsor(state: State, seat: int) -> int:
    """Substance after debts and before Torsor (I.9, Book II, Book III, R-05, Q-07)."""
    chain = state.chains[seat]
    up, titles, costs = state.up, state.titles, state.costs
    hemiring = state.in_force(T.HEMIRING, seat)
    genealogy = state.in_force(T.GENEALOGY, seat)
    total = state.hoards[seat]
    for i, c in enumerate(chain):
        title = titles[c]
        if title == T.NONINSCRIPT:
            continue  # it scores nothing, face up or face down
        if up[c]:
            total += costs[c] * 2 if i == 0 and genealogy else costs[c]
        elif title == T.DESCENT:
            total += state.seal  # the Seal's final step once the table has closed
        elif hemiring:
            total += 1
    if state.in_force(T.PRIMELADDER, seat):
        total += len({abs(costs[x] - costs[y]) for x, y in pairwise(chain)})
    sc = state.where[T.SPEND_COVERING]
    if sc >= 0 and state.loc[sc] == CHAIN + seat:  # any face
        debt = max(costs[c] for c in chain)
        total = max(0, total - debt)  # what remains present, never a shortfall
    return total


def substances(state: State) -> tuple[int, int]:
    """Both Substances: debts first, Torsor after debts (R-06), blocked by Independence (R-12)."""
    base = (substance_before_torsor(state, 0), substance_before_torsor(state, 1))
    result = list(base)
    torsor = state.in_force_anywhere(T.TORSOR)
    if torsor >= 0 and not state.in_force(T.INDEPENDENCE, 1 - torsor):
        result[torsor] += abs(base[0] - base[1])
    return result[0], result[1]


def form(state: State, seat: int) -> int:
    """Form: the longest unbroken face-up run, as Gram, Shadow, Noninscript, Wellformed bend it."""
    up, titles = state.up, state.titles
    faces = [up[c] for c in state.chains[seat] if titles[c] != T.NONINSCRIPT]
    gram = state.in_force(T.GRAM, seat)
    best_up = run_up = 0
    best_down = run_down = 0
    bridge = 0  # a single folded card a Gram may span (it adds no length)
    for i, face in enumerate(faces):
        if face:
            run_up += 1
            run_down = 0
            bridge = 0
        else:
            run_down += 1
            best_down = max(best_down, run_down)
            spans = (
                gram
                and bridge == 0
                and i > 0
                and faces[i - 1]
                and i + 1 < len(faces)
                and faces[i + 1]
            )
            if spans:
                bridge = 1
            else:
                run_up = 0
        best_up = max(best_up, run_up)
    result = best_up
    if state.in_force(T.SHADOW, seat) and best_down > best_up:
        result = best_down
    if state.in_force(T.WELLFORMED, seat) and best_down == 0:
        result += 2
    return result


def holdings(state: State, seat: int) -> int:
    """One per spoils card, plus one for a hostage under an Escrow this seat controls (I.9)."""
    n = len(state.spoils[seat])
    if state.hostage >= 0 and state.escrow_controller() == seat:
        n += 1
    return n


def reckon(state: State) -> Reckoning:
    """The columns, the taker of each column, and the verdicts, as if the table closed now."""
    s0, s1 = substances(state)
    columns = ((s0, form(state, 0), holdings(state, 0)), (s1, form(state, 1), holdings(state, 1)))
    takers: list[int | None] = [
        None if x == y else (0 if x > y else 1) for x, y in zip(columns[0], columns[1], strict=True)
    ]
    balance = state.in_force_anywhere(T.BALANCE)
    if balance >= 0 and takers.count(None) == 1 and not state.in_force(T.INDEPENDENCE, 1 - balance):
        takers[takers.index(None)] = balance
    wins = (takers.count(0), takers.count(1))
    if wins[0] >= 2:
        verdicts = (Verdict.WIN, Verdict.LOSS)
    elif wins[1] >= 2:
        verdicts = (Verdict.LOSS, Verdict.WIN)
    else:
        verdicts = (Verdict.BALANCE, Verdict.BALANCE)
    return Reckoning(columns, (takers[0], takers[1], takers[2]), verdicts)
