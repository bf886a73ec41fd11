"""THE WINDOW's table drawn in the terminal, for ``cz play`` (a table being played) and
``cz table replay`` (a record stepped through): both chains, hands, market, hostage, plenum,
hoards, the Seal and the live columns, with colour on a terminal unless ``NO_COLOR`` is set."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from game.window.economy.prints import Finish
from game.window.state import SEAL_CLOSE, State

if TYPE_CHECKING:
    from game.window.tables import Table


@dataclass(slots=True)
class Screen:
    """Where the table is drawn (stdout, or stderr under ``--json``), with colour when it is a
    terminal and ``NO_COLOR`` is unset."""

    out: TextIO
    colour: bool
    terminal: bool

    @classmethod
    def on(cls, out: TextIO) -> Screen:
        terminal = out.isatty()
        return cls(out, terminal and "NO_COLOR" not in os.environ, terminal)

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()


def _card(screen: Screen, state: State, table: Table | None, card: int) -> str:
    name = state.title_of(card)
    if table is None:
        return name
    origin = table.provenance[card].print if card < len(table.provenance) else None
    if origin is not None and origin.finish is not Finish.STANDARD:
        name += f" [{origin.finish.value}]"
    return name


def draw(
    screen: Screen,
    state: State,
    table: Table | None,
    you: int,
    them: str,
    *,
    kind: str | None = None,
    me: str = "you",
) -> None:
    """Both chains (innermost first; a face-down card in parentheses), hands, market, hostage,
    plenum, hoards, the Seal and the live columns (I.9, reckoned as if the table closed now).
    Without a ``table`` (a replayed record) the cards are drawn by title and ``kind`` names it."""
    who = {you: me, 1 - you: them}
    width = max(len(them), len(me), len("market"))
    kind = table.kind if table is not None else kind
    seal = "#" * state.seal + "." * (SEAL_CLOSE - state.seal)
    screen.say(
        screen.paint(
            f"── {kind} table · turn {state.turn + 1} · Seal [{seal}] {state.seal}/{SEAL_CLOSE}"
            f" · plenum {state.plenum} ──",
            "1",
        )
    )
    columns = state.columns()
    for seat in (1 - you, you):
        chain = []
        for c in state.chains[seat]:
            text = _card(screen, state, table, c)
            chain.append(
                screen.paint(text, "32") if state.up[c] else screen.paint(f"({text})", "2")
            )
        s, f, h = columns[seat]
        colour = "36" if seat == you else "35"
        screen.say(
            f"{screen.paint(who[seat].rjust(width), colour)}  chain: {' · '.join(chain) or '-'}"
        )
        hand = ", ".join(_card(screen, state, table, c) for c in state.hands[seat]) or "-"
        screen.say(
            f"{'':>{width}}  hand: {hand}  │ hoard {state.hoards[seat]} · columns "
            f"Substance {s} Form {f} Holdings {h}"
        )
    market = ", ".join(_card(screen, state, table, c) for c in state.market) or "-"
    if state.hostage >= 0:
        owner = who.get(state.hostage_owner, "?")
        whose = "your" if owner == "you" else f"{owner}'s"
        hostage = f"{_card(screen, state, table, state.hostage)} (from {whose} chain)"
    else:
        hostage = "none"
    screen.say(f"{'market':>{width}}  {market}  │ hostage: {hostage}")
