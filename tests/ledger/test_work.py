"""Proof of work per print (ledger/work.py): bound to the request, priced by the run, cheap to
check, and the honest solver finds what the mint accepts (docs/economy.md)."""

from __future__ import annotations

import pytest

from ledger.errors import UnknownTitle
from ledger.work import (
    TIERS,
    challenge,
    meets,
    request_work,
    solve,
    target,
    tier,
    work_hash,
    work_per_print,
)

REQUEST = {"kind": "stamp-request", "owner": "k", "prints": [{"title": "Gram"}], "time": 1}


def test_the_challenge_binds_everything_but_work_and_signature() -> None:
    """Changing any signed field changes the challenge; work and sig do not."""
    bound = challenge(REQUEST)
    assert challenge({**REQUEST, "work": [1], "sig": "x"}) == bound
    for field, value in (("owner", "other"), ("time", 2), ("prints", [])):
        assert challenge({**REQUEST, field: value}) != bound


def test_a_solved_nonce_meets_its_work_and_is_bound_to_its_print() -> None:
    """The solver's nonce meets the work for its print index and request; for another index
    or another request it almost surely does not (a 1 in 4096 chance each, fixed inputs)."""
    bound = challenge(REQUEST)
    nonce = solve(bound, 0, 4096)
    assert meets(bound, 0, nonce, 4096)
    assert work_hash(bound, 0, nonce) < target(4096)
    assert not meets(bound, 1, nonce, 4096)
    assert not meets(challenge({**REQUEST, "time": 2}), 0, nonce, 4096)
    assert not meets(bound, 0, -1, 1)
    assert not meets(bound, 0, 2**64, 1)


def test_work_one_is_free() -> None:
    """A price of one expected hash accepts every nonce (test leagues)."""
    assert all(meets(b"\0" * 32, 0, nonce, 1) for nonce in range(50))


@pytest.mark.parametrize(
    ("size", "stamped", "expected"),
    [
        (6000, 0, 0),
        (6000, 1, 0),
        (6000, 599, 0),
        (6000, 600, 1),
        (6000, 5400, 9),
        (6000, 5999, 9),
        (6000, 6000, 10),
        (3, 1, 3),
        (0, 0, TIERS),
    ],
)
def test_tiers_are_whole_tenths_gone(size: int, stamped: int, expected: int) -> None:
    """The price moves each whole tenth of a run stamped: a run with more than 90 % left is
    tier 0 (one stamp does not raise the price), the last tenth tier 9."""
    assert tier(size, stamped) == expected


def test_the_price_rises_from_base_to_base_times_rise() -> None:
    """More than 90 % left costs the base; the last tenth costs base × rise; linear by tenths
    between."""
    assert work_per_print(1000, 4, 6000, 0) == 1000
    assert work_per_print(1000, 4, 6000, 599) == 1000
    assert work_per_print(1000, 4, 6000, 3000) == 2666
    assert work_per_print(1000, 4, 6000, 5400) == 4000
    assert work_per_print(1000, 4, 6000, 5999) == 4000
    assert work_per_print(1000, 1, 6000, 5999) == 1000


def test_request_work_counts_earlier_prints_of_the_same_request() -> None:
    """Ten prints of a run of 10 cost what each costs when drawn in turn."""
    runs = {("Gram", "standard"): (10, 0)}
    works = request_work(100, 4, runs, [("Gram", "standard")] * 10)
    assert works == [work_per_print(100, 4, 10, n) for n in range(10)]
    assert works[0] == 100
    assert works[-1] == 400
    with pytest.raises(UnknownTitle):
        request_work(100, 4, runs, [("Gram", "gilt")])
