"""The AIs of Book IV: one search (:mod:`.search`, judging open positions with
:mod:`.evaluation`), set by (node budget, error rate) in :mod:`.player`.

Every opponent — the clerks, the Assessor, the four Registrars (:mod:`game.window.registrars`)
and the twelve Chairs of the Standing Table — is that AI at the strength :mod:`.roster`
publishes, with its listed No-Go drill competence.
"""
