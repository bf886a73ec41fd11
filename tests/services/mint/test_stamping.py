"""POST /mint/stamp over real HTTP on real PostgreSQL."""

from __future__ import annotations

import pytest

from clients.league import LeagueClient, LeagueProblem, stamp_request, verify_stamped
from ledger.keys import SigningKey
from services.mint.wire import Refused, Stamped


async def test_stamp_issues_true_serials_to_the_owner(league: LeagueClient) -> None:
    """Stamped prints get serials from the start of their finish's range, signed to the owner."""
    manifest = await league.manifest()
    owner = SigningKey.generate()
    answer = await league.stamp(
        stamp_request(owner, manifest, [("Tally", "standard"), ("Model-A", "gilt"),
                                        ("Tally", "standard"), ("Zenoseal", "holofoil")])
    )
    assert not answer.replayed
    serials = [item.certificate.serial for item in answer.items if isinstance(item, Stamped)]
    assert serials == ["CZ-TALLY-0001", "CZ-MODEL-A-0004", "CZ-TALLY-0002", "CZ-ZENOSEAL-0006"]
    verify_stamped(answer, manifest, owner.public)
    assert [item.certificate.event for item in answer.items if isinstance(item, Stamped)] == [
        0, 1, 2, 3
    ]
    assert answer.allowance.used_today == 4
    assert answer.allowance.remaining_today == 46
