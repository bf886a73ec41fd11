"""Upgrades at the treasury: a league rich enough a day for a holofoil upgrade, and the
builders of an upgrade's stamp, payment and request."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from apiclient.league import LeagueClient, stamp_request
from ledger.api.treasury import BuyRequest, Upgrade, buy_request
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from services.kernel.settings import LeagueSettings
from tests.harness.buying import to_treasury
from tests.harness.founding import TEST_POLICIES
from tests.harness.ports import free_port
from tests.harness.trading import T0
from tests.harness.treasury import Faucet

#: Enough of the faucet a day for a holofoil upgrade and its change.
RICH = TEST_POLICIES.model_copy(update={"faucet_marks_per_day": 300})


@pytest.fixture
def settings(make_settings: object) -> LeagueSettings:
    make = make_settings
    assert callable(make)
    made: LeagueSettings = make(policies=RICH)
    return made.model_copy(update={"port": free_port()})


async def stamped(
    league: LeagueClient, faucet: Faucet, owner: SigningKey, title: str, finish: str = "standard"
) -> Chain:
    """A print of ``title`` stamped to ``owner`` by the mint (the owner's allowance)."""
    answer = await league.stamp(stamp_request(owner, faucet.manifest, [(title, finish)]))
    (item,) = answer.items
    assert item.status == "stamped", item
    return Chain(certificate=item.certificate, endorsements=())


def to_mint(faucet: Faucet, chain: Chain, holder: SigningKey) -> Chain:
    return endorse(chain, holder, PublicKey.from_text(faucet.manifest.mint), T0)


async def paid(faucet: Faucet, buyer: SigningKey, marks: int) -> list[Chain]:
    notes = (await faucet.claim(buyer, marks)).notes
    return [to_treasury(faucet, Chain(certificate=n, endorsements=()), buyer) for n in notes]


def upgrade(
    faucet: Faucet,
    buyer: SigningKey,
    title: str,
    finish: str,
    returned: Chain,
    payment: Sequence[Chain],
    pid: str,
) -> BuyRequest:
    return buy_request(
        buyer,
        faucet.manifest,
        title,
        payment,
        purchase_id=pid,
        at=int(time.time()),
        upgrade=Upgrade(finish=finish, returned=returned),  # type: ignore[arg-type]
    )
