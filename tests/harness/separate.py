"""The league as three ``league serve NAME`` processes on three databases and ports, and the
story (stamp, claim, buy, notarize) run across them."""

from __future__ import annotations

import time
from dataclasses import dataclass

import aiohttp
import asyncpg

from apiclient.league import LeagueClient
from ledger.api.treasury import BuyAnswer, BuyRequest, ClaimAnswer, ClaimRequest, buy_request
from ledger.endorsements import Chain, endorse
from ledger.keys import PublicKey, SigningKey
from ledger.manifest import LeagueManifest
from tests.harness.audit import T0, published, stamp
from tests.harness.ports import free_port
from tests.harness.saga import until_answered
from tests.harness.served import GUARD_SECONDS, Served
from tests.harness.treasury import Faucet

NAMES = ("mint", "treasury", "notary")


def free_ports(names: tuple[str, ...] = NAMES) -> dict[str, int]:
    return {name: free_port() for name in names}


def urls_of(ports: dict[str, int]) -> dict[str, str]:
    return {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}


class Separate:
    """A `league serve NAME` child for each of ``names`` (the three of the story by default),
    each on its own database and port; each told the others' URLs by MINT_URL, TREASURY_URL,
    NOTARY_URL (and TABLES_URL), or (``settings=False``) by nothing but the league's
    manifest."""

    def __init__(
        self,
        home_env: dict[str, str],
        databases: dict[str, str],
        ports: dict[str, int] | None = None,
        *,
        settings: bool = True,
        names: tuple[str, ...] = NAMES,
    ) -> None:
        self.ports = ports or free_ports(names)
        self.urls = urls_of(self.ports)
        peers = {f"{name.upper()}_URL": url for name, url in self.urls.items()} if settings else {}
        self.envs = {name: {**home_env, **peers, "DATABASE_URL": databases[name]} for name in names}
        self.children: dict[str, Served] = {}

    def start(self, name: str) -> None:
        served = Served(self.envs[name], name, "--port", str(self.ports[name]))
        assert served.url == self.urls[name]
        self.children[name] = served

    def kill(self, name: str) -> int:
        child = self.children.pop(name)
        child.process.kill()  # SIGKILL: no shutdown, no last checkpoint
        return child.process.wait(timeout=GUARD_SECONDS)

    def stop(self) -> None:
        for child in self.children.values():
            if child.process.poll() is None:
                child.stop()


async def logs_written(database_url: str) -> set[str]:
    """The services whose log holds events in the database at ``database_url``."""
    connection = await asyncpg.connect(database_url)
    try:
        return {
            name
            for name in NAMES
            if await connection.fetchval(f"SELECT count(*) FROM {name}.events")  # noqa: S608
        }
    finally:
        await connection.close()


@dataclass
class Story:
    """What the story did, kept to be asked again."""

    manifest: LeagueManifest
    seller: SigningKey
    friend: SigningKey
    stamped: Chain
    claim: ClaimRequest
    claimed: ClaimAnswer
    buy: BuyRequest
    bought: BuyAnswer


async def story(urls: dict[str, str]) -> Story:
    """Stamp at the mint; claim and buy with change at the treasury (its saga calls the notary
    and the mint); a hop notarized at the notary."""
    async with LeagueClient(urls["mint"]) as mint:
        manifest = await mint.manifest()
    a, b, buyer = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    stamped = await stamp(urls["mint"], a, "Model-A")
    async with aiohttp.ClientSession() as session:
        faucet = Faucet(session, urls["treasury"], manifest)
        claim = faucet.request(buyer, 50, request_id="claim-separate-1")
        claimed = await faucet.post(claim.to_wire())
        treasury = PublicKey.from_text(manifest.treasury)
        payment = [
            endorse(Chain(certificate=note, endorsements=()), buyer, treasury, T0)
            for note in claimed.notes
        ]
        buy = buy_request(
            buyer, manifest, "Tally", payment, purchase_id="buy-separate-1", at=int(time.time())
        )
        bought = await until_answered(session, urls["treasury"], buy)
    assert (bought.outcome, bought.price, bought.paid) == ("delivered", 30, 50)
    async with LeagueClient(urls["notary"]) as notary:
        assert (await notary.notarize([endorse(stamped, a, b.public, T0)])).recorded == 1
    await published(urls["mint"], "mint", 2)  # the stamp and the treasury's order
    await published(urls["notary"], "notary", 3)  # the hop and the payment's two notes
    return Story(manifest, a, b, stamped, claim, claimed, buy, bought)
