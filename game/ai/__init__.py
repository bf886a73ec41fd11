"""The AIs of Book IV: one search (:mod:`game.ai.search`), set by (node budget, error rate).

The twelve Chairs of the Standing Table (:mod:`game.ai.chairs`) and the four Registrars
(:mod:`game.registrars`) differ only in those parameters and their listed No-Go drill competence.
"""
