"""The mint and the notary composed in one app on a real port, the notary following the mint
over HTTP on the server's own address (docs/operations.md), and how players stamp and endorse."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from aiohttp.test_utils import TestServer

from apiclient.league import LeagueClient, stamp_request
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from services.kernel.settings import LeagueSettings
from services.mint.app import SERVICE as MINT
from services.notary.app import SERVICE as NOTARY
from tests.harness.mint import checkpoint_covering
from tests.harness.ports import free_port
from tests.harness.serving import composed

#: Wallet times: integers, claims only (nothing orders by them).
T0 = 1_800_000_000


@pytest.fixture
def settings(make_settings: Callable[..., LeagueSettings]) -> LeagueSettings:
    """A league whose server listens on a known free port, so the notary can follow the mint
    at the server's own address."""
    return make_settings().model_copy(update={"port": free_port()})


@pytest.fixture
async def server(settings: LeagueSettings) -> AsyncIterator[TestServer]:
    async with composed(settings, [MINT, NOTARY]) as server:
        yield server


@dataclass
class Trade:
    """A league's manifest and a few players' keys, and how they stamp and endorse."""

    league: LeagueClient
    manifest: LeagueManifest

    @property
    def notary_key(self) -> PublicKey:
        return PublicKey.from_text(self.manifest.notary)

    @property
    def mint_key(self) -> PublicKey:
        return PublicKey.from_text(self.manifest.mint)

    async def stamp(self, owner: SigningKey, title: str = "Model-A") -> Chain:
        """A print of ``title`` stamped to ``owner``, as a chain of no hop yet."""
        answer = await self.league.stamp(stamp_request(owner, self.manifest, [(title, "standard")]))
        certificate = answer.items[0].certificate  # type: ignore[union-attr]
        assert isinstance(certificate, PrintCertificate)
        return Chain(certificate=certificate, endorsements=())


@pytest.fixture
async def trade(league: LeagueClient) -> Trade:
    return Trade(league, await league.manifest())


def hop(chain: Chain, holder: SigningKey, to: SigningKey, time: int = T0) -> Chain:
    """``chain`` endorsed by ``holder`` to ``to``."""
    return endorse(chain, holder, to.public, time)


async def stamp_and_follow(trade: Trade) -> None:
    """One print stamped, and the notary's follower past it."""
    chain = await trade.stamp(SigningKey.generate())
    await checkpoint_covering(trade.league, 1)
    await trade.league.provenance(chain.certificate.serial)  # catches the notary up
