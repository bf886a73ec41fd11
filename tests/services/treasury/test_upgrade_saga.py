"""The upgrade saga survives a crash of the treasury (L-20): crashed at
each step of a finish upgrade, the treasury started again ends it exactly once, the returned
print taken back by the mint once, and on an exhausted run the print handed back to the buyer
once.

The mint, the treasury and the notary run in this process as three apps over one database;
each named step is a hook point (tests/harness/crashed_saga.py: after the commit of the
step's write, or once a peer answered the treasury's call), with no switch in production code.
"""

from __future__ import annotations

import time

import pytest

from apiclient.league import stamp_request
from ledger.api.treasury import BuyRequest, Upgrade, buy_request
from ledger.endorsements import Chain, endorse
from ledger.events import PrintReissued, PrintReturned, PrintStamped
from ledger.keys import PublicKey, SigningKey
from services.kernel.founding import load_manifest
from services.kernel.settings import LeagueSettings
from tests.harness.crashed_saga import CASES as SAGA_CASES
from tests.harness.crashed_saga import PATHS, League, bought_across_a_crash
from tests.harness.founding import TEST_POLICIES
from tests.harness.trading import T0

#: The saga's named steps on the delivered and refunded paths, passed by an upgrade here.
CASES = [case for case in SAGA_CASES if case[1] != "rejected"]


@pytest.fixture
def settings(make_settings: object) -> LeagueSettings:
    make = make_settings
    assert callable(make)
    made: LeagueSettings = make(
        policies=TEST_POLICIES.model_copy(update={"faucet_marks_per_day": 100})
    )
    return made


@pytest.mark.parametrize(("point", "path"), CASES, ids=[f"{p}-{q}" for p, q in CASES])
async def test_the_treasury_crashed_at_each_step_of_an_upgrade_ends_it_once(
    settings: LeagueSettings,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
    path: str,
) -> None:
    """# V.5, L-20: crashed at ``point`` on the way to ``path``, the treasury started again
    ends a gilt upgrade exactly once: the same answer asked twice, each step once, at most one
    gilt stamp for the order, the returned print taken back once (and, refunded, issued again
    to the buyer once), the change or the refund issued once, and the supply invariant
    holds."""
    manifest = load_manifest(settings)
    treasury_key = PublicKey.from_text(manifest.treasury)
    mint_key = PublicKey.from_text(manifest.mint)
    buyer, stamper = SigningKey.generate(), SigningKey.generate()
    pid = f"up-{point}-{path}"
    title = "Escrow" if path == "refunded" else "Tally"
    notes: list[Chain] = []
    standards: list[Chain] = []

    async def prepare(league: League) -> BuyRequest:
        if path == "refunded":  # the gilt run of 2 stamped out before the purchase
            await league.mint.stamp(stamp_request(stamper, manifest, [(title, "gilt")] * 2))
        (item,) = (
            await league.mint.stamp(stamp_request(buyer, manifest, [(title, "standard")]))
        ).items
        assert item.status == "stamped"
        standards.append(Chain(certificate=item.certificate, endorsements=()))
        notes.extend(
            Chain(certificate=n, endorsements=())
            for n in (await league.faucet.claim(buyer, 100)).notes
        )
        return buy_request(
            buyer,
            manifest,
            title,
            [endorse(n, buyer, treasury_key, T0) for n in notes],
            purchase_id=pid,
            at=int(time.time()),
            upgrade=Upgrade(finish="gilt", returned=endorse(standards[0], buyer, mint_key, T0)),
        )

    crossed = await bought_across_a_crash(settings, monkeypatch, point, path, prepare)
    answer = crossed.answer
    assert answer.outcome == path
    assert crossed.steps == PATHS[path]
    stamped = sum(
        1 for e in crossed.mint_events if isinstance(e, PrintStamped) and e.request_id == pid
    )
    backs = [
        e.TYPE
        for e in crossed.mint_events
        if isinstance(e, PrintReturned | PrintReissued) and e.order_id == pid
    ]
    if path == "delivered":
        assert stamped == 1
        assert answer.stamped is not None
        assert (answer.stamped.finish, answer.stamped.issued_to) == ("gilt", buyer.public.to_text())
        assert sum(n.denomination for n in answer.change) == 20
        assert backs == ["print-returned"]
    else:
        assert (stamped, answer.change) == (0, [])
        assert [(n.serial, n.issue) for n in answer.refund] == [
            (n.serial, n.issue + 1) for n in notes
        ]
        assert backs == ["print-returned", "print-reissued"]
        assert answer.returned is not None
        assert (answer.returned.serial, answer.returned.issue, answer.returned.issued_to) == (
            standards[0].serial,
            2,
            buyer.public.to_text(),
        )
