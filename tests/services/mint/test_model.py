"""The mint against a model: random batches until runs run dry, every answer predicted."""

from __future__ import annotations

import random
from collections import Counter

from apiclient.league import LeagueClient, stamp_request, verify_stamped
from ledger.api.mint import Refused, Stamped
from ledger.keys import SigningKey
from ledger.print_runs import RUN_FINISHES

TITLES = ("Tally", "No-Go", "Model-B", "Noninscript")


async def test_random_batches_match_the_model(league: LeagueClient) -> None:
    """Seeded random batches from four owners over four titles (runs of 3/2/1): each item is
    stamped with exactly the serial the model predicts or refused exactly when the model's run
    is empty; the census equals the model after every batch; supply never moves."""
    manifest = await league.manifest()
    rng = random.Random(20261202)
    owners = [SigningKey.generate() for _ in range(4)]
    drawn: Counter[tuple[str, str]] = Counter()
    seen: set[str] = set()
    refused = 0
    for _ in range(14):
        owner = rng.choice(owners)
        batch = [(rng.choice(TITLES), rng.choice(RUN_FINISHES)) for _ in range(rng.randint(1, 6))]
        answer = await league.stamp(stamp_request(owner, manifest, batch))
        verify_stamped(answer, manifest, owner.public)
        for (title, finish), item in zip(batch, answer.items, strict=True):
            run = manifest.print_runs.run(title)
            if drawn[(title, finish)] < run.size(finish):
                assert isinstance(item, Stamped)
                number = run.first_number(finish) + drawn[(title, finish)]
                assert item.certificate.serial == f"CZ-{title.upper()}-{number:04d}"
                assert item.certificate.serial not in seen
                seen.add(item.certificate.serial)
                drawn[(title, finish)] += 1
            else:
                assert isinstance(item, Refused)
                assert item.problem == "run-exhausted"
                refused += 1
        census = await league.census()
        for entry in census.titles:
            for finish, count in entry.finishes.items():
                assert count.stamped == drawn[(entry.title, finish)]
                assert count.stamped + count.remaining == count.size
        assert census.totals["all"].stamped == len(seen)
    assert refused > 0  # the walk did run into empty runs
