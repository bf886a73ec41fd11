"""``/provenance/SERIAL`` of a print returned for an upgrade and issued again (L-20), checked
as ``cz provenance`` checks it (Book V.8): its stamp, its issue 2, its return to the mint
between them (the mint's own signed event, on the hop the notary recorded), each issue's
chain; an account altered in its issues or returns is refused on the player's machine."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.api.provenance import check_provenance
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.errors import LedgerError
from ledger.keys import SigningKey
from tests.harness.buying import faucet, league, server
from tests.harness.trading import T0
from tests.harness.treasury import Faucet
from tests.harness.upgrading import paid, settings, stamped, to_mint, upgrade

#: test_buying's and test_upgrading's fixtures, served here too.
__all__ = ["faucet", "league", "server", "settings"]


# V.8, L-20
async def test_a_print_issued_again_has_its_whole_life_checked(
    faucet: Faucet, league: LeagueClient, server: TestServer
) -> None:
    stamper, buyer, friend = (SigningKey.generate() for _ in range(3))
    await league.stamp(stamp_request(stamper, faucet.manifest, [("Escrow", "gilt")] * 2))
    standard = await stamped(league, faucet, buyer, "Escrow")
    answer = await league.buy(
        upgrade(
            faucet,
            buyer,
            "Escrow",
            "gilt",
            to_mint(faucet, standard, buyer),
            await paid(faucet, buyer, 100),
            "up-prov-01",
        )
    )
    assert isinstance(answer.returned, PrintCertificate)  # the gilt run is out: handed back
    await league.notarize(
        [endorse(Chain(certificate=answer.returned, endorsements=()), buyer, friend.public, T0)]
    )
    life = await league.provenance(standard.serial)
    assert life.stamp is not None
    named = [life.stamp.index, *(i.index for i in life.issues), *(r.index for r in life.returns)]
    events = [
        e for index in named for e in (await league.events(index - 1, 1, service="mint")).events
    ]
    assert check_provenance(life, faucet.manifest, standard.serial, events) == friend.public

    (again,) = life.issues
    (back,) = life.returns
    for lie in (
        life.model_copy(update={"returns": []}),  # issued again with no return before it
        life.model_copy(update={"issues": [again, again]}),  # issue 2 twice
        life.model_copy(update={"issues": []}),  # issue 2's hop shown without issue 2
        life.model_copy(
            update={"returns": [back.model_copy(update={"purchase_id": "up-other-01"})]}
        ),  # the return's purchase changed
        life.model_copy(
            update={"returns": [back.model_copy(update={"notarized": back.notarized + 1})]}
        ),  # another notary record named
        life.model_copy(
            update={"returns": [back.model_copy(update={"index": life.stamp.index})]}
        ),  # another event of the mint's named
    ):
        with pytest.raises(LedgerError):
            check_provenance(lie, faucet.manifest, standard.serial, events)
