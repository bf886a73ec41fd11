"""Every AI opponent's published strength (IV.1, IV.2, IV.5, IV.6), and who sits at a venue.

The Standing Table's twelve Chairs rise by deeper search and thinner error (IV.6), never by
stat inflation or rule exceptions: each is the one search of :mod:`game.window.ai.search` with
a node budget and an error rate, and answers the No-Go drill at its listed competence. The
clerks, the Assessor and the Registrars are the same AI at fixed strengths. The table is
mirrored in docs/modes.md.
"""

from __future__ import annotations

from types import MappingProxyType

from game.window.ai.player import HUMAN_DRILL_MODEL, AIPlayer, Strength
from game.window.campaign import Venue

CHAIR_STRENGTH: MappingProxyType[int, Strength] = MappingProxyType(
    {
        1: Strength(node_budget=30, error_rate=0.85, drill_competence=0.40),
        2: Strength(node_budget=60, error_rate=0.55, drill_competence=0.45),
        3: Strength(node_budget=120, error_rate=0.35, drill_competence=0.50),
        4: Strength(node_budget=250, error_rate=0.24, drill_competence=0.55),
        5: Strength(node_budget=500, error_rate=0.17, drill_competence=0.60),
        6: Strength(node_budget=1_000, error_rate=0.12, drill_competence=0.65),
        7: Strength(node_budget=2_000, error_rate=0.08, drill_competence=0.70),
        8: Strength(node_budget=4_000, error_rate=0.05, drill_competence=0.75),
        9: Strength(node_budget=7_000, error_rate=0.045, drill_competence=0.80),
        10: Strength(node_budget=14_000, error_rate=0.02, drill_competence=0.85),
        11: Strength(node_budget=28_000, error_rate=0.008, drill_competence=0.90),
        12: Strength(node_budget=50_000, error_rate=0.00, drill_competence=0.95),
    }
)
#: The four clerks of the Plenum (IV.1), weakest first.
CLERK_STRENGTH: MappingProxyType[int, Strength] = MappingProxyType(
    {
        1: Strength(node_budget=10, error_rate=0.95, drill_competence=0.40),
        2: Strength(node_budget=15, error_rate=0.92, drill_competence=0.40),
        3: Strength(node_budget=20, error_rate=0.89, drill_competence=0.40),
        4: Strength(node_budget=30, error_rate=0.86, drill_competence=0.40),
    }
)
ASSESSOR_STRENGTH = Strength(node_budget=200, error_rate=0.20, drill_competence=0.50)
REGISTRAR_STRENGTH = Strength(node_budget=2_000, error_rate=0.10, drill_competence=0.70)


def strength_at(venue: Venue) -> Strength:
    """The strength of the AI who sits at ``venue``."""
    if venue.kind == "chair":
        return CHAIR_STRENGTH[venue.number]
    if venue.kind == "clerk":
        return CLERK_STRENGTH[venue.number]
    if venue.kind == "assessor":
        return ASSESSOR_STRENGTH
    return REGISTRAR_STRENGTH


def chair_player(
    number: int, seed: int | str, opponent_competence: float = HUMAN_DRILL_MODEL
) -> AIPlayer:
    """Chair ``number`` (1–12) for one table, seeded."""
    return AIPlayer(CHAIR_STRENGTH[number], f"chair-{number}:{seed}", opponent_competence)


def opponent_for(venue: Venue, seed: int | str) -> AIPlayer:
    """The AI who sits at ``venue`` for one table, seeded; a Registrar teaches its set."""
    from game.window.registrars import RegistrarPlayer  # the Registrars build on this module

    if venue.kind == "registrar":
        return RegistrarPlayer(venue.card_set, REGISTRAR_STRENGTH, seed)
    return AIPlayer(strength_at(venue), f"{venue.name}:{seed}")
