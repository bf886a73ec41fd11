"""The league as separate OS processes on their own databases (docs/operations.md "Separate
processes"): `league serve mint`, `league serve treasury`, `league serve notary` (and `league
serve tables`, whose log the gateway serves too), each with its own DATABASE_URL and the others'
MINT_URL, TREASURY_URL, NOTARY_URL and TABLES_URL, talking only over HTTP. Stamp at the mint,
claim and buy at the treasury (its saga calling the notary and the mint), a hop notarized at the
notary, then `league audit` through the gateway (deploy/nginx.conf: `league audit` takes one URL
serving every service); any one of them SIGKILLed and restarted on its database loses nothing.
Skipped where nginx is not installed (the audit needs the one URL)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import aiohttp
import pytest

from apiclient.league import LeagueClient
from ledger.endorsements import endorse
from ledger.keys import SigningKey
from services.kernel.database import scratch_database
from tests.harness.audit import T0, audit, published, stamp
from tests.harness.deploy import NGINX, running_gateway
from tests.harness.saga import until_answered
from tests.harness.separate import NAMES, Separate, Story, logs_written, story
from tests.harness.served import init_league, league
from tests.harness.treasury import Faucet

pytestmark = pytest.mark.skipif(NGINX is None, reason="no nginx (apt-get install nginx-light)")
#: The processes served: the story's three and the tables service, which a new league has.
SERVED = (*NAMES, "tables")


@pytest.fixture
def separate(tmp_path: Path, server_url: str) -> Iterator[Separate]:
    with ExitStack() as stack:
        databases = {
            name: stack.enter_context(scratch_database(server_url, f"cz_{name}")) for name in SERVED
        }
        home_env = init_league(tmp_path / "league", databases["mint"])
        league_ = Separate(home_env, databases, names=SERVED)
        for name in SERVED:
            migrated = league(league_.envs[name], "migrate")
            assert migrated.returncode == 0, migrated.stderr
        stack.callback(league_.stop)
        for name in ("mint", "notary", "treasury", "tables"):
            league_.start(name)
        yield league_


async def asked_again(urls: dict[str, str], told: Story) -> None:
    """Every request of the story answers as before; the league goes on (a new stamp, a
    second hop of the first print)."""
    async with aiohttp.ClientSession() as session:
        faucet = Faucet(session, urls["treasury"], told.manifest)
        claimed = await faucet.post(told.claim.to_wire())
        assert claimed.replayed is True
        assert claimed.model_copy(update={"replayed": False}) == told.claimed
        bought = await until_answered(session, urls["treasury"], told.buy)
        assert bought.replayed is True
        assert bought.model_copy(update={"replayed": False}) == told.bought
    hop = endorse(told.stamped, told.seller, told.friend.public, T0)
    async with LeagueClient(urls["notary"]) as notary:
        assert (await notary.notarize([hop])).recorded == 0  # known: nothing new
        onward = endorse(hop, told.friend, SigningKey.generate().public, T0 + 1)
        assert (await notary.notarize([onward])).recorded == 1
    await stamp(urls["mint"], told.friend, "Faithful")
    await published(urls["mint"], "mint", 3)
    await published(urls["notary"], "notary", 4)


async def sizes(urls: dict[str, str]) -> dict[str, int]:
    """Each service's signed checkpoint size, as it serves it."""
    found = {}
    for name, url in urls.items():
        async with LeagueClient(url) as client:
            found[name] = (await client.signed_checkpoint(service=name)).size
    return found


# V.4, V.8; docs/operations.md "Separate processes"
@pytest.mark.parametrize("victim", NAMES)
def test_three_processes_on_three_databases(
    separate: Separate, tmp_path: Path, victim: str
) -> None:
    """Each service writes only its own database; the story runs across the three over HTTP;
    the audit through one gateway URL passes; ``victim`` SIGKILLed and restarted on its own
    database, every request answers as before, the league goes on, and the audit (holding
    the checkpoints of the first) passes again."""
    told = asyncio.run(story(separate.urls))
    for name in NAMES:  # each log in its own service's database, and only there
        assert asyncio.run(logs_written(separate.envs[name]["DATABASE_URL"])) == {name}
    before = asyncio.run(sizes(separate.urls))
    (tmp_path / "gw").mkdir()
    state = tmp_path / "audit"
    with running_gateway(dict(separate.ports), tmp_path / "gw") as gateway:
        first = audit(separate.envs["mint"], gateway, state)
        assert first.returncode == 0, first.stderr
        assert "mint: 2 events verified" in first.stdout
        assert "notary: 3 events verified" in first.stdout
        assert "treasury purchases: 1 delivered" in first.stdout
        for name in NAMES:  # each witnessed by the two others, across processes
            assert f"{name}: " in first.stdout
        assert "evidence: none kept by mint, notary, treasury" in first.stdout
        assert separate.kill(victim) == -9
        separate.start(victim)
        asyncio.run(asked_again(separate.urls, told))
        after = asyncio.run(sizes(separate.urls))
        assert all(after[name] >= before[name] for name in NAMES), (before, after)
        second = audit(separate.envs["mint"], gateway, state)
        assert second.returncode == 0, second.stderr
        assert "as pinned" in second.stdout
        assert "mint: 3 events verified" in second.stdout
        assert "notary: 4 events verified" in second.stdout
        assert "treasury purchases: 1 delivered" in second.stdout
